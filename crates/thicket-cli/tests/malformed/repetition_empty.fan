<start> ::= "a"{}
