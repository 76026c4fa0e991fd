<start> ::= <digit>+
<letter> ::= "a" | "b"
