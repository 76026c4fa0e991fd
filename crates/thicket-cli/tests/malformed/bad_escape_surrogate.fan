<start> ::= "\uD800"
