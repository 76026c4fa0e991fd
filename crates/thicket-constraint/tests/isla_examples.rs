//! ISLa's published constraints (paper, appendix and evaluation subjects), verbatim
//! except where the digest notes a typo, on thicket's bundled grammars: each accepts
//! hand-written valid inputs and rejects hand-written invalid ones.

use thicket_constraint::{Checker, Predicates};
use thicket_grammar::{Grammar, LoadOptions, Spec};
use thicket_parse::{ParseConfig, Parser};

fn spec(name: &str) -> Spec {
    let path = format!("{}/../../specs/{name}", env!("CARGO_MANIFEST_DIR"));
    thicket_grammar::load_spec_file(path.as_ref(), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{}", e.render()))
}

fn checker<'g>(grammar: &'g Grammar, constraint: &str) -> Checker<'g> {
    let c =
        thicket_constraint::from_text(grammar, &Predicates::standard(), "test.isla", constraint)
            .unwrap_or_else(|e| panic!("{}", e.render()));
    Checker::new(grammar, vec![c])
}

/// Asserts the verdict of every input, and that each violation is explained.
fn assert_verdicts(spec_name: &str, constraint: &str, valid: &[&str], invalid: &[&str]) {
    let spec = spec(spec_name);
    let checker = checker(&spec.grammar, constraint);
    assert_checker_verdicts(&spec, &checker, valid, invalid);
}

/// [`assert_verdicts`] with the spec's own constraints.
fn assert_spec_verdicts(spec_name: &str, valid: &[&str], invalid: &[&str]) {
    let spec = spec(spec_name);
    let constraints = thicket_constraint::from_spec(&spec, &Predicates::standard())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let checker = Checker::new(&spec.grammar, constraints);
    assert_checker_verdicts(&spec, &checker, valid, invalid);
}

fn assert_checker_verdicts(spec: &Spec, checker: &Checker<'_>, valid: &[&str], invalid: &[&str]) {
    let spec_name = spec.source.name();
    let parser = Parser::new(&spec.grammar, ParseConfig::default()).unwrap();
    for (inputs, want_valid) in [(valid, true), (invalid, false)] {
        for input in inputs {
            let tree = parser
                .parse(input.as_bytes())
                .unwrap_or_else(|e| panic!("{spec_name}: {input:?} does not parse: {e}"))
                .tree();
            let violations = checker.explain(&tree);
            assert_eq!(
                violations.is_empty(),
                want_valid,
                "{spec_name}: {input:?} should be {}: {}",
                if want_valid { "valid" } else { "invalid" },
                violations
                    .iter()
                    .map(|v| checker.render(v, &tree))
                    .collect::<String>()
            );
            assert_eq!(checker.check(&tree).is_empty(), want_valid, "{input:?}");
            for v in &violations {
                assert!(!v.steps.is_empty(), "{input:?}: unexplained violation");
            }
        }
    }
}

#[test]
fn xml_tag_balance() {
    // Listing 2, with the repository's `[ <xml-attribute>]`.
    let balance = r#"forall <xml-tree> tree="<{<id> opid}[ <xml-attribute>]><inner-xml-tree></{<id> clid}>" in start:
  (= opid clid)"#;
    let valid = [
        "<a>x</a>",
        "<a b=\"c\">t<d/></a>",
        "<x:y>t<b>u</b></x:y>",
        "<e/>",
    ];
    let invalid = [
        "<a>x</b>",
        "<a><b>t</c></a>",
        "<p q=\"1\">z</r>",
        "<a><b>t</b></A>",
    ];
    assert_verdicts("xml.bnf", balance, &valid, &invalid);
    // Listing 1, simplified syntax.
    let simplified = "<xml-tree>.<xml-open-tag>.<id> = <xml-tree>.<xml-close-tag>.<id>";
    assert_verdicts("xml.bnf", simplified, &valid, &invalid);
}

#[test]
fn xml_namespace_prefixes_are_defined_in_an_enclosing_tag() {
    // Listing 3 with its missing closing quotes added.
    let def_use = r#"forall <xml-attribute> attr="{<id-no-prefix> prefix_use}:{<id-no-prefix> maybe_def}=\"<text>\"": (
  not prefix_use = "xmlns" implies
  exists <xml-tree> outer_tag=
    "<<id> {<xml-attribute> cont_attr}><inner-xml-tree></<id>>": (
    inside(attr, outer_tag) and
    exists <xml-attribute>=
      "xmlns:{<id-no-prefix> prefix_def}=\"<text>\"" in cont_attr:
      (not prefix_def = "xmlns" and prefix_use = prefix_def)))"#;
    assert_verdicts(
        "xml.bnf",
        def_use,
        &[
            "<a b=\"c\">t</a>",
            "<a xmlns:p=\"u\" p:b=\"c\">t</a>",
            "<a xmlns:p=\"u\"><b p:c=\"d\">t</b></a>",
            "<a xmlns:p=\"u\" xmlns:q=\"v\"><b q:c=\"d\" p:e=\"f\">t</b></a>",
        ],
        &[
            "<a p:b=\"c\">t</a>",
            "<a xmlns:q=\"u\" p:b=\"c\">t</a>",
            "<r><a xmlns:p=\"u\">t</a><b p:c=\"d\">t</b></r>",
            "<a><b xmlns:p=\"u\">t</b><c p:x=\"1\">t</c></a>",
        ],
    );
}

#[test]
fn xml_attributes_are_not_duplicated() {
    let no_redef = r#"forall <xml-attribute> attr_outer in start:
  forall <xml-attribute> attr_inner_1="{<id> id_1}=\"<text>\"" in attr_outer:
    forall <xml-attribute> attr_inner_2="{<id> id_2}=\"<text>\"" in attr_outer:
      (not same_position(attr_inner_1, attr_inner_2) implies not (= id_1 id_2))"#;
    assert_verdicts(
        "xml.bnf",
        no_redef,
        &[
            "<a b=\"1\" c=\"2\">t</a>",
            "<a b=\"1\"><c b=\"2\"/></a>",
            "<a/>",
            "<a x:b=\"1\" b=\"2\" y:b=\"3\"/>",
        ],
        &[
            "<a b=\"1\" b=\"2\">t</a>",
            "<a x=\"1\" y=\"2\" x=\"3\"/>",
            "<a><c d=\"1\" d=\"1\"/></a>",
        ],
    );
}

#[test]
fn csv_rows_have_the_same_number_of_columns() {
    // Appendix (semantic `count`), with ISLa's 3-5 columns.
    let columns = r#"forall <csv-header> hline:
  exists int colno: (
    str.to_int(colno) >= 3 and
    str.to_int(colno) <= 5 and
    count(hline, "<raw-field>", colno) and
    forall <csv-record> line in start:
      count(line, "<raw-field>", colno))"#;
    assert_verdicts(
        "csv.bnf",
        columns,
        &[
            "a,b,c\n1,2,3\n",
            "a,b,c,d\n",
            "a,b,c,d,e\r\n1,2,3,4,5\r\n\"x,y\",2,,4,5\r\n",
        ],
        &[
            "a,b,c\n1,2\n",
            "a,b\n1,2\n",
            "a,b,c\n1,2,3\n1,2,3,4\n",
            "a,b,c,d,e,f\n1,2,3,4,5,6\n",
        ],
    );
    // The repository's variant: any number of columns, the same in every record.
    let same = r#"exists int num: forall <csv-record> elem in start:
  (str.to.int(num) >= 1 and count(elem, "<raw-field>", num))"#;
    assert_verdicts(
        "csv.bnf",
        same,
        &["a\nb\n", "a,b\n1,2\n3,4\n", "a,b,c,d,e,f\n1,2,3,4,5,6\n"],
        &["a\nb,c\n", "a,b\n1,2\n3\n", "a,b,c\n1,2,3\n\"1,2\",3\n"],
    );
}

#[test]
fn scriptsize_c_variables_are_declared_before_use() {
    let def_use = r#"forall <expr> expr in start: forall <id> use_id in expr:
  exists <declaration> decl="int {<id> def_id}[ = <expr>];" in start:
    (level("GE", "<block>", decl, expr) and (before(decl, expr) and (= use_id def_id)))"#;
    assert_verdicts(
        "scriptsizec.bnf",
        def_use,
        &[
            "{int a;a = 1;}",
            "{int a = 2;{int b = a;b;}}",
            "{int x;if(x < 1) {x = 2;}}",
            ";",
        ],
        &["{a = 1;}", "{a;int a;}", "{{int a;}a;}", "{int a;b = a;}"],
    );
}

#[test]
fn scriptsize_c_variables_are_not_redefined() {
    let no_redef = r#"forall <declaration> declaration="int {<id> def_id}[ = <expr>];" in start:
  forall <declaration> other_declaration="int {<id> other_def_id}[ = <expr>];" in start:
    (same_position(declaration, other_declaration) xor not (= def_id other_def_id))"#;
    assert_verdicts(
        "scriptsizec.bnf",
        no_redef,
        &[
            "{int a;int b;}",
            "{int a = 1;int b = a;}",
            "{int a;}",
            "{a = b;}",
        ],
        &[
            "{int a;int a;}",
            "{int a = 1;int b;int a = 2;}",
            "{int a;{int a;}}",
        ],
    );
}

#[test]
fn rest_title_underlines_are_long_enough() {
    let core = r#"forall <section-title> title="{<title-text> titletxt}\n{<underline> underline}" in start:
  (>= (str.len underline) (str.len titletxt))"#;
    let simplified =
        "str.len(<section-title>.<underline>) >= str.len(<section-title>.<title-text>)";
    let valid = [
        "Title\n=====\n",
        "Ab\n---\n",
        "T\n=\n\nsome text.\n",
        "Ok\n======\n",
    ];
    let invalid = [
        "Title\n===\n",
        "Long title\n-\n",
        "Ok\n==\n\nTitle two\n====\n",
    ];
    assert_verdicts("rest.bnf", core, &valid, &invalid);
    assert_verdicts("rest.bnf", simplified, &valid, &invalid);
    // ISLa's own form (LENGTH_UNDERLINE in rest.py), with its width predicates: the
    // lengths are read into int variables by binding.
    let isla = r#"forall <section-title> title="{<title-text> titletxt}\n{<underline> underline}" in start:
  exists int title_length:
    exists int underline_length:
      ((> (str.to.int title_length) 0) and
      ((<= (str.to.int title_length) (str.to.int underline_length)) and
      (ljust_crop(titletxt, title_length, " ") and
       extend_crop(underline, underline_length))))"#;
    assert_verdicts("rest.bnf", isla, &valid, &invalid);
}

#[test]
fn rest_references_are_defined_and_lists_numbered() {
    // ISLa's DEF_LINK_TARGETS (rest.py), verbatim.
    let def_link = r#"(forall <internal_reference> ref="<presep>{<id> use_id}_<postsep>" in start:
   exists <labeled_paragraph> labeled_par_1=".. _{<id> def_id}:\n\n<paragraph>" in start:
     (= use_id def_id) and
 forall <internal_reference_nospace> fref="{<id> use_id}_<postsep>" in start:
   exists <labeled_paragraph> labeled_par_2=".. _{<id> def_id}:\n\n<paragraph>" in start:
     (= use_id def_id))"#;
    assert_verdicts(
        "rest.bnf",
        def_link,
        &[
            ".. _a:\n\nsome text.\n\nsee a_ here.\n",
            "a_ first.\n\n.. _a:\n\ntext.\n",
            "no references.\n",
        ],
        &[
            "see a_ here.\n",
            ".. _a:\n\nsome text.\n\nsee b_ here.\n",
            "b_ first.\n\n.. _a:\n\ntext.\n",
        ],
    );
    // specs/rest.bnf's own constraints, numbering included: each item after another
    // in a list is numbered one more, and an item followed by another is numbered
    // from 1 on.
    assert_spec_verdicts(
        "rest.bnf",
        &[
            "1. one\n2. two\n3. three\n",
            "7. seven\n8. eight\n",
            "0. alone\n",
            "1. a\n2. b\n\n1. again\n",
        ],
        &[
            "1. one\n3. three\n",
            "1. one\n2. two\n2. two\n",
            "0. zero\n1. one\n",
            "2. b\n1. a\n",
        ],
    );
}

#[test]
fn rest_labels_are_not_redefined() {
    let no_redef = r#"forall <label> label_1=".. _{<id> id_1}:" in start:
  forall <label> label_2=".. _{<id> id_2}:" in start:
    (same_position(label_1,label_2) or not (= id_1 id_2))"#;
    assert_verdicts(
        "rest.bnf",
        no_redef,
        &[
            ".. _a:\n\nsome text.\n",
            ".. _a:\n\nsome text.\n\n.. _b:\n\nmore text.\n",
            "plain text.\n",
        ],
        &[
            ".. _a:\n\nsome text.\n\n.. _a:\n\nmore text.\n",
            ".. _x:\n\none x.\n\n.. _y:\n\ntwo y.\n\n.. _x:\n\nthree z.\n",
            ".. _q:\n\nab.\n\n.. _q:\n\ncd.\n",
        ],
    );
}

mod tar {
    use super::*;
    use thicket_constraint::TreeView;
    use thicket_gen::{GenConfig, Generator};

    const CHECKSUM: &str = "forall <header> header in start:
  forall <checksum> checksum in header:
    tar_checksum(header, checksum)";
    const CHECKSUM_SIMPLIFIED: &str = "tar_checksum(<header>, <header>.<checksum>)";
    /// The size field gives the number of content characters (ISLa's "length" property).
    const SIZE: &str = "forall <entry> entry:
  exists int size: (octal_to_decimal(entry.<header>.<file-size>, size) and
    count(entry.<content>, \"<character>\", size))";

    fn ranges(spec: &Spec, bytes: &[u8], symbol: &str) -> Vec<std::ops::Range<usize>> {
        let parser = Parser::new(&spec.grammar, ParseConfig::default()).unwrap();
        let tree = parser.parse(bytes).unwrap().tree();
        let view = TreeView::new(&tree, &spec.grammar);
        let symbol = spec.grammar.symbol(symbol).unwrap();
        view.nodes_of(symbol, tree.root())
            .iter()
            .map(|&i| tree.text_range(thicket_tree::NodeId::from_index(i as usize)))
            .collect()
    }

    /// Writes the right size into every entry, then the right checksum into every header.
    fn repair(spec: &Spec, bytes: &mut [u8]) {
        let entries = ranges(spec, bytes, "entry");
        for entry in entries {
            // Header fields: name 100, mode 8, uid 8, gid 8, then size 12.
            let size_at = entry.start + 124;
            let content = &bytes[entry.start + 512..entry.end];
            let n = content.iter().take_while(|&&b| b != 0).count();
            bytes[size_at..size_at + 12].copy_from_slice(format!("{n:011o} ").as_bytes());
        }
        for header in ranges(spec, bytes, "header") {
            write_checksum(bytes, header.start);
        }
    }

    /// Writes the right checksum into the 512-byte header at `start`, ISLa's way
    /// (six octal digits, NUL, space).
    fn write_checksum(bytes: &mut [u8], start: usize) {
        let field = start + 148..start + 156;
        let sum: u32 = (start..start + 512)
            .map(|i| {
                if field.contains(&i) {
                    32
                } else {
                    bytes[i] as u32
                }
            })
            .sum();
        bytes[field].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    }

    fn verdicts(spec: &Spec, bytes: &[u8]) -> [bool; 3] {
        let parser = Parser::new(&spec.grammar, ParseConfig::default()).unwrap();
        let tree = parser.parse(bytes).unwrap().tree();
        [CHECKSUM, CHECKSUM_SIMPLIFIED, SIZE]
            .map(|c| checker(&spec.grammar, c).check(&tree).is_empty())
    }

    /// The tar crate, an independent reader, accepts the archive (it verifies checksums).
    fn tar_crate_reads(bytes: &[u8]) -> bool {
        let mut archive = ::tar::Archive::new(bytes);
        let Ok(entries) = archive.entries() else {
            return false;
        };
        entries.count() > 0
            && ::tar::Archive::new(bytes)
                .entries()
                .unwrap()
                .all(|e| e.is_ok())
    }

    #[test]
    fn checksums_and_sizes() {
        let spec = spec("tar.bnf");
        let generator = Generator::new(&spec.grammar, GenConfig::default()).unwrap();
        for seed in 0..4 {
            let (tree, _) = generator.generate_tree(&mut Generator::rng_for(7, seed));
            let generated = tree.bytes().to_vec();
            // As generated, size and checksum are arbitrary octal numbers.
            assert_eq!(
                verdicts(&spec, &generated),
                [false, false, false],
                "seed {seed}"
            );
            let mut valid = generated.clone();
            repair(&spec, &mut valid);
            assert_eq!(verdicts(&spec, &valid), [true, true, true], "seed {seed}");
            assert!(tar_crate_reads(&valid), "seed {seed}");
            // A changed name breaks the checksum only.
            let mut renamed = valid.clone();
            renamed[0] = if renamed[0] == b'a' { b'b' } else { b'a' };
            assert_eq!(
                verdicts(&spec, &renamed),
                [false, false, true],
                "seed {seed}"
            );
            assert!(!tar_crate_reads(&renamed), "seed {seed}");
            // A wrong size with a right checksum breaks the size only.
            let mut resized = valid.clone();
            resized[124..136].copy_from_slice(b"00000001000 ");
            write_checksum(&mut resized, 0);
            assert_eq!(
                verdicts(&spec, &resized),
                [true, true, false],
                "seed {seed}"
            );
        }
    }
}

#[test]
fn a_violation_shows_its_formula_and_facts_with_their_parentheses() {
    // The text of a parenthesised formula or term ended before its `)`: `(count(...) or
    // false` and `(str.len(a) > 3`.
    let spec = spec("expr.fan");
    let parser = Parser::new(&spec.grammar, ParseConfig::default()).unwrap();
    let tree = parser.parse(b"1+2").unwrap().tree();
    for (constraint, first, fact) in [
        (
            "(count(start, \"<MultExpr>\", 5) or false)",
            "(count(start, \"<MultExpr>\", 5) or false)\n",
            "\n  count(start, \"<MultExpr>\", 5) at test.isla:1:2 is false",
        ),
        (
            "forall <DecDigits> d: (str.len(d) > 3)",
            "forall <DecDigits> d: (str.len(d) > 3)\n",
            "\n  (str.len(d) > 3) at test.isla:1:23 is false: 1 > 3\n",
        ),
        (
            "((count(start, \"<MultExpr>\", 5)) or (false)) and true",
            "((count(start, \"<MultExpr>\", 5)) or (false)) and true\n",
            "\n  (false) at test.isla:1:37 is false",
        ),
    ] {
        let checker = checker(&spec.grammar, constraint);
        let violations = checker.explain(&tree);
        assert_eq!(violations.len(), 1, "{constraint}");
        let text = checker.render(&violations[0], &tree);
        let head = text.lines().next().unwrap();
        assert!(head.ends_with(first.trim_end()), "{constraint}: {text}");
        assert!(text.contains(fact), "{constraint}: {text}");
    }
}
