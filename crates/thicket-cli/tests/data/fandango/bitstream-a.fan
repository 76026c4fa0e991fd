<start> ::= <bit>+
<bit> ::= 0 1 1 0 0 0 0 1  # Encodes b'a'
