<start> ::= "a" | + "b"
