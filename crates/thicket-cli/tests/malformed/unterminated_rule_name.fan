<start> ::= <value
<value> ::= "1"
