// The fixture's status and its last list (its status item's label after `typist-list `:
// JSON `{seq, incomplete, items}`, the server's items in its order), read together.
(() => {
  for (const e of document.querySelectorAll('.statusbar-item')) {
    const t = (e.textContent || '').trim();
    if (!t.startsWith('typist-inline ')) continue;
    for (const x of [e, ...e.querySelectorAll('[aria-label]')]) {
      const a = x.getAttribute('aria-label') || '';
      if (a.startsWith('typist-list ')) return { status: t, list: a.slice(12) };
    }
    return { status: t, list: null };
  }
  return { status: null, list: null };
})()
