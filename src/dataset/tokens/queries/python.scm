; Python: the tokens a user would complete, and the names that are not cases.

(identifier) @name
(attribute attribute: (identifier) @member)
(call function: (identifier) @call)
(call function: (attribute attribute: (identifier) @call))

; Annotations and base classes: a type is expected.
(type (identifier) @type)
(generic_type (identifier) @type)
(member_type (identifier) @type)
; `A | B` and `A | B | C` in an annotation.
(type (binary_operator [left: (identifier) @type right: (identifier) @type]))
(type (binary_operator left: (binary_operator [left: (identifier) @type right: (identifier) @type])))
(type (attribute attribute: (identifier) @type))
(class_definition superclasses: (argument_list (identifier) @type))
(class_definition superclasses: (argument_list (attribute attribute: (identifier) @type)))

; Imports: every module and imported name; the new name of an alias is a definition.
(import_statement) @import.within
(import_from_statement) @import.within
(future_import_statement) @import.within
(aliased_import alias: (identifier) @skip)

; Definitions.
(function_definition name: (identifier) @skip)
(class_definition name: (identifier) @skip)
(parameters (identifier) @skip)
(lambda_parameters (identifier) @skip)
(default_parameter name: (identifier) @skip)
(typed_parameter (identifier) @skip)
(typed_default_parameter name: (identifier) @skip)
(list_splat_pattern (identifier) @skip)
(dictionary_splat_pattern (identifier) @skip)
(function_definition type_parameters: (type_parameter (type (identifier) @skip)))
(class_definition type_parameters: (type_parameter (type (identifier) @skip)))
(keyword_argument name: (identifier) @skip)

; Assignment targets (of an attribute target, the attribute assigned).
(assignment left: (identifier) @skip)
(assignment left: (attribute attribute: (identifier) @skip))
(pattern_list (identifier) @skip)
(tuple_pattern (identifier) @skip)
(list_pattern (identifier) @skip)
(for_statement left: (identifier) @skip)
(for_in_clause left: (identifier) @skip)
(as_pattern_target (identifier) @skip)

(named_expression name: (identifier) @skip)

; Never cases inside.
(string) @skip.within
(ERROR) @skip.within
