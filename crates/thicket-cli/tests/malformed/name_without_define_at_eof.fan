<start> ::= <a>
<a>