<start> ::= "a\qb"
