from random import choice
<start> ::= "x"
