// code-server's login page has loaded its form.
document.querySelector('input[name=password]') !== null
