// What is over the document, read in one script: a modal dialog's message, the editor
// tabs (their labels, which is active), whether an editor has the focus, and the title
// of a panel that is shown and holds the focus; and every dialog shown so far
// (`dialog_watch.js`).
(() => {
  const d = document.querySelector('.monaco-dialog-box');
  const msg = d && [...d.querySelectorAll('.dialog-message-text, .dialog-message-detail')].map(e => (e.textContent || '').trim()).filter(Boolean).join(' ');
  const tabs = [...document.querySelectorAll('.tabs-container .tab')].map(t => ({ label: t.getAttribute('aria-label') || '', active: t.classList.contains('active') }));
  const p = document.querySelector('.part.panel');
  const inPanel = !!p && p.contains(document.activeElement) && p.offsetParent !== null;
  const title = inPanel ? (((p.querySelector('.composite-bar .action-item.checked') || p.querySelector('.title-label') || p).textContent || '').trim() || 'panel') : null;
  const a = document.querySelector('.tab.active');
  return { dialog: d ? (msg || 'a dialog') : null, tabs, active: a ? (a.getAttribute('aria-label') || '') : '', focused: !!document.querySelector('.editor-instance .monaco-editor.focused'), panel: title, seen: window.__typistDialogs || [] };
})()
