<start> ::= <a>
<a> ::= <a> "x"
