<start> ::= "[" <values> "]"
<values> ::= <vaule> | <vaule> "," <values>
<value> ::= "1" | "2"
