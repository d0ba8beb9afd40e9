
; C++, besides what it shares with C: scopes, templates, namespaces, `using`.
(namespace_identifier) @name
(qualified_identifier name: (identifier) @member)
(qualified_identifier name: (qualified_identifier scope: (namespace_identifier) @member))
(call_expression function: (template_function name: (identifier) @call))
; Called through one, two or three scopes (`a::f()`, `a::B::f()`, `a::b::C::f()`).
(call_expression function: (qualified_identifier name: [
  (identifier) @call
  (template_function name: (identifier) @call)
  (qualified_identifier name: [
    (identifier) @call
    (template_function name: (identifier) @call)
    (qualified_identifier name: [
      (identifier) @call
      (template_function name: (identifier) @call)])])]))
(call_expression function: (field_expression field: (template_method name: (field_identifier) @call)))
(field_expression field: (template_method name: (field_identifier) @member))
(using_declaration) @import.within

; Definitions.
(class_specifier name: (type_identifier) @skip body: (_))
(namespace_definition name: (namespace_identifier) @skip)
(namespace_alias_definition name: (namespace_identifier) @skip)
(alias_declaration name: (type_identifier) @skip)
(function_declarator declarator: (qualified_identifier name: (identifier) @skip))
(reference_declarator (identifier) @skip)
(for_range_loop declarator: (identifier) @skip)
(optional_parameter_declaration declarator: (identifier) @skip)
(type_parameter_declaration (type_identifier) @skip)
(optional_type_parameter_declaration name: (type_identifier) @skip)
(variadic_type_parameter_declaration (type_identifier) @skip)
(concept_definition name: (identifier) @skip)
(destructor_name) @skip.within
(operator_name) @skip.within
(raw_string_literal) @skip.within
