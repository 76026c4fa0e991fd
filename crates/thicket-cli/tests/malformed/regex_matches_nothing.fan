<start> ::= "a" | r"[^\s\S]"
