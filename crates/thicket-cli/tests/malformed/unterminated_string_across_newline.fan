<start> ::= "first line
second line"
