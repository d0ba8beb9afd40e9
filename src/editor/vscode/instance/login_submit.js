// Called with the password: types it into the login form and submits it.
(password) => {
  const i = document.querySelector('input[name=password]');
  i.value = password;
  i.form.submit();
  return true;
}
