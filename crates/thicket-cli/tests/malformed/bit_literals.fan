<start> ::= <bit>+
<bit> ::= 0 | 1
