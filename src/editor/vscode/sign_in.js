// What the page shows that asks the user to sign in: status bar items (their text and
// label), notifications, and the Accounts menu's badge (an extension that asked VS Code's
// authentication for a session); typist's own fixture's status left out.
(() => {
  const asks = /\b(sign[ -]?in|log[ -]?in|sign[ -]?up)\b|\bnot (signed|logged) in\b|\bnot authenticated\b|\bunauthori[sz]ed\b|\b(no|missing|invalid|enter|set)( an| your)? api key\b/i;
  const done = /\b(success|signed in as|logged in as|authenticated as)/i;
  const says = (t) => asks.test(t) && !done.test(t);
  const out = [];
  for (const e of document.querySelectorAll('.statusbar-item')) {
    const t = (e.textContent || '').trim();
    if (t.startsWith('typist-inline')) continue;
    const a = [e, ...e.querySelectorAll('[aria-label]')].map((x) => x.getAttribute('aria-label') || '').join(' ');
    if (says(t) || says(a)) out.push('status bar: ' + (t || a).replace(/\s+/g, ' '));
  }
  for (const e of document.querySelectorAll('.notifications-toasts .notification-list-item-message')) {
    const t = (e.textContent || '').trim();
    if (says(t)) out.push('notification: ' + t.replace(/\s+/g, ' '));
  }
  for (const e of document.querySelectorAll('.activitybar .action-item')) {
    const l = (e.querySelector('[aria-label]') || e).getAttribute('aria-label') || '';
    const b = e.querySelector('.badge .badge-content');
    if (/^Accounts/i.test(l) && b && (b.textContent || '').trim()) out.push('accounts menu: ' + l.replace(/\s+/g, ' '));
  }
  return [...new Set(out)];
})()
