// The editor's layout when a line does not show (for the error).
(() => {
  const ed = document.querySelector('.editor-instance .monaco-editor.focused') || document.querySelector('.editor-instance .monaco-editor');
  if (!ed) return 'no editor';
  const sc = ed.querySelector('.monaco-scrollable-element');
  return JSON.stringify({vis: document.visibilityState, focus: document.hasFocus(), win: [innerWidth, innerHeight], ed: [ed.clientWidth, ed.clientHeight], scroll: sc && [sc.scrollTop, sc.scrollHeight], lines: [...ed.querySelectorAll('.margin-view-overlays .line-numbers')].map(n => n.textContent).filter(Boolean).slice(-3)});
})()
