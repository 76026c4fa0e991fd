<start> ::= ("a" | "b"
<c> ::= "c"
