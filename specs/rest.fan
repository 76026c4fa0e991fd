# reStructuredText subset: ISLa's reST subject (Steinhöfel & Zeller, "Input Invariants",
# ESEC/FSE 2022, §6 and appendix), REST_GRAMMAR in rindPHI/isla
# (src/isla_formalizations/rest.py). Constructs per the Docutils "reStructuredText
# Markup Specification": Sections (title + underline of '=' or '-'), Paragraphs,
# Enumerated Lists ("1. item"), Hyperlink Targets (internal targets ".. _name:") and
# Hyperlink References ("name_").
# Nonterminal names (hyphens and underscores as in ISLa) and the literal splitting inside
# each alternative are ISLa's, so its constraints apply unchanged: the underline length
#   forall <section-title> title="{<title-text> titletxt}\n{<underline> underline}" ...,
# numbering over <enumeration> / <enumeration_item> = "{<number> n}. <nobr-string>",
# no-redef over <label> = ".. _{<id> id}:", and def-use from <internal_reference> /
# <internal_reference_nospace> to <labeled_paragraph> = ".. _{<id> def_id}:\n\n<paragraph>".
# As in ISLa, '_', '{', '}', '`', '|' and '*' are left out of paragraph text (no
# references, substitutions, interpreted text or emphasis other than the generated ones).
# Deliberate change: ISLa's character sets come from Python's string.printable, which
# also holds CR, VT and FF (and LF in paragraph text); they are left out here, so every
# paragraph and list item is one line. And '*' is left out of titles and list items too
# (ISLa allows it there): Docutils reads it as the start of an emphasis and warns.
# Known gaps, as in ISLa: a paragraph such as "C." or "iv." reads as a list item of a
# letter or roman enumerated list, a list item of only spaces ends its list, a paragraph
# "::" announces a literal block (Docutils warns about the last two; the bundled-spec
# tests allow them in at most 2% of documents).

<start>                      ::= <body-elements>
<body-elements>              ::= <body-element> "\n" <body-elements> | <body-element>
<body-element>               ::= <section-title> "\n"
                               | <labeled_paragraph>
                               | <paragraph>
                               | <enumeration>
<section-title>              ::= <title-text> "\n" <underline>
<title-text>                 ::= <title-first-char> | <title-first-char> <nobr-string>
<paragraph>                  ::= <first_paragraph_element> <paragraph_elements> "\n"
<labeled_paragraph>          ::= <label> "\n\n" <paragraph>
<label>                      ::= ".. _" <id> ":"
<paragraph_elements>         ::= <paragraph_element> <paragraph_elements> | <paragraph_element>
<first_paragraph_element>    ::= <paragraph_chars_nospace> | <internal_reference_nospace>
<paragraph_element>          ::= <paragraph_chars> | <internal_reference>
<internal_reference>         ::= <presep> <id> "_" <postsep>
<internal_reference_nospace> ::= <id> "_" <postsep>
<enumeration>                ::= <enumeration_items> "\n"
<enumeration_items>          ::= <enumeration_item> "\n" <enumeration_items> | <enumeration_item>
<enumeration_item>           ::= <number> ". " <nobr-string>
<paragraph_chars>            ::= <paragraph_char> <paragraph_chars> | <paragraph_char>
<paragraph_chars_nospace>    ::= <paragraph_char_nospace> <paragraph_chars_nospace>
                               | <paragraph_char_nospace>
# printable ASCII and tab, without _ { } ` | *
<paragraph_char>             ::= r"[ \t!-)+-^a-z~]"
<paragraph_char_nospace>     ::= r"[!-)+-^a-z~]"
<presep>                     ::= " " | "\t" | "," | ";" | "(" | ")"
<postsep>                    ::= " " | "\t" | "," | "." | ";" | "(" | ")"
<id>                         ::= r"[a-z]"
<number>                     ::= <digit_nonzero> <digits> | <digit>
<digit_nonzero>              ::= "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9"
<digits>                     ::= <digit> <digits> | <digit>
<digit>                      ::= "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9"
<nobr-string>                ::= <nobr-char> | <nobr-char> <nobr-string>
# printable ASCII and space, without _ { } ` | * (see the header)
<nobr-char>                  ::= r"[ -)+-^a-z~]"
# printable ASCII without whitespace and - * + _ { } ` | =
<title-first-char>           ::= r"[!-),.-<>-^a-z~]"
<underline>                  ::= <eqs> | <dashes>
<eqs>                        ::= "=" | "=" <eqs>
<dashes>                     ::= "-" | "-" <dashes>

# Constraints (ISLa's four, the first in its simpler form without ljust_crop and
# extend_crop): `thicket check` checks them, `thicket generate` satisfies them.
# A title's underline is at least as long as the title:
where forall <section-title> title="{<title-text> titletxt}\n{<underline> underline}" in start:
  (>= (str.len underline) (str.len titletxt))
# No label is defined twice:
where forall <label> label_1=".. _{<id> id_1}:" in start:
  forall <label> label_2=".. _{<id> id_2}:" in start:
    (same_position(label_1, label_2) or not (= id_1 id_2))
# Every reference names a label the document defines (ISLa's "link targets defined";
# a label occurs only on a labeled paragraph):
where forall <internal_reference> use="<presep>{<id> name}_<postsep>" in start:
  exists <label> target=".. _{<id> defined}:" in start:
    (= name defined)
where forall <internal_reference_nospace> use="{<id> name}_<postsep>" in start:
  exists <label> target=".. _{<id> defined}:" in start:
    (= name defined)
# In an enumerated list, the item after an item is numbered one more, and an item
# another one follows is numbered from 1 on (ISLa's "list numbering consecutive"; the
# next item is the one directly in the rest of the list):
where forall <enumeration_items> items="{<enumeration_item> item}\n{<enumeration_items> rest}" in start:
  forall <enumeration_item> next="{<number> following}. <nobr-string>" in rest:
    forall <number> number in item:
      (direct_child(next, rest) implies
        ((> (str.to.int number) 0) and
         (= (str.to.int following) (+ (str.to.int number) 1))))
