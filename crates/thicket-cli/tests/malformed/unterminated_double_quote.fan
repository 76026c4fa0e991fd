<start> ::= <greeting>
<greeting> ::= "hello
