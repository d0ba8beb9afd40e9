// What Quick Open shows, for an error: its input's text, then its entries' labels.
JSON.stringify([document.querySelector('.quick-input-widget input')?.value, ...[...document.querySelectorAll('.quick-input-list .monaco-list-row')].map(r => r.getAttribute('aria-label'))])
