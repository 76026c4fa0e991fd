# json-c 0.16's language: specs/json.fan (RFC 8259 JSON) plus the extensions json-c's
# tokener accepts outside strict mode (json_tokener.c): C and C++ comments wherever
# whitespace may stand, and NaN and [-]Infinity as numbers, case-insensitively. Written
# for docs/fuzz-eval.md's equal-time comparison with afl-fuzz on json-c, where the edges
# afl-fuzz reaches and thicket fuzz with specs/json.fan does not are these extensions.
# The rest of the file is specs/json.fan's (see its comments there). Kept as measured
# there, with one gap: a <ws> is empty, whitespace, or a comment followed by a <ws>, so
# whitespace before a comment (`1 // x`) is outside this grammar (json-c reads it).

<start>     ::= <element>
<element>   ::= <ws> <value> <ws>
<value>     ::= <container> | <scalar>
<container> ::= <object> | <array>
<scalar>    ::= <string> | <number> | "true" | "false" | "null" | <nonfinite>
<nonfinite> ::= r"[Nn][Aa][Nn]" | "-"? r"[Ii][Nn][Ff][Ii][Nn][Ii][Tt][Yy]"
<object>    ::= "{" <ws> "}" | "{" <member> ("," <member>)* "}"
<member>    ::= <ws> <string> <ws> ":" <element>
<array>     ::= "[" <ws> "]" | "[" <element> ("," <element>)* "]"
<string>    ::= "\"" <character>* "\""
<character> ::= <ascii_char> | <non_ascii_char> | "\\" <escape>
<ascii_char>     ::= r"[ !#-\[\]-~]"
<non_ascii_char> ::= r"[\u007F-\uD7FF\uE000-\uFFFF]" | r"[\U00010000-\U0010FFFF]"
<escape>    ::= "\"" | "\\" | "/" | "b" | "f" | "n" | "r" | "t" \
              | "u" <hex4> \
              | "u" r"[Dd][89ABab][0-9A-Fa-f]{2}" "\\u" r"[Dd][C-Fc-f][0-9A-Fa-f]{2}"
<hex4>      ::= r"[0-9A-Ca-cE-Fe-f][0-9A-Fa-f]{3}" | r"[Dd][0-7][0-9A-Fa-f]{2}"
<number>    ::= "-"? <int> <frac>? <exp>?
<int>       ::= "0" | <onenine> <digit>*
<frac>      ::= "." <digit>+
<exp>       ::= ("e" | "E") ("+" | "-")? <digit>+
<onenine>   ::= "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9"
<digit>     ::= "0" | <onenine>
<ws>        ::= "" | r"[ \t\n\r]+" | <comment> <ws>
# a comment body may hold "*/", which ends it early: json-c then reads the rest as JSON
<comment>   ::= "/*" r"[ -~\n]*" "*/" | "//" r"[ -~]*" "\n"
