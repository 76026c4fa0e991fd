<start> ::= "a" @ "b"
