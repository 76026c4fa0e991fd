<start> ::= <> "x"
