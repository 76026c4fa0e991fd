<start> ::= (<bit>{7} 1) | (<bit>{6} 1 <bit>)
<bit> ::= 0 | 1