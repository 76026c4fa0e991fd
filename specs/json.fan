# JSON text, RFC 8259 (The JavaScript Object Notation (JSON) Data Interchange Format):
#   §2 JSON-text = ws value ws and the ws set, §3 values and literal names,
#   §4 objects and members, §5 arrays, §6 numbers, §7 strings and escapes.
# Laid out like the json.org McKeeman grammar and the ANTLR/Tribble JSON grammar
# (about as many productions), which are equivalent to the RFC's ABNF.
# Deliberate restrictions, so that every output is accepted by real parsers
# (serde_json):
#   - \uXXXX escapes never name a lone surrogate: U+D800-DFFF only appear as a
#     high+low surrogate pair (RFC 8259 §7 allows lone ones, but they are not Unicode
#     text, and serde_json rejects them);
#   - the integer part has at most 18 digits and the exponent at most 2, so every
#     number is finite as an IEEE double (§6 lets implementations limit the range);
#   - unescaped characters are mostly ASCII; others come from the BMP and the
#     supplementary planes in separate alternatives.

<start>     ::= <element>
<element>   ::= <ws> <value> <ws>
<value>     ::= <object> | <array> | <string> | <number> | "true" | "false" | "null"
<object>    ::= "{" <ws> "}" | "{" <member> ("," <member>)* "}"
<member>    ::= <ws> <string> <ws> ":" <element>
<array>     ::= "[" <ws> "]" | "[" <element> ("," <element>)* "]"
<string>    ::= "\"" <character>* "\""
<character> ::= <unescaped> | "\\" <escape>
# %x20-21 / %x23-5B / %x5D-10FFFF: never '"', '\' or a control character U+0000-001F.
<unescaped> ::= r"[ !#-\[\]-~]"
              | r"[\x{7F}-\x{D7FF}\x{E000}-\x{FFFF}]"
              | r"[\x{10000}-\x{10FFFF}]"
<escape>    ::= "\"" | "\\" | "/" | "b" | "f" | "n" | "r" | "t"
              | "u" <hex4>
              | "u" r"[Dd][89ABab][0-9A-Fa-f]{2}" "\\u" r"[Dd][C-Fc-f][0-9A-Fa-f]{2}"
# four hex digits that are not a surrogate (D800-DFFF)
<hex4>      ::= r"[0-9A-Ca-cE-Fe-f][0-9A-Fa-f]{3}" | r"[Dd][0-7][0-9A-Fa-f]{2}"
<number>    ::= "-"? <int> <frac>? <exp>?
<int>       ::= "0" | <onenine> <digit>{0,17}
<frac>      ::= "." <digit>+
<exp>       ::= ("e" | "E") ("+" | "-")? <digit>{1,2}
<onenine>   ::= "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9"
<digit>     ::= "0" | <onenine>
# insignificant whitespace: space, tab, LF, CR
<ws>        ::= "" | r"[ \t\n\r]{1,3}"
