//! Digests of the trees the parser returns, for comparing parser versions: a change to
//! the parser's speed must leave every line unchanged. Shared by
//! `examples/tree_digest.rs` (prints them) and `tests/tree_digest.rs` (compares them
//! with `tests/tree_digest.expected`). The including crate declares `mod documents`
//! (the benchmark documents).
//!
//! Covers generated inputs of every bundled spec (each also damaged once, so rejection
//! messages count too), the benchmark documents, and small ambiguous, cyclic, empty and
//! recursive grammars (where *which* tree is returned is the parser's choice), with their
//! tree counts.

use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use thicket_gen::{ChoicePolicy, GenConfig, Generator};
use thicket_grammar::{Grammar, LoadOptions, load_spec_file, load_spec_text};
use thicket_parse::{ParseConfig, Parser};

/// Generated inputs per bundled spec in the committed digest (`tests/tree_digest.expected`).
pub const DEFAULT_COUNT: u64 = 200;

fn bundled(name: &str) -> Grammar {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../specs")
        .join(name);
    load_spec_file(&path, &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{}", e.render()))
        .grammar
}

/// A stable digest (FNV-1a, 64 bits) of a string.
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
}

fn digest(parser: &Parser<'_>, grammar: &Grammar, input: &[u8], hasher: &mut Fnv) {
    match parser.parse(input) {
        Ok(parsed) => {
            let tree = parsed.tree();
            assert_eq!(tree.bytes(), input, "unparse(parse(x)) == x");
            tree.to_sexp(grammar).hash(hasher);
        }
        Err(e) => e.to_string().hash(hasher),
    }
}

/// The digest lines for `count` generated inputs per bundled spec.
pub fn report(count: u64) -> String {
    use std::fmt::Write;
    let mut out = format!("count {count}\n");
    for spec in [
        "expr.fan",
        "json.fan",
        "csv.bnf",
        "url.fan",
        "xml.bnf",
        "markdown.fan",
        "scriptsizec.bnf",
        "rest.bnf",
        "tar.bnf",
    ] {
        let grammar = bundled(spec);
        // The inputs of the committed digest: Algorithm 2's uniform choices.
        let config = GenConfig {
            policy: ChoicePolicy::Uniform,
            ..GenConfig::default()
        };
        let generator = Generator::new(&grammar, config).unwrap();
        let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
        let mut hasher = Fnv(0xcbf2_9ce4_8422_2325);
        for i in 0..count {
            let (tree, _) = generator.generate_tree(&mut Generator::rng_for(5, i));
            digest(&parser, &grammar, tree.bytes(), &mut hasher);
            // A damaged input too, for rejections.
            let mut bad = tree.bytes().to_vec();
            if !bad.is_empty() {
                let at = (i as usize * 7919) % bad.len();
                bad[at] = bad[at].wrapping_add(1);
                digest(&parser, &grammar, &bad, &mut hasher);
            }
        }
        writeln!(out, "{spec}: {:016x}", hasher.finish()).unwrap();
    }
    for (name, spec, text) in [
        (
            "json 1M",
            "json.fan",
            crate::documents::json_document(1 << 20),
        ),
        ("csv 1M", "csv.bnf", crate::documents::csv_document(1 << 20)),
    ] {
        let grammar = bundled(spec);
        let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
        let mut hasher = Fnv(0xcbf2_9ce4_8422_2325);
        digest(&parser, &grammar, &text, &mut hasher);
        writeln!(out, "{name}: {:016x}", hasher.finish()).unwrap();
    }
    let small: &[(&str, &[&str])] = &[
        (
            "<start> ::= <a>\n<a> ::= <a> <a> | \"x\"",
            &["x", "xx", "xxx", "xxxxxxx"],
        ),
        ("<start> ::= <a>\n<a> ::= <a> | \"x\"", &["x"]),
        (
            "<start> ::= <a>\n<a> ::= <b> <a> | \"\"\n<b> ::= \"x\" | \"\"",
            &["", "x", "xx", "xxxxx"],
        ),
        (
            "<start> ::= <a>\n<a> ::= <b> \"x\" | \"y\"\n<b> ::= <c> <a>\n<c> ::= \"\"",
            &["y", "yx", "yxxx"],
        ),
        (
            "<start> ::= (\"a\" | \"aa\")* \"b\"?",
            &["", "a", "aaaa", "aaab", "aaaaaaaaaab"],
        ),
        ("<start> ::= <e>*\n<e> ::= \"\" | \"q\"", &["", "q", "qqq"]),
        (
            "<start> ::= <l>\n<l> ::= \"x\" <l> | \"\"",
            &["", "x", "xxxxxxxx"],
        ),
        (
            "<start> ::= <a>\n<a> ::= <e> <a> \"y\" | \"x\"\n<e> ::= \"\"",
            &["x", "xy", "xyyy"],
        ),
        (
            "<start> ::= <add>\n<add> ::= <add> \"+\" <add> | <add> \"*\" <add> | <n>\n<n> ::= r\"[0-9]+\" | r\"[0-9]\"+",
            &["1", "12", "1+2*3+4", "12*34+5*6+7"],
        ),
        (
            "<start> ::= <s>\n<s> ::= <s> <s> | \"(\" <s> \")\" | \"\" | <t>\n<t> ::= r\"a*\" | \"a\" <t>",
            &["", "a", "()", "(a)(aa)", "((a)a)"],
        ),
        (
            "<start> ::= <list>\n<list> ::= <item> <list> | \"\"\n<item> ::= \"a\" | \"b\" <start> \"c\"",
            &["", "a", "aaba", "abaaca", "abbacacaa"],
        ),
        (
            "<start> ::= <r>\n<r> ::= \"a\" <r> | \"a\" <r> \"b\" | \"\"",
            &["aab", "aaabb", "aaaaab"],
        ),
        (
            "<start> ::= (<x> | <y>){2,5} <z>?\n<x> ::= \"a\" | \"\"\n<y> ::= \"a\"+ \"b\"?\n<z> ::= <x>* <y>",
            &["a", "aa", "ab", "aaba", "abab"],
        ),
    ];
    for (i, (spec, inputs)) in small.iter().enumerate() {
        let grammar = load_spec_text("t.fan", spec.as_bytes()).unwrap();
        let parser = Parser::new(&grammar, ParseConfig::default()).unwrap();
        let mut hasher = Fnv(0xcbf2_9ce4_8422_2325);
        let mut counts = Vec::new();
        for input in *inputs {
            digest(&parser, &grammar, input.as_bytes(), &mut hasher);
            if let Ok(parsed) = parser.parse(input.as_bytes()) {
                counts.push(parsed.count_trees().to_string());
                if let Ok((trees, _)) = parsed.trees(20) {
                    for tree in trees {
                        tree.to_sexp(&grammar).hash(&mut hasher);
                    }
                }
            }
        }
        writeln!(
            out,
            "small {i}: {:016x} counts {}",
            hasher.finish(),
            counts.join(",")
        )
        .unwrap();
    }
    out
}
