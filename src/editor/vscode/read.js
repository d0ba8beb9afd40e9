// What a VS Code page shows, for typist (evaluated in the page, by value): the fixture's
// status bar text, its client's state (`N STATE`) and its last answer (the item's
// aria-label: JSON `{seq, lines}`), its last next edit's status and answer (an item of
// their own), the cursor's line and column from the status bar ("Ln N, Col M"),
// and the ghost text at the cursor: `line` is the text of the view line that holds the
// ghost text (the line as shown), `further` the lines of its view zone below;
// `edit_lines` the line numbers the inline-edit gutter indicators show (an inline edit
// shown at that line; none when none is).
(() => {
  const out = { status: '', client: null, answer: null, next_status: '', next_answer: null, row: null, col: null, ghost: false, line: '', further: [], edit_lines: [] };
  for (const e of document.querySelectorAll('.statusbar-item')) {
    const t = (e.textContent || '').trim();
    if (t.startsWith('typist-client ')) out.client = t.slice(14);
    // The fixture's last request and answer (as accepting it would leave the lines, its
    // label); `next_`: its last next edit's, in an item of their own.
    for (const [name, st, an] of [['typist-inline ', 'status', 'answer'], ['typist-next ', 'next_status', 'next_answer']]) {
      if (!t.startsWith(name) || out[st]) continue;
      out[st] = t;
      for (const x of [e, ...e.querySelectorAll('[aria-label]')]) {
        const a = x.getAttribute('aria-label') || '';
        if (a.startsWith('typist-answer ')) { out[an] = a.slice(14); break; }
      }
    }
  }
  const sel = document.getElementById('status.editor.selection');
  const m = sel && /Ln (\d+), Col (\d+)/.exec(sel.textContent || '');
  if (m) { out.row = Number(m[1]); out.col = Number(m[2]); }
  const ed = document.querySelector('.editor-instance .monaco-editor.focused');
  if (!ed) return out;
  for (const g of ed.querySelectorAll('.inline-edits-view-gutter-indicator')) {
    const t = (g.textContent || '').trim();
    if (t) out.edit_lines.push(t);
  }
  // The cursor's line as shown (ghost text included), spaces as spaces: the view line
  // level with the gutter's number of the cursor's line.
  let curLine = null;
  if (out.row !== null) {
    for (const n of ed.querySelectorAll('.margin-view-overlays .line-numbers')) {
      if ((n.textContent || '').trim() === String(out.row)) {
        const top = n.parentElement && n.parentElement.style.top;
        for (const l of ed.querySelectorAll('.view-lines .view-line')) {
          if (l.style.top === top) { curLine = l; break; }
        }
        break;
      }
    }
  }
  // The cursor's line as typed (the ghost text left out), spaces as spaces.
  if (curLine) {
    const c = curLine.cloneNode(true);
    for (const g of c.querySelectorAll('[class*="ghost-text"]')) g.remove();
    out.cur = c.textContent.replace(/\u00a0/g, ' ');
  } else {
    out.cur = null;
  }
  const spans = ed.querySelectorAll('.view-lines .ghost-text-decoration');
  if (spans.length) {
    const line = spans[0].closest('.view-line');
    out.ghost = true;
    out.line = line ? line.textContent : '';
  }
  const zone = ed.querySelectorAll('.view-zones .suggest-preview-text .view-line');
  if (zone.length) {
    out.further = [...zone].map((l) => l.textContent);
    if (!out.ghost && curLine) out.line = curLine.textContent;
  }
  return out;
})()
