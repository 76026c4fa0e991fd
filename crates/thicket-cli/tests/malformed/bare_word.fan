<start> ::= hello "world"
