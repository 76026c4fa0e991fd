<start> ::= 'abc
<b> ::= "x"
