<start> ::= "a" "b")
