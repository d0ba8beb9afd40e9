; Java: the tokens a user would complete, and the names that are not cases.

(identifier) @name
(type_identifier) @type
(field_access field: (identifier) @member)
(method_invocation name: (identifier) @call)
(method_reference "::" (identifier) @member)
(marker_annotation name: (identifier) @type)
(annotation name: (identifier) @type)

; Imports: every part of the path. The package clause names this file's package.
(import_declaration) @import.within
(package_declaration) @skip.within

; Definitions.
(class_declaration name: (identifier) @skip)
(interface_declaration name: (identifier) @skip)
(enum_declaration name: (identifier) @skip)
(record_declaration name: (identifier) @skip)
(annotation_type_declaration name: (identifier) @skip)
(annotation_type_element_declaration name: (identifier) @skip)
(method_declaration name: (identifier) @skip)
(constructor_declaration name: (identifier) @skip)
(formal_parameter name: (identifier) @skip)
(catch_formal_parameter name: (identifier) @skip)
(variable_declarator name: (identifier) @skip)
(enhanced_for_statement name: (identifier) @skip)
(resource name: (identifier) @skip)
(lambda_expression parameters: (identifier) @skip)
(inferred_parameters (identifier) @skip)
(type_parameter (type_identifier) @skip)
(enum_constant name: (identifier) @skip)
(record_pattern_component (identifier) @skip)
(type_pattern (identifier) @skip)
(element_value_pair key: (identifier) @skip)

; Labels.
(labeled_statement (identifier) @skip)
(break_statement (identifier) @skip)
(continue_statement (identifier) @skip)

; Never cases inside.
(string_literal) @skip.within
(ERROR) @skip.within

; `var` is a keyword where a type goes.
((type_identifier) @skip (#eq? @skip "var"))
