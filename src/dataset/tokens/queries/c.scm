; C (and the part C++ shares): the tokens a user would complete, and the names that
; are not cases. Includes are strings, so C has no import tokens.

(identifier) @name
(type_identifier) @type
((primitive_type) @type (#match? @type "_t$"))
(field_expression field: (field_identifier) @member)
(field_designator (field_identifier) @member)
(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call))

; Definitions: declarators, tags with a body, typedefs, enumerators, macros.
(function_declarator declarator: (identifier) @skip)
(init_declarator declarator: (identifier) @skip)
(declaration declarator: (identifier) @skip)
(pointer_declarator declarator: (identifier) @skip)
(array_declarator declarator: (identifier) @skip)
(parenthesized_declarator (identifier) @skip)
(attributed_declarator (identifier) @skip)
(parameter_declaration declarator: (identifier) @skip)
(type_definition declarator: (type_identifier) @skip)
(pointer_declarator declarator: (type_identifier) @skip)
(function_declarator declarator: (type_identifier) @skip)
(array_declarator declarator: (type_identifier) @skip)
(struct_specifier name: (type_identifier) @skip body: (_))
(union_specifier name: (type_identifier) @skip body: (_))
(enum_specifier name: (type_identifier) @skip body: (_))
(enumerator name: (identifier) @skip)
(preproc_def name: (identifier) @skip)
(preproc_function_def name: (identifier) @skip)
(preproc_params (identifier) @skip)

; Never cases inside.
(string_literal) @skip.within
(char_literal) @skip.within
(preproc_include) @skip.within
(ERROR) @skip.within
