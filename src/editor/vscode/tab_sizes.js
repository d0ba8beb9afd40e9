// The quick pick of Indent Using Tabs lists the tab sizes 1 to 8, focused.
(() => {
  const rows = [...document.querySelectorAll('.quick-input-list .monaco-list-row')];
  const labels = rows.map(r => (r.getAttribute('aria-label') || '').trim().split(/[ ,]/)[0]);
  return !!document.querySelector('.quick-input-widget input:focus')
    && labels.length === 8 && labels.join() === '1,2,3,4,5,6,7,8';
})()
