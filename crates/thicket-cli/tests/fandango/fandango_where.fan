<start> ::= <n>
<n> ::= "1" | "2"
where int(<n>) > 1
