include("other.fan")
<start> ::= "x"
