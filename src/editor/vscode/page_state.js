// The page's title, address, the last of the workbench's startup marks
// (`code/didStartRenderer`, `code/willLoadWorkbenchMain`, ...), and whether its main
// bundle has run (`code/didLoadWorkbenchMain`).
[document.title, location.href, (performance.getEntriesByType('mark').pop() || {}).name || '', performance.getEntriesByName('code/didLoadWorkbenchMain').length > 0]
