// Called with a text: the status bar's indentation item holds it ("Tab Size: 4").
(want) => {
  const e = document.getElementById('status.editor.indentation');
  return !!e && e.textContent.includes(want);
}
