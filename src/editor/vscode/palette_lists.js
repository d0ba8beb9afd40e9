// Called with a command's title: the palette lists a command whose title starts with it.
(title) => [...document.querySelectorAll('.quick-input-list .monaco-list-row')].some(r => (r.getAttribute('aria-label')||'').startsWith(title))
