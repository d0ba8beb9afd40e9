// VS Code's suggest widget as the page shows it, for typist (evaluated in the page, by
// value): whether it is shown, its message ("Loading...", "No suggestions."), how many
// entries its list holds (the rows' aria-setsize), whether it is frozen (asked by hand
// and nothing matches what was typed since: VS Code keeps the earlier rows, dimmed), and
// the rows drawn now (the list is virtual: only the rows in view exist), each with its
// index and its label as drawn.
(() => {
  const out = { visible: false, frozen: false, message: '', size: 0, rows: [], focused: null };
  const shown = (e) => !!e && getComputedStyle(e).display !== 'none' && getComputedStyle(e).visibility !== 'hidden';
  const all = [...document.querySelectorAll('.suggest-widget')];
  const w = all.find((x) => x.classList.contains('visible') && shown(x));
  if (!w) return out;
  out.visible = true;
  out.frozen = w.classList.contains('frozen');
  const m = w.querySelector('.message');
  if (shown(m)) out.message = (m.textContent || '').trim();
  for (const r of w.querySelectorAll('.monaco-list-row')) {
    const name = r.querySelector('.label-name');
    const i = Number(r.getAttribute('data-index'));
    out.rows.push({ i, label: name ? name.textContent : null, aria: r.getAttribute('aria-label') || '' });
    const size = Number(r.getAttribute('aria-setsize'));
    if (size > 0) out.size = size;
    if (r.classList.contains('focused')) out.focused = i;
  }
  return out;
})()
