# XML documents: ISLa's XML subject (Steinhöfel & Zeller, "Input Invariants",
# ESEC/FSE 2022, Fig. 1 and §6), i.e. the Fuzzing Book XML grammar extended with
# namespace prefixes, as XML_GRAMMAR_WITH_NAMESPACE_PREFIXES in rindPHI/isla
# (src/isla_formalizations/xml_lang.py). Element, attribute and character-data syntax
# per XML 1.0 (Fifth Edition) §2.1 [1] document, §3.1 [40] STag, [42] ETag, [44]
# EmptyElemTag, [41] Attribute, §2.4 [14] CharData, §4.1 references; names per
# Namespaces in XML 1.0 §3 (QName = Prefix ':' LocalPart).
# Nonterminal names and the literal splitting inside every alternative are ISLa's, so
# ISLa's published constraints apply unchanged, e.g. the balance constraint
#   forall <xml-tree> tree="<{<id> opid}[ <xml-attribute>]><inner-xml-tree></{<id> clid}>"
#     in start: (= opid clid)
# and the attribute def-use / no-redef constraints over <xml-attribute>, <id-no-prefix>
# and <text>.
# Deliberate simplifications (ISLa's): names use ASCII only ([_A-Za-z] then
# [_A-Za-z0-9.-]); character data is a small ASCII set in which '"' and ''' are written
# as the references &quot; and &#x27;; there is no prolog, comment, CDATA or PI.
# The grammar alone cannot make close tags match open tags, nor keep attribute names
# distinct in a tag: that is the constraints' job.

<start>             ::= <xml-tree>
<xml-tree>          ::= <xml-open-tag> <inner-xml-tree> <xml-close-tag>
                      | <xml-openclose-tag>
<inner-xml-tree>    ::= <text>
                      | <xml-tree>
                      | <inner-xml-tree> <inner-xml-tree>
<xml-open-tag>      ::= "<" <id> ">" | "<" <id> " " <xml-attribute> ">"
<xml-openclose-tag> ::= "<" <id> "/>" | "<" <id> " " <xml-attribute> "/>"
<xml-close-tag>     ::= "</" <id> ">"
<xml-attribute>     ::= <id> "=\"" <text> "\"" | <xml-attribute> " " <xml-attribute>
<id>                ::= <id-no-prefix> | <id-with-prefix>
<id-no-prefix>      ::= <id-start-char> | <id-start-char> <id-chars>
<id-with-prefix>    ::= <id-no-prefix> ":" <id-no-prefix>
<id-start-char>     ::= r"[_A-Za-z]"
<id-chars>          ::= <id-char> | <id-char> <id-chars>
<id-char>           ::= <id-start-char> | r"[-.0-9]"
<text>              ::= <text-char> <text> | <text-char>
<text-char>         ::= r"[A-Za-z0-9. \t/?\-,=:+]" | "&quot;" | "&#x27;"

# Constraints (ISLa's): `thicket check` checks them, `thicket generate` satisfies them.
# Tags balance (Listing 2):
where forall <xml-tree> tree="<{<id> opid}[ <xml-attribute>]><inner-xml-tree></{<id> clid}>" in start:
  (= opid clid)
# Namespace prefixes of tags are declared in an enclosing tag (ISLa's
# XML_TAG_NAMESPACE_CONSTRAINT, as in rindPHI/isla's xml_lang.py):
where forall <xml-tree> xml_tree="<{<id-no-prefix> prefix_use}:<id-no-prefix>[ <xml-attribute>][/]>[<inner-xml-tree><xml-close-tag>]":
  exists <xml-tree> outer_tag="<<id> {<xml-attribute> cont_attribute}><inner-xml-tree></<id>>": (
    inside(xml_tree, outer_tag) and
    exists <xml-attribute>="xmlns:{<id-no-prefix> prefix_def}=\"<text>\"" in cont_attribute:
      prefix_use = prefix_def)
# Namespace prefixes of attributes are declared in an enclosing tag (Listing 3):
where forall <xml-attribute> attr="{<id-no-prefix> prefix_use}:{<id-no-prefix> maybe_def}=\"<text>\"": (
  not prefix_use = "xmlns" implies
  exists <xml-tree> outer_tag="<<id> {<xml-attribute> cont_attr}><inner-xml-tree></<id>>": (
    inside(attr, outer_tag) and
    exists <xml-attribute>="xmlns:{<id-no-prefix> prefix_def}=\"<text>\"" in cont_attr:
      (not prefix_def = "xmlns" and prefix_use = prefix_def)))
# No attribute twice in one tag:
where forall <xml-attribute> attr_outer in start:
  forall <xml-attribute> attr_inner_1="{<id> id_1}=\"<text>\"" in attr_outer:
    forall <xml-attribute> attr_inner_2="{<id> id_2}=\"<text>\"" in attr_outer:
      (not same_position(attr_inner_1, attr_inner_2) implies not (= id_1 id_2))
