<start> ::= "a"{3,1}
