// The login page has gone and the next page is parsed.
location.pathname !== '/login' && document.readyState !== 'loading'
