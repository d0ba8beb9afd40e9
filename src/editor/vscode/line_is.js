// Called with `read.js`'s reading, a 1-based line number and a line's text (tabs
// expanded): the page shows the cursor on that line, holding that text.
(r, row, cur) => r.row === row && r.cur === cur
