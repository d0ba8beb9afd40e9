// No modal dialog is shown.
!document.querySelector('.monaco-dialog-box')
