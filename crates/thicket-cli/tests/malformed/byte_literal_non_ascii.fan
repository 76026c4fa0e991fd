<start> ::= b"café"
