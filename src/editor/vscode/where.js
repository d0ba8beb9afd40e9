// Where the cursor is, for an error: the status bar's position, the focused element,
// the editor's line count (its last line number) and what is over the document.
(() => {
  const e = document.getElementById('status.editor.selection');
  const a = document.activeElement;
  const ed = document.querySelector('.editor-instance .monaco-editor');
  const nums = ed ? [...ed.querySelectorAll('.margin-view-overlays .line-numbers')].map(n => Number(n.textContent)).filter(n => n > 0) : [];
  return {
    status: e ? e.textContent : null,
    focus: a ? a.tagName + '.' + (a.className || '') : null,
    last_line_drawn: nums.length ? Math.max(...nums) : null,
    dialog: !!document.querySelector('.monaco-dialog-box'),
    quick_input: !!document.querySelector('.quick-input-widget input:focus'),
    tab: (document.querySelector('.tab.active') || {}).ariaLabel || null,
  };
})()
