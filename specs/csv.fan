# Comma-separated values, RFC 4180 ("Common Format and MIME Type for CSV Files") §2:
#   rules 1-7 and the ABNF: file = [header CRLF] record *(CRLF record) [CRLF],
#   field = escaped / non-escaped, escaped = DQUOTE *(TEXTDATA / COMMA / CR / LF / 2DQUOTE)
#   DQUOTE, TEXTDATA = %x20-21 / %x23-2B / %x2D-7E.
# Nonterminal names and layout follow ISLa's CSV grammar (rindPHI/isla,
# src/isla_formalizations/csv.py, CSV_HEADERBODY_GRAMMAR), so ISLa's column constraint
#   forall <csv-header> hline: exists int colno: ( ... count(hline, "<raw-field>", colno)
#     and forall <csv-record> line in start: count(line, "<raw-field>", colno))
# applies unchanged: every field, quoted or not, is exactly one <raw-field> node.
# Differences from ISLa: RFC 4180 instead of ISLa's ';' (comma separator, TEXTDATA
# character set, quoted fields may hold ',', CR, LF and doubled quotes), and repetitions
# written with `*` rather than right recursion. Line breaks are CRLF as in the RFC or LF
# as in most files and in ISLa; as in ISLa every record, the last one too, ends in a
# line break. Fields may be empty (`a,,b`). A record that is one empty field would be an
# empty line, which RFC 4180 reads as such a record, Python's csv as a record of no
# fields and the Rust csv crate not at all: a constraint below rules it out (such a
# field is written `""`), so that every reader sees the same records.

<start>           ::= <csv-file>
<csv-file>        ::= <csv-header> <csv-body>
<csv-header>      ::= <csv-record>
<csv-body>        ::= <csv-record>*
<csv-record>      ::= <csv-string-list> <line-break>
<csv-string-list> ::= <raw-field> ("," <raw-field>)*
<raw-field>       ::= <simple-field> | <quoted-field>
<simple-field>    ::= <textdata>*
<quoted-field>    ::= "\"" <escaped-field> "\""
<escaped-field>   ::= <escaped-char>*
<escaped-char>    ::= <textdata> | "," | "\r" | "\n" | "\"\""
<textdata>        ::= r"[ !#-+\--~]"
<line-break>      ::= "\r\n" | "\n"

# Every record has as many fields as the header (checked by `thicket check`, satisfied by
# `thicket generate`):
where exists int columns: forall <csv-record> record in start:
  count(record, "<raw-field>", columns)
# No record is an empty line (see above):
where forall <csv-string-list> fields in start: str.len(fields) > 0
