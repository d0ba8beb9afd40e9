// What the page shows during `typist login`: the input box an extension opened
// (showInputBox: its prompt, title, placeholder, whether it is a password box), the
// notifications' texts, and a modal dialog's message and detail (VS Code asks there
// before opening an external website).
(() => {
  const text = (e) => (e ? (e.textContent || '').replace(/\s+/g, ' ').trim() : '');
  const shown = (e) => e && getComputedStyle(e).display !== 'none' && e.offsetParent !== null;
  let box = null;
  const w = document.querySelector('.quick-input-widget');
  const i = w && w.querySelector('.quick-input-box input');
  if (shown(w) && i && document.activeElement === i && !i.value.startsWith('>')) {
    box = {
      prompt: text(w.querySelector('.quick-input-message')),
      title: text(w.querySelector('.quick-input-title')),
      placeholder: i.placeholder || '',
      password: i.type === 'password',
    };
  }
  const notes = [...document.querySelectorAll('.notifications-toasts .notification-list-item-message')].map(text).filter((t) => t);
  const d = document.querySelector('.monaco-dialog-box');
  const dialog = d ? [text(d.querySelector('.dialog-message-text')), text(d.querySelector('.dialog-message-detail'))].filter((t) => t).join(': ') : null;
  return { box, notes, dialog };
})()
