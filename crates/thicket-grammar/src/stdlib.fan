# Fandango 1.3's standard library, as thicket reads it.
#
# Every symbol <x> is an alias `<x> ::= <_x>` of its definition <_x>: a spec may
# redefine <x> (its definition then replaces this one) while <_x> keeps its meaning.
# Only the rules a spec reaches are added to its grammar.
#
# The regexes are Python's (as in any .fan file) and say what Fandango's say.

# Any Unicode character, newline included.
<_char> ::= r'(?s:.)'
<char> ::= <_char>

# Python's string.printable: digits, ASCII letters, punctuation and whitespace.
<_printable> ::= r'[\x20-\x7e\t\n\r\x0b\x0c]'
<printable> ::= <_printable>
<_whitespace> ::= r'[ \t\n\r\x0b\x0c]'
<whitespace> ::= <_whitespace>
<_digit> ::= r'[0-9]'
<digit> ::= <_digit>
<_hexdigit> ::= r'[0-9a-fA-F]'
<hexdigit> ::= <_hexdigit>
<_octdigit> ::= r'[0-7]'
<octdigit> ::= <_octdigit>
<_ascii_letter> ::= r'[a-zA-Z]'
<ascii_letter> ::= <_ascii_letter>
<_ascii_lowercase_letter> ::= r'[a-z]'
<ascii_lowercase_letter> ::= <_ascii_lowercase_letter>
<_ascii_uppercase_letter> ::= r'[A-Z]'
<ascii_uppercase_letter> ::= <_ascii_uppercase_letter>
<_punctuation> ::= r'[!-/:-@\[-`{-~]'
<punctuation> ::= <_punctuation>
# Fandango defines <_alphanum> twice; its second definition, with `_`, is the one used.
<_alphanum> ::= r'[a-zA-Z0-9_]'
<alphanum> ::= <_alphanum>

# Unicode classes, as Fandango's parser matches them (the `regex` module's \w, \d, \s).
<_any_letter> ::= r'\w'
<any_letter> ::= <_any_letter>
<_any_digit> ::= r'\d'
<any_digit> ::= <_any_digit>
<_any_whitespace> ::= r'\s'
<any_whitespace> ::= <_any_whitespace>
<_any_non_letter> ::= r'\W'
<any_non_letter> ::= <_any_non_letter>
<_any_non_digit> ::= r'\D'
<any_non_digit> ::= <_any_non_digit>
<_any_non_whitespace> ::= r'\S'
<any_non_whitespace> ::= <_any_non_whitespace>

# One byte of the ASCII range.
<_ascii_char> ::= rb'[\x00-\x7f]'
<ascii_char> ::= <_ascii_char>

# The ASCII control characters by name, each one byte; <SP> (the space) and <DEL> too.
<_NUL> ::= b'\x00'
<NUL> ::= <_NUL>
<_SOH> ::= b'\x01'
<SOH> ::= <_SOH>
<_STX> ::= b'\x02'
<STX> ::= <_STX>
<_ETX> ::= b'\x03'
<ETX> ::= <_ETX>
<_EOT> ::= b'\x04'
<EOT> ::= <_EOT>
<_ENQ> ::= b'\x05'
<ENQ> ::= <_ENQ>
<_ACK> ::= b'\x06'
<ACK> ::= <_ACK>
<_BEL> ::= b'\x07'
<BEL> ::= <_BEL>
<_BS> ::= b'\x08'
<BS> ::= <_BS>
<_HT> ::= b'\x09'
<HT> ::= <_HT>
<_LF> ::= b'\x0a'
<LF> ::= <_LF>
<_VT> ::= b'\x0b'
<VT> ::= <_VT>
<_FF> ::= b'\x0c'
<FF> ::= <_FF>
<_CR> ::= b'\x0d'
<CR> ::= <_CR>
<_SO> ::= b'\x0e'
<SO> ::= <_SO>
<_SI> ::= b'\x0f'
<SI> ::= <_SI>
<_DLE> ::= b'\x10'
<DLE> ::= <_DLE>
<_DC1> ::= b'\x11'
<DC1> ::= <_DC1>
<_DC2> ::= b'\x12'
<DC2> ::= <_DC2>
<_DC3> ::= b'\x13'
<DC3> ::= <_DC3>
<_DC4> ::= b'\x14'
<DC4> ::= <_DC4>
<_NAK> ::= b'\x15'
<NAK> ::= <_NAK>
<_SYN> ::= b'\x16'
<SYN> ::= <_SYN>
<_ETB> ::= b'\x17'
<ETB> ::= <_ETB>
<_CAN> ::= b'\x18'
<CAN> ::= <_CAN>
<_EM> ::= b'\x19'
<EM> ::= <_EM>
<_SUB> ::= b'\x1a'
<SUB> ::= <_SUB>
<_ESC> ::= b'\x1b'
<ESC> ::= <_ESC>
<_FS> ::= b'\x1c'
<FS> ::= <_FS>
<_GS> ::= b'\x1d'
<GS> ::= <_GS>
<_RS> ::= b'\x1e'
<RS> ::= <_RS>
<_US> ::= b'\x1f'
<US> ::= <_US>
<_SP> ::= b'\x20'
<SP> ::= <_SP>
<_DEL> ::= b'\x7f'
<DEL> ::= <_DEL>
<_ascii_control> ::= <NUL> | <SOH> | <STX> | <ETX> | <EOT> | <ENQ> | <ACK> | <BEL> | <BS> | <HT> | <LF> | <VT> | <FF> | <CR> | <SO> | <SI> | <DLE> | <DC1> | <DC2> | <DC3> | <DC4> | <NAK> | <SYN> | <ETB> | <CAN> | <EM> | <SUB> | <ESC> | <FS> | <GS> | <RS> | <US> | <SP> | <DEL>
<ascii_control> ::= <_ascii_control>

# A bit.
<_bit> ::= 0 | 1
<bit> ::= <_bit>

# Any byte.
<_byte> ::= rb'[\x00-\xff]'
<byte> ::= <_byte>

# UTF-8 encodings of one character, as bytes.
<_utf8_char1> ::= rb'[\x00-\x7f]'
<utf8_char1> ::= <_utf8_char1>
<_utf8_continuation_byte> ::= rb'[\x80-\xbf]'
<utf8_continuation_byte> ::= <_utf8_continuation_byte>
<_utf8_char2> ::= rb'[\xc2-\xdf]' <utf8_continuation_byte>
<utf8_char2> ::= <_utf8_char2>
<_utf8_char3> ::= rb'[\xe0-\xef]' <utf8_continuation_byte>{2}
<utf8_char3> ::= <_utf8_char3>
<_utf8_char4> ::= rb'[\xf0-\xf5]' <utf8_continuation_byte>{3}
<utf8_char4> ::= <_utf8_char4>
<_utf8_char> ::= <utf8_char1> | <utf8_char2> | <utf8_char3> | <utf8_char4>
<utf8_char> ::= <_utf8_char>

# Binary numbers: only their length; sign and byte order are the spec's to say.
<_int8> ::= <byte>
<int8> ::= <_int8>
<_int16> ::= <byte> <byte>
<int16> ::= <_int16>
<_int32> ::= <byte>{4}
<int32> ::= <_int32>
<_int64> ::= <byte>{8}
<int64> ::= <_int64>
<_float32> ::= <byte>{4}
<float32> ::= <_float32>
<_float64> ::= <byte>{8}
<float64> ::= <_float64>

# Timer messages of protocol specs.
<_timer_number> ::= r'[0-9]+'
<timer_number> ::= <_timer_number>
<_timer_timeout> ::= <timer_number>
<timer_timeout> ::= <_timer_timeout>
<_timer_id> ::= <timer_number>
<timer_id> ::= <_timer_id>
<_timer_expired> ::= 'expired: ' <timer_id> '\n'
<timer_expired> ::= <_timer_expired>
<_timer_cancel> ::= 'cancel: ' <timer_id> '\n'
<timer_cancel> ::= <_timer_cancel>
<_timer_start> ::= 'start: ' <timer_id> ' (' <timer_timeout> ')\n'
<timer_start> ::= <_timer_start>

# The Fandango dancer, a character outside the Basic Multilingual Plane.
<_fandango_dancer> ::= '\U0001F483'
<fandango_dancer> ::= <_fandango_dancer>
