// Called with a file's name: the active tab names it and an editor has the focus.
(name) => {
  const t = document.querySelector('.tab.active');
  return !!t && (t.getAttribute('aria-label')||'').includes(name) && !!document.querySelector('.editor-instance .monaco-editor.focused');
}
