# TOML documents, after the TOML v1.0.0 specification (toml.io/en/v1.0.0) and its ABNF
# (toml.abnf): comments, key/value pairs with bare, quoted and dotted keys, [tables] and
# [[arrays of tables]], the four string forms (basic, multi-line basic, literal,
# multi-line literal) with escapes and line-ending backslashes, integers (decimal with
# underscores, hex, octal, binary), floats (fraction, exponent, inf, nan), booleans,
# offset and local date-times, local dates and times, arrays and inline tables.
# Deliberate restrictions: keys are drawn from a few names, so that documents sometimes
# define a key twice or reopen a table (invalid TOML, which a parser must refuse: its
# error paths are code to reach too); dates are well formed but not checked against the
# calendar (a 31st of February is a parser's to refuse); non-ASCII text comes from a
# few code points.

<start>        ::= <expression> (<newline> <expression>)*
<expression>   ::= <ws> <comment>? \
                 | <ws> <keyval> <ws> <comment>? \
                 | <ws> <table> <ws> <comment>?
<ws>           ::= "" | r"[ \t]{1,2}"
<newline>      ::= "\n" | "\r\n"
<comment>      ::= "#" r"[ -~\t]{0,6}"

# Key/value pairs and keys
<keyval>       ::= <key> <ws> "=" <ws> <val>
<key>          ::= <simple_key> | <dotted_key>
<simple_key>   ::= <bare_key> | <quoted_key>
<bare_key>     ::= "a" | "b" | "key" | "x-1" | "_" | "1234" | "true" | "inf" | r"[A-Za-z0-9_-]{1,4}"
<quoted_key>   ::= <basic_string> | <literal_string>
<dotted_key>   ::= <simple_key> (<ws> "." <ws> <simple_key>)+

# Values
<val>          ::= <string> | <boolean> | <array> | <inline_table> | <date_time> | <float> | <integer>
<boolean>      ::= "true" | "false"

# Strings
<string>       ::= <ml_basic_string> | <basic_string> | <ml_literal_string> | <literal_string>
<basic_string> ::= "\"" <basic_char>* "\""
<basic_char>   ::= <basic_unescaped> | <escaped>
<basic_unescaped> ::= r"[ !#-\[\]-~]" | "é" | "€" | "😀"
<escaped>      ::= "\\" ("\"" | "\\" | "b" | "f" | "n" | "r" | "t" \
                       | "u" <hex> <hex> <hex> <hex> \
                       | "U" "000" r"[0-1]" <hex> <hex> <hex> <hex>)
<hex>          ::= r"[0-9A-Fa-f]"
<ml_basic_string> ::= "\"\"\"" <newline>? <ml_basic_body> "\"\"\""
<ml_basic_body> ::= <ml_basic_content>*
<ml_basic_content> ::= <basic_char> | <newline> | "\\" <ws> <newline> | "\"" <basic_char> | "\"\"" <basic_char>
<literal_string> ::= "'" r"[\t -&(-~]{0,6}" "'"
<ml_literal_string> ::= "'''" <newline>? <ml_literal_content>* "'''"
<ml_literal_content> ::= r"[\t -&(-~]" | <newline> | "'" r"[\t -&(-~]" | "''" r"[\t -&(-~]"

# Integers
<integer>      ::= <dec_int> | <hex_int> | <oct_int> | <bin_int>
<dec_int>      ::= ("-" | "+")? <unsigned_dec_int>
<unsigned_dec_int> ::= <digit> | <digit1_9> (<digit> | "_" <digit>)+
<digit>        ::= r"[0-9]"
<digit1_9>     ::= r"[1-9]"
<hex_int>      ::= "0x" <hex> (<hex> | "_" <hex>)*
<oct_int>      ::= "0o" r"[0-7]" (r"[0-7]" | "_" r"[0-7]")*
<bin_int>      ::= "0b" r"[01]" (r"[01]" | "_" r"[01]")*

# Floats
<float>        ::= <dec_int> (<exp> | <frac> <exp>?) | <special_float>
<frac>         ::= "." <zero_prefixable_int>
<zero_prefixable_int> ::= <digit> (<digit> | "_" <digit>)*
<exp>          ::= ("e" | "E") ("-" | "+")? <zero_prefixable_int>
<special_float> ::= ("-" | "+")? ("inf" | "nan")

# Date and time (RFC 3339)
<date_time>    ::= <offset_date_time> | <local_date_time> | <local_date> | <local_time>
<full_date>    ::= r"[0-9]{4}" "-" r"0[1-9]|1[0-2]" "-" r"0[1-9]|[12][0-9]|3[01]"
<partial_time> ::= r"[01][0-9]|2[0-3]" ":" r"[0-5][0-9]" ":" r"[0-5][0-9]|60" ("." r"[0-9]{1,6}")?
<time_offset>  ::= "Z" | "z" | ("+" | "-") r"[01][0-9]|2[0-3]" ":" r"[0-5][0-9]"
<time_delim>   ::= "T" | "t" | " "
<offset_date_time> ::= <full_date> <time_delim> <partial_time> <time_offset>
<local_date_time> ::= <full_date> <time_delim> <partial_time>
<local_date>   ::= <full_date>
<local_time>   ::= <partial_time>

# Arrays and inline tables
<array>        ::= "[" <ws_comment_newline> "]" \
                 | "[" <array_values> <ws_comment_newline> "]"
<array_values> ::= <ws_comment_newline> <val> <ws_comment_newline> ("," <ws_comment_newline> <val> <ws_comment_newline>)* ","?
<ws_comment_newline> ::= <ws> | <ws> <comment>? <newline> <ws>
<inline_table> ::= "{" <ws> "}" | "{" <ws> <keyval> <ws> ("," <ws> <keyval> <ws>)* "}"

# Tables
<table>        ::= <std_table> | <array_table>
<std_table>    ::= "[" <ws> <key> <ws> "]"
<array_table>  ::= "[[" <ws> <key> <ws> "]]"
