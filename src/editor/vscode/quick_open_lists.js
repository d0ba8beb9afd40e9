// Called with a file's name: Quick Open lists an entry naming it.
(name) => [...document.querySelectorAll('.quick-input-list .monaco-list-row')].some(r => (r.getAttribute('aria-label')||'').includes(name))
