// The workbench's startup marks, in ms from the page's start.
Object.fromEntries(performance.getEntriesByType('mark').map(m => [m.name.replace('code/', ''), Math.round(m.startTime)]))
