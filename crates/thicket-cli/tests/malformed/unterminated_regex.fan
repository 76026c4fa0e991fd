<start> ::= r"[a-z]+
