<start> ::= r"[a-"
