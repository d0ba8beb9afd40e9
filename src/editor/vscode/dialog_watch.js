// Run in the page before the workbench loads: names every modal dialog the moment it is
// shown (`window.__typistDialogs`, its message), whatever closes it later (typist's
// dismissal, or an Escape meant for a ghost text that came first), so the manifest
// names every dialog an extension raised.
(() => {
  if (window.__typistDialogs) return;
  const seen = (window.__typistDialogs = []);
  const named = new WeakSet();
  const look = () => {
    for (const d of document.querySelectorAll('.monaco-dialog-box')) {
      if (named.has(d)) continue;
      const msg = [...d.querySelectorAll('.dialog-message-text, .dialog-message-detail')]
        .map(e => (e.textContent || '').trim())
        .filter(Boolean)
        .join(' ');
      if (!msg) continue; // its text not in yet: named at the next change
      named.add(d);
      seen.push(msg);
    }
  };
  new MutationObserver(look).observe(document, { childList: true, subtree: true });
})();
