<start> ::= "a"{x}
