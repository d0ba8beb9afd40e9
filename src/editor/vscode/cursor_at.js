// Called with a 1-based line and a visible column: the status bar shows the cursor
// there in a focused editor.
(line, column) => {
  const e = document.getElementById('status.editor.selection');
  const m = e && /Ln (\d+), Col (\d+)/.exec(e.textContent || '');
  return !!m && Number(m[1]) === line && Number(m[2]) === column && !!document.querySelector('.editor-instance .monaco-editor.focused');
}
