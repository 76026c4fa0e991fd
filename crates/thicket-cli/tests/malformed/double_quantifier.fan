<start> ::= "a"*+
