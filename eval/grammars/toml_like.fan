<start> ::= <ws> (<line> <nl>)*
<line> ::= <ws> (<pair> | <table> | <comment>) <ws> <comment>?
<table> ::= "[" <ws> <key> <ws> "]"
<pair> ::= <key> <ws> "=" <ws> <value>
<key> ::= <letter>+
<letter> ::= "a" | "b" | "c" | "x" | "y"
<value> ::= <int> | <string> | "true" | "false" | <array>
<array> ::= "[" <ws> (<value> <ws> ("," <ws> <value> <ws>)*)? "]"
<int> ::= <digit>+
<digit> ::= "0" | "1" | "2" | "7"
<string> ::= "\"" <letter>* "\""
<comment> ::= "#" <letter>*
<ws> ::= (" " | "\t")*
<nl> ::= "\n" <blank>*
<blank> ::= <ws> "\n"
