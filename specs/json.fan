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
#   - none on numbers: any number of digits, as in the RFC, so that documents such as
#     grammars-v4's numbers.json (1e1234567890) parse. Exponents beyond the range of a
#     double are valid JSON that some parsers refuse (serde_json does unless built with
#     `arbitrary_precision`; JSONTestSuite files them under implementation-defined);
#     generation writes up to --max-repetitions + 1 exponent digits;
#   - a string character is ASCII, non-ASCII or an escape with equal chance, and
#     non-ASCII characters come from the BMP or the supplementary planes alike.

<start>     ::= <element>
<element>   ::= <ws> <value> <ws>
# Containers and scalars are split so that random generation picks a container half of
# the time (rather than 2 in 7), which gives documents with structure instead of a bare
# `true` a third of the time; the language is the same.
<value>     ::= <container> | <scalar>
<container> ::= <object> | <array>
<scalar>    ::= <string> | <number> | "true" | "false" | "null"
<object>    ::= "{" <ws> "}" | "{" <member> ("," <member>)* "}"
<member>    ::= <ws> <string> <ws> ":" <element>
<array>     ::= "[" <ws> "]" | "[" <element> ("," <element>)* "]"
<string>    ::= "\"" <character>* "\""
<character> ::= <ascii_char> | <non_ascii_char> | "\\" <escape>
# unescaped = %x20-21 / %x23-5B / %x5D-10FFFF: never '"', '\' or a control character
# U+0000-001F (those must be escaped)
<ascii_char>     ::= r"[ !#-\[\]-~]"
<non_ascii_char> ::= r"[\u007F-\uD7FF\uE000-\uFFFF]" | r"[\U00010000-\U0010FFFF]"
<escape>    ::= "\"" | "\\" | "/" | "b" | "f" | "n" | "r" | "t" \
              | "u" <hex4> \
              | "u" r"[Dd][89ABab][0-9A-Fa-f]{2}" "\\u" r"[Dd][C-Fc-f][0-9A-Fa-f]{2}"
# four hex digits that are not a surrogate (D800-DFFF)
<hex4>      ::= r"[0-9A-Ca-cE-Fe-f][0-9A-Fa-f]{3}" | r"[Dd][0-7][0-9A-Fa-f]{2}"
<number>    ::= "-"? <int> <frac>? <exp>?
<int>       ::= "0" | <onenine> <digit>*
<frac>      ::= "." <digit>+
<exp>       ::= ("e" | "E") ("+" | "-")? <digit>+
<onenine>   ::= "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9"
<digit>     ::= "0" | <onenine>
# insignificant whitespace (space, tab, LF, CR), any amount; generated in one <ws> out
# of twenty (a whitespace rule: docs/spec-format.md). (Unambiguous on purpose: an
# input has one derivation tree, so measuring the k-path coverage of parsed inputs
# sees the same paths generation used.)
<ws>        ::= "" | r"[ \t\n\r]+"
