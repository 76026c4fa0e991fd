//! Every constraint printed in the ISLa paper and its appendix (and the evaluation's
//! constraints from the ISLa repository, as the digest quotes them) parses. The ones for
//! bundled grammars are also checked against inputs in `isla_examples.rs`; here, those
//! whose grammar thicket bundles must also resolve against it.

use thicket_constraint::Predicates;
use thicket_constraint::parser::parse_constraint;
use thicket_grammar::LoadOptions;

/// (constraint, bundled spec it resolves against, if any)
const PRINTED: &[(&str, Option<&str>)] = &[
    // Listing 1 (the extraction's commas restored to dots).
    (
        "<xml-tree>.<xml-open-tag>.<id> = <xml-tree>.<xml-close-tag>.<id>",
        Some("xml.bnf"),
    ),
    // Listing 2, as printed and with the repository's leading space.
    (
        r#"forall <xml-tree> tree="<{<id> opid}[<xml-attribute>]><inner-xml-tree></{<id> clid}>" in start:
  (= opid clid)"#,
        None,
    ),
    (
        r#"forall <xml-tree> tree="<{<id> opid}[ <xml-attribute>]><inner-xml-tree></{<id> clid}>" in start:
  (= opid clid)"#,
        Some("xml.bnf"),
    ),
    // Listing 3 with its missing closing quotes.
    (
        r#"forall <xml-attribute> attr="{<id-no-prefix> prefix_use}:{<id-no-prefix> maybe_def}=\"<text>\"": (
  not prefix_use = "xmlns" implies
  exists <xml-tree> outer_tag=
    "<<id> {<xml-attribute> cont_attr}><inner-xml-tree></<id>>": (
    inside(attr, outer_tag) and
    exists <xml-attribute>=
      "xmlns:{<id-no-prefix> prefix_def}=\"<text>\"" in cont_attr:
      (not prefix_def = "xmlns" and prefix_use = prefix_def)))"#,
        Some("xml.bnf"),
    ),
    // Targeted testing, §2.3.
    (
        r#"exists <xml-attribute> attributes: (
  exists <xml-attribute> attr in attributes:
    attr.<id> = "web:baseurl" and
  exists <xml-attribute> attr in attributes:
    attr.<id> = "web:query")"#,
        Some("xml.bnf"),
    ),
    (
        r#"forall <xml-attribute>="web:<id-no-prefix>={<text> text}":
  str.len(text) <= 100"#,
        None,
    ),
    (
        r#"forall <xml-attribute>="web:<id-no-prefix>=\"{<text> text}\"":
  str.len(text) <= 100"#,
        Some("xml.bnf"),
    ),
    (
        r#"forall <xml-attribute> attrs:
  forall <xml-attribute> attr_1="web:baseurl={<text> t1}" in attrs:
    forall <xml-attribute> attr_2="web:query={<text> t2}" in attrs:
      str.len(t1) + str.len(t2) > 150"#,
        None,
    ),
    // The solver's running examples.
    ("forall <id> id in start: str.len(id) = 3", Some("xml.bnf")),
    (
        "forall <id> id in start: (= (str.len id) 17)",
        Some("xml.bnf"),
    ),
    // reST title underline, simplified and Core.
    (
        "str.len(<section-title>.<underline>) >=\n  str.len(<section-title>.<title-text>)",
        Some("rest.bnf"),
    ),
    (
        r#"forall <section-title> title=
  "{<title-txt> titletxt}\n{<underline> underline}" in start:
  (>= (str.len underline) (str.len titletxt))"#,
        None,
    ),
    // TAR checksum, simplified and Core.
    (
        "tar_checksum(<header>, <header>.<checksum>)",
        Some("tar.bnf"),
    ),
    (
        "forall <header> header in start:\n  forall <checksum> checksum in header:\n    tar_checksum(header, checksum)",
        Some("tar.bnf"),
    ),
    // CSV columns.
    (
        r#"forall <csv-header> hline:
  exists int colno: (
    str.to_int(colno) >= 3 and
    str.to_int(colno) <= 5 and
    count(hline, "<raw-field>", colno) and
    forall <csv-record> line in start:
      count(line, "<raw-field>", colno))"#,
        Some("csv.bnf"),
    ),
    (
        r#"exists int num: forall <csv-record> elem in start: (str.to.int(num) >= 1 and count(elem, "<raw-field>", num))"#,
        Some("csv.bnf"),
    ),
    // Scriptsize-C def-use and no-redef.
    (
        r#"forall <expr> expr in start: forall <id> use_id in expr:
  exists <declaration> decl="int {<id> def_id}[ = <expr>];" in start:
    (level("GE", "<block>", decl, expr) and (before(decl, expr) and (= use_id def_id)))"#,
        Some("scriptsizec.bnf"),
    ),
    (
        r#"forall <declaration> declaration="int {<id> def_id}[ = <expr>];" in start:
  forall <declaration> other_declaration="int {<id> other_def_id}[ = <expr>];" in start:
    (same_position(declaration, other_declaration) xor not (= def_id other_def_id))"#,
        Some("scriptsizec.bnf"),
    ),
    // XML no-redef.
    (
        r#"forall <xml-attribute> attr_outer in start:
  forall <xml-attribute> attr_inner_1="{<id> id_1}=\"<text>\"" in attr_outer:
    forall <xml-attribute> attr_inner_2="{<id> id_2}=\"<text>\"" in attr_outer:
      (not same_position(attr_inner_1, attr_inner_2) implies not (= id_1 id_2))"#,
        Some("xml.bnf"),
    ),
    // reST no-redef and numbering.
    (
        r#"forall <label> label_1=".. _{<id> id_1}:" in start:
  forall <label> label_2=".. _{<id> id_2}:" in start:
    (same_position(label_1,label_2) or not (= id_1 id_2))"#,
        Some("rest.bnf"),
    ),
    (
        r#"forall <enumeration> e in start:
  forall <enumeration_item> item_1="{<number> number_1}. <nobr-string>" in e:
    forall <enumeration_item> item_2="{<number> number_2}. <nobr-string>" in e:
      (not consecutive(item_1,item_2) or
        (consecutive(item_1,item_2) and
          ((= (str.to.int number_2) (+ (str.to.int number_1) 1)) and (> (str.to.int number_1) 0))))"#,
        Some("rest.bnf"),
    ),
    // Mined (appendix): DOT, ICMP, Racket.
    (
        r#"((forall <graph_type> container in start: exists <DIGRAPH> elem in container: (= elem "digraph") or forall <edge_stmt> container_0 in start: exists <edgeop> elem_0 in container_0: (= elem_0 "--")) and (forall <graph> container_1 in start: exists <GRAPH> elem_1 in container_1: (= elem_1 "graph") or forall <edge_stmt> container_2 in start: exists <edgeop> elem_2 in container_2: (= elem_2 "->")))"#,
        None,
    ),
    (
        r#"(forall <icmp_message> container in start: exists <type> elem in container: (= elem "00 ") or forall <icmp_message> container_0 in start: exists <type> elem_0 in container_0: (= elem_0 "08 "))"#,
        None,
    ),
    (
        "forall <icmp_message> container in start: exists <checksum> checksum in container: internet_checksum(container, checksum)",
        None,
    ),
    (
        r#"forall <expr> attribute="<maybe_comments><MWSS>{<name> prefix_use}" in start:
  ((= prefix_use "sqrt") or (= prefix_use "string-append") or
   exists <definition> outer_tag="(<MWSS>define<MWSS>(<MWSS><name>{<WSS_NAMES> cont_attribute}<MWSS>)<MWSS><expr><MWSS>)" in start:
     (inside(attribute, outer_tag) and
      exists <NAME> def_attribute="{<NAME_CHARS> prefix_def}" in cont_attribute:
        (= prefix_use prefix_def)))"#,
        None,
    ),
    (
        r#"forall <expr> use_ctx="<maybe_comments><MWSS>{<MWSS>{<name> use}<wss_exprs><MWSS>}" in start:
  ((= use "sqrt") or
   exists <definition> def_ctx="(<MWSS>define<MWSS>(<MWSS>{<name> def}<WSS_NAMES><MWSS>)<MWSS><expr><MWSS>)" in start:
     (before(def_ctx, use_ctx) and (= use def)))"#,
        None,
    ),
];

#[test]
fn every_printed_constraint_parses() {
    for (text, _) in PRINTED {
        if let Err(e) = parse_constraint(text, 0, text.len()) {
            panic!("{text}\n{e:?}");
        }
    }
}

#[test]
fn printed_constraints_for_bundled_grammars_resolve() {
    for (text, spec) in PRINTED {
        let Some(spec) = spec else { continue };
        let path = format!("{}/../../specs/{spec}", env!("CARGO_MANIFEST_DIR"));
        let spec = thicket_grammar::load_spec_file(path.as_ref(), &LoadOptions::default()).unwrap();
        if let Err(e) = thicket_constraint::from_text(
            &spec.grammar,
            &Predicates::standard(),
            "paper.isla",
            text,
        ) {
            panic!("{text}\n{}", e.render());
        }
    }
}
