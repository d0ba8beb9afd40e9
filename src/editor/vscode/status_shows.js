// Called with a text: the status bar's cursor position holds it.
(want) => {
  const e = document.getElementById('status.editor.selection');
  return !!e && e.textContent.includes(want);
}
