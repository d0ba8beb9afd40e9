// The quick-input box (Quick Open, Go to Line, the command palette) is open and
// focused.
!!document.querySelector('.quick-input-widget input:focus')
