
; JSX (JavaScript and TSX): tag names are markup, not completions of code.
(jsx_opening_element name: (_) @skip.within)
(jsx_closing_element name: (_) @skip.within)
(jsx_self_closing_element name: (_) @skip.within)
(jsx_opening_element name: (identifier) @skip)
(jsx_closing_element name: (identifier) @skip)
(jsx_self_closing_element name: (identifier) @skip)
