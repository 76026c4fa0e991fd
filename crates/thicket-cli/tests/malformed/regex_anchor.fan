<start> ::= r"^a"
