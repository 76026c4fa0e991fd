<start> ::= <n>
<n> ::= "1" | "22"
minimizing len(<n>)
