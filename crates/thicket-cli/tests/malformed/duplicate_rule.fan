<start> ::= <digit>
<digit> ::= "0" | "1"
<digit> ::= "2"
