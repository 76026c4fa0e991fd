<start> ::= "café"
