; JavaScript: the tokens a user would complete, and the names that are not cases.

(identifier) @name
(shorthand_property_identifier) @name
(member_expression property: (property_identifier) @member)
(call_expression function: (identifier) @call)
(call_expression function: (member_expression property: (property_identifier) @call))
(new_expression constructor: (identifier) @type)
(new_expression constructor: (member_expression property: (property_identifier) @type))
(class_heritage (identifier) @type)

; Imports: the imported names; a default or namespace import and an alias name a new
; binding. The module is a string.
(import_specifier name: (identifier) @import)
(import_specifier alias: (identifier) @skip)
(import_clause (identifier) @skip)
(namespace_import (identifier) @skip)

; Definitions.
(function_declaration name: (identifier) @skip)
(function_expression name: (identifier) @skip)
(generator_function_declaration name: (identifier) @skip)
(generator_function name: (identifier) @skip)
(class_declaration name: (identifier) @skip)
(class name: (identifier) @skip)
(variable_declarator name: (identifier) @skip)
(formal_parameters (identifier) @skip)
(arrow_function parameter: (identifier) @skip)
(assignment_pattern left: (identifier) @skip)
(object_assignment_pattern left: (shorthand_property_identifier_pattern) @skip)
(pair_pattern value: (identifier) @skip)
(array_pattern (identifier) @skip)
(rest_pattern (identifier) @skip)
(catch_clause parameter: (identifier) @skip)
(for_in_statement left: (identifier) @skip)
(export_specifier alias: (identifier) @skip)

; The property an assignment sets (`this.x = …` declares it).
(assignment_expression left: (member_expression property: (property_identifier) @skip))

; Never cases inside.
(string) @skip.within
(template_string) @skip.within
(regex) @skip.within
(ERROR) @skip.within
