<start> ::= * "x"
