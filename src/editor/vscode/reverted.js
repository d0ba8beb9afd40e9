// The active tab is not dirty (its editor holds the disk copy) and an editor has the
// focus.
(() => {
  const t = document.querySelector('.tab.active');
  return !!t && !t.classList.contains('dirty') && !!document.querySelector('.editor-instance .monaco-editor.focused');
})()
