<begin> ::= <digit>+
<digit> ::= "0" | "1"
