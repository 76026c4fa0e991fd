# POSIX tar archives in the ustar format: ISLa's TAR subject (Steinhöfel & Zeller,
# "Input Invariants", ESEC/FSE 2022, §6; TAR_GRAMMAR in rindPHI/isla,
# src/isla_formalizations/tar.py). Header layout per POSIX.1-2017 (IEEE Std 1003.1),
# XCU "pax", "ustar Interchange Format": each file is a 512-byte header block followed by
# its data blocks, and the archive ends with two 512-byte blocks of zero bytes. Header
# fields and widths (offset: width): name 0:100, mode 100:8, uid 108:8, gid 116:8,
# size 124:12, mtime 136:12, chksum 148:8, typeflag 156:1, linkname 157:100,
# magic 257:6 ("ustar" NUL), version 263:2 ("00"), uname 265:32, gname 297:32,
# devmajor 329:8, devminor 337:8, prefix 345:155, then 12 bytes of padding to 512.
# Numeric fields are zero-filled octal digits terminated by space and/or NUL, in ISLa's
# order (mode/uid/gid/devmajor/devminor: 6 digits, SP, NUL; size/mtime: 11 digits, SP;
# chksum: 6 digits, NUL, SP).
# ISLa gets the widths from 15 ljust/rjust "crop" constraints; here the grammar fixes
# every width itself ({n} quantifiers), so only ISLa's checksum constraint
#   forall <header> header in start: forall <checksum> checksum in header:
#     tar_checksum(header, checksum)
# (and the size/content relation) is left to constraints.
# A context-free grammar cannot say "a name of any length, padded with NUL to n bytes"
# without counting, so each NUL-padded text field is written as whole chunks of
# characters, one chunk that switches from characters to NULs, and whole NUL chunks.
# Deliberate simplifications: typeflag is '0' (regular file) or '2' (symbolic link) as in
# ISLa; file names use the POSIX portable filename character set (A-Z a-z 0-9 . _ -)
# and are 1-100 bytes; user and group names are 1-8 characters ([a-z_][a-z0-9_-]*,
# ISLa's optional trailing '$' is left out); the prefix field is all NUL as in ISLa;
# the content of every entry is one 512-byte data block: 1 to 512 printable
# characters, then NUL padding (ISLa crops content to 512 bytes too, and its size
# constraint asks for 10-100 characters). The size and
# checksum fields are arbitrary octal numbers (constraints must fix them).

<start>            ::= <entries> <final-entry>
<entries>          ::= <entry> | <entry> <entries>
<entry>            ::= <header> <content>
<header>           ::= <file-name> <file-mode> <uid> <gid> <file-size> <mod-time> <checksum>
                       <typeflag> <linked-file-name> "ustar\x00" "00" <uname> <gname>
                       <dev-maj> <dev-min> <prefix> <header-padding>
<file-name>        ::= <padded-name>
<file-mode>        ::= <octal-digit>{6} " " <NUL>
<uid>              ::= <octal-digit>{6} " " <NUL>
<gid>              ::= <octal-digit>{6} " " <NUL>
<file-size>        ::= <octal-digit>{11} " "
<mod-time>         ::= <octal-digit>{11} " "
<checksum>         ::= <octal-digit>{6} <NUL> " "
<typeflag>         ::= "0" | "2"
<linked-file-name> ::= <padded-name> | <nul10>{10}
<uname>            ::= <user-name>
<gname>            ::= <user-name>
<dev-maj>          ::= <octal-digit>{6} " " <NUL>
<dev-min>          ::= <octal-digit>{6} " " <NUL>
<prefix>           ::= <nul155>
<header-padding>   ::= <NUL>{12}
<content>          ::= <content-block>
<final-entry>      ::= <nul64>{16}

# 100 bytes: a first character, then 99 = 9 chunks of 11 bytes
<padded-name>      ::= <file-name-first-char> <padded-name-rest>
<padded-name-rest> ::= <name-switch> <nul11>{8}
                     | <name-chunk> <name-switch> <nul11>{7}
                     | <name-chunk>{2} <name-switch> <nul11>{6}
                     | <name-chunk>{3} <name-switch> <nul11>{5}
                     | <name-chunk>{4} <name-switch> <nul11>{4}
                     | <name-chunk>{5} <name-switch> <nul11>{3}
                     | <name-chunk>{6} <name-switch> <nul11>{2}
                     | <name-chunk>{7} <name-switch> <nul11>
                     | <name-chunk>{8} <name-switch>
                     | <name-chunk>{9}
# 11 bytes: 0-10 characters, then NUL padding
<name-switch>      ::= <NUL>{11}
                     | <file-name-char> <NUL>{10}
                     | <file-name-char>{2} <NUL>{9}
                     | <file-name-char>{3} <NUL>{8}
                     | <file-name-char>{4} <NUL>{7}
                     | <file-name-char>{5} <NUL>{6}
                     | <file-name-char>{6} <NUL>{5}
                     | <file-name-char>{7} <NUL>{4}
                     | <file-name-char>{8} <NUL>{3}
                     | <file-name-char>{9} <NUL>{2}
                     | <file-name-char>{10} <NUL>
<name-chunk>       ::= <file-name-char>{11}
<file-name-first-char> ::= r"[A-Za-z0-9_]"
<file-name-char>   ::= r"[A-Za-z0-9._-]"

# 32 bytes: 1-8 characters, then NUL padding
<user-name>        ::= <uname-first-char> <user-name-rest> <nul8>{3}
# 7 bytes: 0-7 characters, then NUL padding
<user-name-rest>   ::= <NUL>{7}
                     | <uname-char> <NUL>{6}
                     | <uname-char>{2} <NUL>{5}
                     | <uname-char>{3} <NUL>{4}
                     | <uname-char>{4} <NUL>{3}
                     | <uname-char>{5} <NUL>{2}
                     | <uname-char>{6} <NUL>
                     | <uname-char>{7}
<uname-first-char> ::= r"[a-z_]"
<uname-char>       ::= r"[a-z0-9_-]"

# 512 bytes: 8 chunks of 64 bytes, one of them switching from characters to NULs;
# that one is 8 chunks of 8 bytes, one of them switching. The content is never empty:
# an all-NUL data block after a header would read as the end of the archive (a file
# of size 0 has no data block at all).
<content-block>    ::= <content-switch> <nul64>{7}
                     | <content-chunk> <content-switch> <nul64>{6}
                     | <content-chunk>{2} <content-switch> <nul64>{5}
                     | <content-chunk>{3} <content-switch> <nul64>{4}
                     | <content-chunk>{4} <content-switch> <nul64>{3}
                     | <content-chunk>{5} <content-switch> <nul64>{2}
                     | <content-chunk>{6} <content-switch> <nul64>
                     | <content-chunk>{7} <content-switch>
<content-switch>   ::= <content-switch8> <nul8>{7}
                     | <character>{8} <content-switch8> <nul8>{6}
                     | <character>{16} <content-switch8> <nul8>{5}
                     | <character>{24} <content-switch8> <nul8>{4}
                     | <character>{32} <content-switch8> <nul8>{3}
                     | <character>{40} <content-switch8> <nul8>{2}
                     | <character>{48} <content-switch8> <nul8>
                     | <character>{56} <content-switch8>
# 8 bytes: 1-8 characters, then NUL padding
<content-switch8>  ::= <character> <NUL>{7}
                     | <character>{2} <NUL>{6}
                     | <character>{3} <NUL>{5}
                     | <character>{4} <NUL>{4}
                     | <character>{5} <NUL>{3}
                     | <character>{6} <NUL>{2}
                     | <character>{7} <NUL>
                     | <character>{8}
<content-chunk>    ::= <character>{64}
# printable ASCII including TAB, LF, VT, FF, CR (Python's string.printable, as in ISLa)
<character>        ::= r"[\t-\r -~]"
<octal-digit>      ::= r"[0-7]"

<NUL>              ::= b"\x00"
<nul8>             ::= b"\x00\x00\x00\x00\x00\x00\x00\x00"
<nul10>            ::= b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
<nul11>            ::= <nul10> <NUL>
<nul64>            ::= <nul8>{8}
<nul155>           ::= <nul10>{15} <NUL>{5}

# Constraints (ISLa's): `thicket check` checks them, `thicket generate` satisfies them.
# The header checksum:
where forall <header> header in start:
  forall <checksum> checksum in header:
    tar_checksum(header, checksum)
# The size field gives the number of content characters:
where forall <entry> entry:
  exists int size: (octal_to_decimal(entry.<header>.<file-size>, size) and
    count(entry.<content>, "<character>", size))
