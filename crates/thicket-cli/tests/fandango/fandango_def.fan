def pick():
    return "1"

<start> ::= "x"
