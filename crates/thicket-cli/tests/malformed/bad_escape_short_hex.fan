<start> ::= "\x4"
