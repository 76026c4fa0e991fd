<start> ::= b"\x00\x01
