; Rust: the tokens a user would complete, and the names that are not cases. Inside a
; macro's token tree tree-sitter does not know the code's shape: not read.

(identifier) @name
(type_identifier) @type
(field_expression field: (field_identifier) @member)
(scoped_identifier name: (identifier) @member)
(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call))
(call_expression function: (scoped_identifier name: (identifier) @call))
(call_expression function: (generic_function function: (identifier) @call))
(call_expression function: (generic_function function: (field_expression field: (field_identifier) @call)))
(call_expression function: (generic_function function: (scoped_identifier name: (identifier) @call)))
(macro_invocation macro: (identifier) @call)

; Imports: every part of a path; an alias names a new binding.
(use_declaration) @import.within
(use_as_clause alias: (identifier) @skip)
(extern_crate_declaration) @import.within
(extern_crate_declaration alias: (identifier) @skip)

; Definitions.
(function_item name: (identifier) @skip)
(function_signature_item name: (identifier) @skip)
(struct_item name: (type_identifier) @skip)
(enum_item name: (type_identifier) @skip)
(union_item name: (type_identifier) @skip)
(type_item name: (type_identifier) @skip)
(trait_item name: (type_identifier) @skip)
(associated_type name: (type_identifier) @skip)
(type_parameter name: (type_identifier) @skip)
(const_parameter name: (identifier) @skip)
(const_item name: (identifier) @skip)
(static_item name: (identifier) @skip)
(mod_item name: (identifier) @skip)
(enum_variant name: (identifier) @skip)
(macro_definition name: (identifier) @skip)

; Bindings in patterns.
(parameter pattern: (identifier) @skip)
(let_declaration pattern: (identifier) @skip)
(let_condition pattern: (identifier) @skip)
(for_expression pattern: (identifier) @skip)
(closure_parameters (identifier) @skip)
(match_pattern (identifier) @skip)
(tuple_pattern (identifier) @skip)
(tuple_struct_pattern type: (_) (identifier) @skip)
(field_pattern pattern: (identifier) @skip)
(ref_pattern (identifier) @skip)
(mut_pattern (identifier) @skip)
(captured_pattern (identifier) @skip)
(or_pattern (identifier) @skip)
(slice_pattern (identifier) @skip)

; Never cases inside.
(token_tree) @skip.within
(attribute_item) @skip.within
(inner_attribute_item) @skip.within
(lifetime) @skip.within
(label) @skip.within
(string_literal) @skip.within
(raw_string_literal) @skip.within
(ERROR) @skip.within

; `Self` is a keyword where a type goes.
((type_identifier) @skip (#eq? @skip "Self"))
