// Called with a file's name: Quick Open's first entry (the one Enter opens) names it.
// While the typed path is still being matched, the recently opened files are listed
// first: an entry naming the file further down is not enough.
(name) => {
  const first = document.querySelector('.quick-input-list .monaco-list-row');
  return !!first && (first.getAttribute('aria-label')||'').includes(name);
}
