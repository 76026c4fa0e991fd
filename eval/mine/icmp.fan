# ICMP messages (RFC 792) as hex text, one byte as two upper-case hex digits and a
# space, as in ISLearn's ICMP subject (Steinhöfel & Zeller, "Input Invariants", §6.3):
# type, code, 16-bit checksum, 4 bytes of rest-of-header (identifier and sequence number
# for echo messages), then the payload. The grammar allows every type and any checksum:
# that the program accepts only echo requests (type 8) and replies (type 0) with code 0
# and an RFC 1071 checksum is what `thicket mine` is to find (eval/mine.sh).

<start>        ::= <icmp_message>
<icmp_message> ::= <header> <payload_data>
<header>       ::= <type> <code> <checksum> <header_data>
<type>         ::= <byte>
<code>         ::= <byte>
<checksum>     ::= <byte> <byte>
<header_data>  ::= <byte> <byte> <byte> <byte>
<payload_data> ::= <byte>*
<byte>         ::= r"[0-9A-F]{2} "
