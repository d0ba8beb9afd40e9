// Called with editor tabs' labels: clicks each one's close button.
(want) => {
  for (const t of document.querySelectorAll('.tabs-container .tab')) {
    if (want.includes(t.getAttribute('aria-label') || '')) {
      const c = t.querySelector('.tab-actions .action-label');
      if (c) c.click();
    }
  }
  return true;
}
