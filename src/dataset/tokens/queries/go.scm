; Go: the tokens a user would complete, and the names that are not cases. Imports are
; strings (a package's new name is a definition), so Go has no import tokens.

(identifier) @name
(type_identifier) @type
(selector_expression field: (field_identifier) @member)
(call_expression function: (identifier) @call)
(call_expression function: (selector_expression field: (field_identifier) @call))
(qualified_type package: (package_identifier) @name)

; Definitions.
(function_declaration name: (identifier) @skip)
(method_declaration name: (field_identifier) @skip)
(parameter_declaration name: (identifier) @skip)
(variadic_parameter_declaration name: (identifier) @skip)
(type_parameter_declaration name: (identifier) @skip)
(short_var_declaration left: (expression_list (identifier) @skip))
(range_clause left: (expression_list (identifier) @skip))
(receive_statement left: (expression_list (identifier) @skip))
(type_switch_statement alias: (expression_list (identifier) @skip))
(var_spec name: (identifier) @skip)
(const_spec name: (identifier) @skip)
(type_spec name: (type_identifier) @skip)
(type_alias name: (type_identifier) @skip)

; Never cases inside.
(interpreted_string_literal) @skip.within
(ERROR) @skip.within
