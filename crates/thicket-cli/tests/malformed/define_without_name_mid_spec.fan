<start> ::= "a"
    ::= "b"
