<start> ::= "\u{}"
