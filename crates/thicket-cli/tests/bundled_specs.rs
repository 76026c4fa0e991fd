//! The bundled specs in `specs/` against real, independent parsers.
//!
//! Each test runs the built `thicket` binary to generate inputs from one bundled spec
//! with a fixed seed and checks every input with a parser that knows nothing about
//! thicket: serde_json, the `csv` crate, the `url` crate (WHATWG), quick-xml,
//! the `tar` crate, pulldown-cmark and lang-c. Where the real parser is lenient, the
//! test also compares what it read with what the derivation tree (`--format json`)
//! says was generated, so that a grammar bug cannot hide behind leniency. expr.fan gets a
//! small recursive-descent recognizer and rest.bnf (no reST parser in Rust) a
//! line-level check, and Docutils (Python, `judges/rest_docutils.py`) on the inputs
//! `thicket check` calls valid; csv.bnf's inputs are read by Python's csv module too
//! (`judges/csv_python.py`). Inputs come from `-0` (split on NUL), from `--format json` when the
//! tree is needed, and from `-o DIR` for tar, whose inputs contain NUL bytes.
//! Another test checks that every bundled spec lints clean.
//!
//! What the grammar alone cannot give (matching XML tag names, distinct attribute
//! names, equal CSV column counts, tar checksums and sizes) is left to constraints;
//! the tests check that those parts are well-formed and, where needed, repair them the
//! way a constraint would before handing the input to the parser.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod judges;

const BIN: &str = env!("CARGO_BIN_EXE_thicket");
/// The fixed seed; `THICKET_BUNDLED_SEED` overrides it to explore other inputs.
const SEED: &str = "20240917";
/// Inputs per spec.
const N: usize = 10_000;
/// Inputs for scriptsizec.bnf: lang-c's parser needs about 2 ms per program in a debug
/// build, so 10,000 would make it the slowest test by far.
const N_C: usize = 5_000;

const BUNDLED: [&str; 10] = [
    "csv.bnf",
    "expr.fan",
    "javascript.fan",
    "json.fan",
    "markdown.fan",
    "rest.bnf",
    "scriptsizec.bnf",
    "tar.bnf",
    "url.fan",
    "xml.bnf",
];

// ---------------------------------------------------------------------------------------
// Running the binary

fn seed() -> String {
    std::env::var("THICKET_BUNDLED_SEED").unwrap_or_else(|_| SEED.to_string())
}

fn spec_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../specs")
        .join(name)
}

fn thicket(args: &[&str]) -> Vec<u8> {
    let out = Command::new(BIN)
        .args(args)
        .output()
        .expect("the thicket binary runs");
    assert!(
        out.status.success(),
        "thicket {args:?} failed with {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `n` inputs, separated with `-0` on stdout.
fn generate_nul(spec: &str, n: usize) -> Vec<Vec<u8>> {
    let path = spec_path(spec);
    let n_arg = n.to_string();
    let seed = seed();
    let out = thicket(&[
        "generate",
        path.to_str().unwrap(),
        // The grammar's own output, judged by real parsers; solving the constraints
        // is tested in thicket-solve.
        "--no-constraints",
        "-n",
        &n_arg,
        "--seed",
        &seed,
        "-0",
    ]);
    let body = out.strip_suffix(b"\0").unwrap_or(&out);
    let inputs: Vec<Vec<u8>> = body.split(|&b| b == 0).map(<[u8]>::to_vec).collect();
    assert_eq!(
        inputs.len(),
        n,
        "{spec}: wrong number of NUL-separated inputs"
    );
    inputs
}

/// `n` inputs, each written to its own file with `-o` (for binary inputs that contain NUL).
fn generate_files(spec: &str, n: usize) -> Vec<Vec<u8>> {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("work");
    let _ = std::fs::remove_dir_all(&dir);
    let path = spec_path(spec);
    let n_arg = n.to_string();
    let seed = seed();
    thicket(&[
        "generate",
        path.to_str().unwrap(),
        // The grammar's own output, judged by real parsers; solving the constraints
        // is tested in thicket-solve.
        "--no-constraints",
        "-n",
        &n_arg,
        "--seed",
        &seed,
        "-o",
        dir.to_str().unwrap(),
    ]);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("output directory")
        .map(|e| e.expect("directory entry").path())
        .collect();
    files.sort();
    let inputs: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(f).expect("generated file"))
        .collect();
    std::fs::remove_dir_all(&dir).expect("remove output directory");
    assert_eq!(inputs.len(), n, "{spec}: wrong number of files");
    inputs
}

/// One input with its derivation tree.
struct Sample {
    input: Vec<u8>,
    tree: Node,
}

impl Sample {
    fn text(&self) -> &str {
        std::str::from_utf8(&self.input).expect("UTF-8 input")
    }
}

/// `n` inputs with their trees (`--format json`).
fn generate_trees(spec: &str, n: usize) -> Vec<Sample> {
    let path = spec_path(spec);
    let rules = rule_names(&path);
    let n_arg = n.to_string();
    let seed = seed();
    let out = thicket(&[
        "generate",
        path.to_str().unwrap(),
        // The grammar's own output, judged by real parsers; solving the constraints
        // is tested in thicket-solve.
        "--no-constraints",
        "-n",
        &n_arg,
        "--seed",
        &seed,
        "--format",
        "json",
    ]);
    let samples: Vec<Sample> = out
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            let line: JsonLine = serde_json::from_slice(line).expect("a JSON line");
            let input = match (line.input, line.input_hex) {
                (Some(s), _) => s.into_bytes(),
                (None, Some(h)) => unhex(&h),
                (None, None) => panic!("{spec}: a JSON line without input"),
            };
            let tree = Node::from_raw(line.tree, &rules);
            assert_eq!(
                tree.text().as_bytes(),
                input.as_slice(),
                "{spec}: tree text is not the input"
            );
            Sample { input, tree }
        })
        .collect();
    assert_eq!(samples.len(), n, "{spec}: wrong number of JSON lines");
    samples
}

fn unhex(h: &str) -> Vec<u8> {
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).expect("hex"))
        .collect()
}

/// The rule names a spec defines (`<name> ::=` at the start of a line).
fn rule_names(path: &Path) -> HashSet<String> {
    let text = std::fs::read_to_string(path).expect("spec file");
    text.lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let end = line.find('>')?;
            (line.starts_with('<') && line[end + 1..].trim_start().starts_with("::="))
                .then(|| line[..=end].to_string())
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Derivation trees in the fuzzingbook form ["<name>", [children]]

/// One line of `--format json`.
#[derive(serde::Deserialize)]
struct JsonLine {
    input: Option<String>,
    input_hex: Option<String>,
    tree: RawNode,
}

/// A tree as written: `[label, [children]]`.
#[derive(serde::Deserialize)]
struct RawNode(String, Vec<RawNode>);

#[derive(Debug)]
struct Node {
    label: String,
    rule: bool,
    children: Vec<Node>,
}

impl Node {
    /// A label is a rule node if it names a rule of the spec; terminals are `["text", []]`.
    fn from_raw(raw: RawNode, rules: &HashSet<String>) -> Node {
        let RawNode(label, raw_children) = raw;
        let children: Vec<Node> = raw_children
            .into_iter()
            .map(|c| Node::from_raw(c, rules))
            .collect();
        let rule = rules.contains(&label);
        assert!(
            rule || children.is_empty(),
            "terminal {label:?} has children"
        );
        Node {
            label,
            rule,
            children,
        }
    }

    fn is(&self, name: &str) -> bool {
        self.rule && self.label == name
    }

    fn text(&self) -> String {
        let mut s = String::new();
        self.push_text(&mut s);
        s
    }

    fn push_text(&self, out: &mut String) {
        if self.rule {
            for c in &self.children {
                c.push_text(out);
            }
        } else {
            out.push_str(&self.label);
        }
    }

    /// All nodes of rule `name`, in preorder (document order).
    fn all<'a>(&'a self, name: &str) -> Vec<&'a Node> {
        let mut out = Vec::new();
        self.collect(name, &mut out);
        out
    }

    fn collect<'a>(&'a self, name: &str, out: &mut Vec<&'a Node>) {
        if self.is(name) {
            out.push(self);
        }
        for c in &self.children {
            c.collect(name, out);
        }
    }

    fn count(&self, name: &str) -> usize {
        self.all(name).len()
    }

    /// The first direct child of rule `name`.
    fn child(&self, name: &str) -> Option<&Node> {
        self.children.iter().find(|c| c.is(name))
    }
}

/// Fails with the seed, the failure count and the first few failures.
fn assert_all_passed(spec: &str, n: usize, failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{spec} (seed {}): {} of {n} failed, e.g. {:#?}",
        seed(),
        failures.len(),
        &failures[..failures.len().min(3)]
    );
}

// ---------------------------------------------------------------------------------------
// lint

#[test]
fn every_bundled_spec_lints_clean() {
    let mut in_dir: Vec<String> = std::fs::read_dir(spec_path(""))
        .expect("specs directory")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".fan") || n.ends_with(".bnf"))
        .collect();
    in_dir.sort();
    assert_eq!(
        in_dir, BUNDLED,
        "a bundled spec has no test here (or is missing)"
    );
    for spec in BUNDLED {
        let path = spec_path(spec);
        let out = Command::new(BIN)
            .args(["lint", path.to_str().unwrap()])
            .output()
            .expect("thicket lint runs");
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{spec}: lint failed:\n{all}");
        assert!(
            !all.to_lowercase().contains("warning"),
            "{spec}: lint warns:\n{all}"
        );
        assert!(all.contains("clean"), "{spec}: lint is not clean:\n{all}");
    }
}

// ---------------------------------------------------------------------------------------
// expr.fan: a recursive-descent recognizer for the expression language

struct ExprParser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl ExprParser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn add(&mut self) -> Result<(), String> {
        self.mult()?;
        while matches!(self.peek(), Some(b'+' | b'-')) {
            self.pos += 1;
            self.mult()?;
        }
        Ok(())
    }

    fn mult(&mut self) -> Result<(), String> {
        self.unary()?;
        while matches!(self.peek(), Some(b'*' | b'/' | b'%')) {
            self.pos += 1;
            self.unary()?;
        }
        Ok(())
    }

    /// `+`, `-`, `++` and `--` prefixes are all sequences of `+`/`-` characters.
    fn unary(&mut self) -> Result<(), String> {
        match self.peek() {
            Some(b'+' | b'-') => {
                self.pos += 1;
                self.unary()
            }
            Some(b'(') => {
                self.pos += 1;
                self.add()?;
                if self.peek() != Some(b')') {
                    return Err(format!("expected ')' at {}", self.pos));
                }
                self.pos += 1;
                Ok(())
            }
            Some(b'x' | b'y' | b'z') => {
                self.pos += 1;
                Ok(())
            }
            Some(b'0'..=b'9') => {
                while matches!(self.peek(), Some(b'0'..=b'9')) {
                    self.pos += 1;
                }
                Ok(())
            }
            other => Err(format!(
                "unexpected {:?} at {}",
                other.map(char::from),
                self.pos
            )),
        }
    }
}

fn check_expr(s: &[u8]) -> Result<(), String> {
    if let Some(bad) = s.iter().find(|b| !b"0123456789xyz+-*/%()".contains(b)) {
        return Err(format!("character {:?} not allowed", char::from(*bad)));
    }
    let mut depth = 0i64;
    for &b in s {
        depth += i64::from(b == b'(') - i64::from(b == b')');
        if depth < 0 {
            return Err("')' without '('".into());
        }
    }
    if depth != 0 {
        return Err("unbalanced parentheses".into());
    }
    let mut p = ExprParser { s, pos: 0 };
    p.add()?;
    if p.pos != s.len() {
        return Err(format!("trailing input at {}", p.pos));
    }
    Ok(())
}

#[test]
fn expr_outputs_are_well_formed_expressions() {
    assert!(check_expr(b"-(x+1)*--y%+3").is_ok());
    assert!(
        check_expr(b"(x+1").is_err() && check_expr(b"x+").is_err() && check_expr(b"x y").is_err()
    );
    let inputs = generate_nul("expr.fan", N);
    let mut failures = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        if let Err(e) = check_expr(input) {
            failures.push(format!("#{i} {:?}: {e}", String::from_utf8_lossy(input)));
        }
    }
    assert_all_passed("expr.fan", N, &failures);
    assert!(
        inputs.iter().any(|i| i.contains(&b'(')),
        "no parentheses at all"
    );
}

// ---------------------------------------------------------------------------------------
// json.fan: serde_json

#[test]
fn json_outputs_parse_with_serde_json() {
    let inputs = generate_nul("json.fan", N);
    let mut failures = Vec::new();
    let (mut containers, mut escapes, mut exponents) = (0, 0, 0);
    for (i, input) in inputs.iter().enumerate() {
        match serde_json::from_slice::<Value>(input) {
            Ok(v) => containers += usize::from(v.is_array() || v.is_object()),
            Err(e) => failures.push(format!("#{i} {:?}: {e}", String::from_utf8_lossy(input))),
        }
        escapes += usize::from(input.windows(2).any(|w| w == b"\\u"));
        exponents += usize::from(input.iter().any(|&b| b == b'e' || b == b'E'));
    }
    assert_all_passed("json.fan", N, &failures);
    assert!(
        containers > N / 10 && escapes > N / 100 && exponents > N / 100,
        "degenerate output: {containers} containers, {escapes} \\u escapes, {exponents} exponents"
    );
    // `-0` and `--format json` agree on the inputs.
    let with_trees = generate_trees("json.fan", 500);
    for (i, s) in with_trees.iter().enumerate() {
        assert_eq!(
            s.input, inputs[i],
            "input #{i} differs between -0 and --format json"
        );
    }
}

// ---------------------------------------------------------------------------------------
// csv.bnf: the csv crate, compared field by field with the tree

/// The value of a `<raw-field>`: unquoted as is, quoted without the quotes and with `""`
/// read as `"`.
fn field_value(raw: &Node) -> String {
    let text = raw.text();
    if raw.child("<quoted-field>").is_some() {
        text[1..text.len() - 1].replace("\"\"", "\"")
    } else {
        text
    }
}

fn read_csv(input: &[u8], flexible: bool) -> Result<Vec<Vec<String>>, csv::Error> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(flexible)
        .from_reader(input);
    reader
        .byte_records()
        .map(|r| {
            r.map(|rec| {
                rec.iter()
                    .map(|f| String::from_utf8(f.to_vec()).expect("UTF-8 field"))
                    .collect()
            })
        })
        .collect()
}

#[test]
fn csv_outputs_read_back_field_by_field() {
    let samples = generate_trees("csv.bnf", N);
    let mut failures = Vec::new();
    let mut rectangular = 0;
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    // What Python's csv should read: every record, an empty line as a record of none.
    let mut for_python = Vec::new();
    for (i, s) in samples.iter().enumerate() {
        let records: Vec<Vec<String>> = s
            .tree
            .all("<csv-record>")
            .iter()
            .map(|rec| {
                let fields = rec.all("<raw-field>");
                if fields.len() == 1 && fields[0].text().is_empty() {
                    return Vec::new();
                }
                fields.iter().map(|f| field_value(f)).collect()
            })
            .collect();
        // The grammar alone writes empty lines (a record that is one empty unquoted
        // field), which the csv crate skips; the spec's constraint rules them out.
        let expected: Vec<Vec<String>> =
            records.iter().filter(|r| !r.is_empty()).cloned().collect();
        let path = dir.path().join(format!("{i}.csv"));
        std::fs::write(&path, &s.input).unwrap();
        paths.push(path);
        for_python.push(records);
        match read_csv(&s.input, true) {
            Ok(records) if records == expected => {}
            Ok(records) => failures.push(format!(
                "#{i} {:?}: read {records:?}, expected {expected:?}",
                s.text()
            )),
            Err(e) => failures.push(format!("#{i} {:?}: {e}", s.text())),
        }
        // Non-flexible reading accepts exactly the files whose records all have as many
        // fields as the header (the grammar cannot ensure that; ISLa's count constraint
        // does).
        let columns: HashSet<usize> = expected.iter().map(Vec::len).collect();
        let strict = read_csv(&s.input, false);
        if columns.len() <= 1 {
            rectangular += 1;
            if let Err(e) = strict {
                failures.push(format!("#{i} {:?}: non-flexible reader: {e}", s.text()));
            }
        } else if !matches!(
            strict.as_ref().map_err(csv::Error::kind),
            Err(csv::ErrorKind::UnequalLengths { .. })
        ) {
            failures.push(format!(
                "#{i} {:?}: ragged file not reported as such: {strict:?}",
                s.text()
            ));
        }
    }
    if let Some(python) = judges::python_csv(&paths) {
        for (i, (read, expected)) in python.iter().zip(&for_python).enumerate() {
            if read.as_ref() != Ok(expected) {
                failures.push(format!(
                    "#{i} {:?}: Python's csv read {read:?}, expected {expected:?}",
                    samples[i].text()
                ));
            }
        }
    }
    assert_all_passed("csv.bnf", N, &failures);
    // Enough files exercise the strict reader (rows of equal length are up to chance).
    assert!(rectangular > N / 10, "only {rectangular} rectangular files");
}

// ---------------------------------------------------------------------------------------
// url.fan: url::Url::parse (WHATWG), compared part by part with the tree

fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 3 <= b.len() && b[i + 1..i + 3].iter().all(u8::is_ascii_hexdigit) {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).expect("ASCII");
            out.push(u8::from_str_radix(hex, 16).expect("hex digits"));
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

fn check_url(s: &Sample) -> Result<(), String> {
    let text = s.text();
    let url = url::Url::parse(text).map_err(|e| format!("rejected: {e}"))?;
    let top = &s.tree.children[0];
    let special = top.is("<special_uri>");
    let scheme = top
        .child("<scheme>")
        .or_else(|| top.child("<special_scheme>"))
        .ok_or("no scheme")?
        .text();
    if url.scheme() != scheme.to_ascii_lowercase() {
        return Err(format!("scheme {:?}", url.scheme()));
    }
    let authority = top
        .child("<hier_part>")
        .and_then(|h| h.child("<authority>"))
        .or(if special { Some(top) } else { None });
    if let Some(auth) = authority {
        if let Some(port) = auth.child("<port>") {
            let digits = port.text();
            let value: Option<u16> = if digits.is_empty() {
                None
            } else {
                Some(
                    digits
                        .parse()
                        .map_err(|_| format!("port {digits} out of range"))?,
                )
            };
            let default = match scheme.as_str() {
                "http" | "ws" => Some(80),
                "https" | "wss" => Some(443),
                "ftp" => Some(21),
                _ => None,
            };
            let expected = if special && value == default {
                None
            } else {
                value
            };
            if url.port() != expected {
                return Err(format!("port {:?}, expected {expected:?}", url.port()));
            }
        }
        if let Some(userinfo) = auth.child("<userinfo>") {
            let info = userinfo.text();
            let (user, password) = info.split_once(':').unwrap_or((&info, ""));
            if percent_decode(url.username()) != percent_decode(user)
                || percent_decode(url.password().unwrap_or("")) != percent_decode(password)
            {
                return Err(format!(
                    "userinfo {:?}:{:?}",
                    url.username(),
                    url.password()
                ));
            }
        }
        let host = auth
            .child("<host>")
            .or_else(|| auth.child("<special_host>"))
            .map(|h| &h.children[0]);
        match host {
            Some(h) if h.is("<IP_literal>") => {
                let t = h.text();
                let addr: std::net::Ipv6Addr = t[1..t.len() - 1]
                    .parse()
                    .map_err(|e| format!("std rejects the IPv6 address {t}: {e}"))?;
                if url.host() != Some(url::Host::Ipv6(addr)) {
                    return Err(format!("host {:?}, expected {addr}", url.host()));
                }
            }
            Some(h) if special && h.is("<IPv4address>") => {
                let addr: std::net::Ipv4Addr = h
                    .text()
                    .parse()
                    .map_err(|e| format!("std rejects {}: {e}", h.text()))?;
                if url.host() != Some(url::Host::Ipv4(addr)) {
                    return Err(format!("host {:?}, expected {addr}", url.host()));
                }
            }
            Some(h) => {
                let expected = if special {
                    h.text().to_ascii_lowercase()
                } else {
                    h.text()
                };
                if url.host_str() != Some(expected.as_str()) {
                    return Err(format!("host {:?}, expected {expected:?}", url.host_str()));
                }
            }
            None => {}
        }
    }
    if let Some(q) = top.child("<query>") {
        // WHATWG percent-encodes ' in the queries of special URLs.
        let expected = if special {
            q.text().replace('\'', "%27")
        } else {
            q.text()
        };
        if url.query() != Some(expected.as_str()) {
            return Err(format!("query {:?}, expected {expected:?}", url.query()));
        }
    }
    if let Some(f) = top.child("<fragment>")
        && url.fragment() != Some(f.text().as_str())
    {
        return Err(format!("fragment {:?}", url.fragment()));
    }
    Ok(())
}

#[test]
fn url_outputs_parse_with_the_url_crate() {
    let samples = generate_trees("url.fan", N);
    let mut failures = Vec::new();
    for (i, s) in samples.iter().enumerate() {
        if let Err(e) = check_url(s) {
            failures.push(format!("#{i} {:?}: {e}", s.text()));
        }
    }
    assert_all_passed("url.fan", N, &failures);
}

// ---------------------------------------------------------------------------------------
// xml.bnf: quick-xml, strict except for end-tag names

/// The tag name of an `<xml-tree>` node and whether it is an empty-element tag.
fn xml_tag(tree: &Node) -> (String, bool) {
    let (tag, empty) = match tree.child("<xml-open-tag>") {
        Some(t) => (t, false),
        None => (tree.child("<xml-openclose-tag>").expect("a tag"), true),
    };
    (tag.child("<id>").expect("tag name").text(), empty)
}

/// `(name, value)` of the attributes of a tag, in order, with the value after XML
/// attribute-value normalization (references resolved, TAB read as space).
fn xml_attributes(tag: &Node) -> Vec<(String, String)> {
    tag.all("<xml-attribute>")
        .into_iter()
        .filter(|a| a.child("<id>").is_some())
        .map(|a| {
            let value = a.child("<text>").expect("value").text();
            (
                a.child("<id>").unwrap().text(),
                xml_unescape(&value).replace('\t', " "),
            )
        })
        .collect()
}

fn xml_unescape(s: &str) -> String {
    s.replace("&quot;", "\"").replace("&#x27;", "'")
}

fn check_xml(s: &Sample) -> Result<(bool, bool), String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(s.text());
    {
        let config = reader.config_mut();
        config.check_end_names = false; // constraints' job
        config.trim_text(false);
        config.expand_empty_elements = false;
    }
    let trees = s.tree.all("<xml-tree>");
    let expected_tags: Vec<(String, bool)> = trees.iter().map(|t| xml_tag(t)).collect();
    let expected_attrs: Vec<Vec<(String, String)>> = trees
        .iter()
        .map(|t| {
            let tag = t
                .child("<xml-open-tag>")
                .or_else(|| t.child("<xml-openclose-tag>"))
                .unwrap();
            xml_attributes(tag)
        })
        .collect();
    let expected_ends: Vec<String> = s
        .tree
        .all("<xml-close-tag>")
        .iter()
        .map(|c| c.child("<id>").unwrap().text())
        .collect();
    let expected_chars: String = s
        .tree
        .all("<inner-xml-tree>")
        .iter()
        .filter_map(|i| i.child("<text>"))
        .map(|t| xml_unescape(&t.text()))
        .collect();

    let (mut tags, mut attrs, mut ends) = (Vec::new(), Vec::new(), Vec::new());
    let mut chars = String::new();
    let mut depth = 0usize;
    let mut roots = 0usize;
    let mut duplicate_attrs = false;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("at {}: {e}", reader.buffer_position()))?;
        let (start, empty) = match &event {
            Event::Start(e) => (Some(e), false),
            Event::Empty(e) => (Some(e), true),
            _ => (None, false),
        };
        if let Some(e) = start {
            if depth == 0 {
                roots += 1;
            }
            tags.push((e.name().as_ref().to_string(), empty));
            let mut list = Vec::new();
            let mut seen = HashSet::new();
            for a in e.attributes().with_checks(false) {
                let a = a.map_err(|err| format!("bad attribute: {err}"))?;
                let value = a
                    .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                    .map_err(|err| format!("bad attribute value: {err}"))?;
                let name = a.key.as_ref().to_string();
                duplicate_attrs |= !seen.insert(name.clone());
                list.push((name, value.into_owned()));
            }
            attrs.push(list);
            if !empty {
                depth += 1;
            }
        }
        match event {
            Event::End(e) => {
                ends.push(e.name().as_ref().to_string());
                depth = depth.checked_sub(1).ok_or("end tag without start tag")?;
            }
            Event::Text(t) => {
                if depth == 0 {
                    return Err("character data outside the root element".into());
                }
                chars.push_str(&t.xml10_content());
            }
            Event::GeneralRef(r) => {
                let resolved = match r
                    .resolve_char_ref()
                    .map_err(|e| format!("bad reference: {e}"))?
                {
                    Some(c) => c.to_string(),
                    None => {
                        let name = r.as_ref().to_string();
                        quick_xml::escape::resolve_predefined_entity(&name)
                            .ok_or(format!("unknown entity &{name};"))?
                            .to_string()
                    }
                };
                chars.push_str(&resolved);
            }
            Event::Eof => break,
            Event::Start(_) | Event::Empty(_) => {}
            other => return Err(format!("unexpected event {other:?}")),
        }
    }
    if depth != 0 || roots != 1 {
        return Err(format!("{roots} root elements, depth {depth} at the end"));
    }
    if tags != expected_tags {
        return Err(format!("tags {tags:?}, expected {expected_tags:?}"));
    }
    if attrs != expected_attrs {
        return Err(format!("attributes {attrs:?}, expected {expected_attrs:?}"));
    }
    if ends != expected_ends {
        return Err(format!("end tags {ends:?}, expected {expected_ends:?}"));
    }
    if chars != expected_chars {
        return Err(format!(
            "character data {chars:?}, expected {expected_chars:?}"
        ));
    }
    // Open and close tag names may differ: the balance constraint's job.
    let balanced = trees.iter().all(|t| {
        t.child("<xml-close-tag>")
            .is_none_or(|c| c.child("<id>").unwrap().text() == xml_tag(t).0)
    });
    Ok((balanced, duplicate_attrs))
}

#[test]
fn xml_outputs_parse_with_quick_xml() {
    let samples = generate_trees("xml.bnf", N);
    let mut failures = Vec::new();
    let (mut balanced, mut duplicates) = (0, 0);
    for (i, s) in samples.iter().enumerate() {
        match check_xml(s) {
            Ok((b, d)) => {
                balanced += usize::from(b);
                duplicates += usize::from(d);
            }
            Err(e) => failures.push(format!("#{i} {:?}: {e}", s.text())),
        }
    }
    assert_all_passed("xml.bnf", N, &failures);
    eprintln!(
        "xml.bnf: {balanced} of {N} with matching tag names, {duplicates} with a repeated attribute name"
    );
}

// ---------------------------------------------------------------------------------------
// tar.bnf: the ustar layout, then the tar crate on the archive with size and checksum
// repaired

/// POSIX ustar header fields: (rule in tar.bnf, offset, width).
const USTAR_FIELDS: [(&str, usize, usize); 17] = [
    ("<file-name>", 0, 100),
    ("<file-mode>", 100, 8),
    ("<uid>", 108, 8),
    ("<gid>", 116, 8),
    ("<file-size>", 124, 12),
    ("<mod-time>", 136, 12),
    ("<checksum>", 148, 8),
    ("<typeflag>", 156, 1),
    ("<linked-file-name>", 157, 100),
    ("ustar\0", 257, 6),
    ("00", 263, 2),
    ("<uname>", 265, 32),
    ("<gname>", 297, 32),
    ("<dev-maj>", 329, 8),
    ("<dev-min>", 337, 8),
    ("<prefix>", 345, 155),
    ("<header-padding>", 500, 12),
];

/// A text field: 1..=width characters from `first`/`rest`, then only NUL bytes.
fn padded_text(
    field: &[u8],
    first: fn(u8) -> bool,
    rest: fn(u8) -> bool,
) -> Result<Vec<u8>, String> {
    let len = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    let (text, pad) = field.split_at(len);
    if text.is_empty() || !first(text[0]) || !text[1..].iter().all(|&b| rest(b)) {
        return Err(format!("bad text {:?}", String::from_utf8_lossy(text)));
    }
    if pad.iter().any(|&b| b != 0) {
        return Err("text after the NUL padding".into());
    }
    Ok(text.to_vec())
}

/// A numeric field: `digits` octal digits followed by exactly `tail`.
fn octal_field(field: &[u8], digits: usize, tail: &[u8]) -> Result<u64, String> {
    let (d, t) = field.split_at(digits);
    if t != tail || !d.iter().all(|b| (b'0'..=b'7').contains(b)) {
        return Err(format!(
            "bad numeric field {:?}",
            String::from_utf8_lossy(field)
        ));
    }
    Ok(u64::from_str_radix(std::str::from_utf8(d).unwrap(), 8).unwrap())
}

fn is_portable(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"._-".contains(&b)
}

struct TarEntry {
    name: Vec<u8>,
    link: Option<Vec<u8>>,
    symlink: bool,
    uname: Vec<u8>,
    gname: Vec<u8>,
    content: Vec<u8>,
}

/// Walks an archive block by block: header, its one content block, ..., two zero blocks.
fn check_tar_layout(a: &[u8]) -> Result<Vec<TarEntry>, String> {
    if !a.len().is_multiple_of(512) {
        return Err(format!("length {} is not a multiple of 512", a.len()));
    }
    let mut entries = Vec::new();
    let mut p = 0;
    loop {
        let block = a
            .get(p..p + 512)
            .ok_or("archive ends without two zero blocks")?;
        if block.iter().all(|&b| b == 0) {
            if a.len() - p != 1024 || a[p..].iter().any(|&b| b != 0) {
                return Err(format!(
                    "the end-of-archive zero blocks at {p} are not the last 1024 bytes"
                ));
            }
            break;
        }
        let header = tar::Header::from_byte_slice(block);
        let u = header.as_ustar().ok_or("no ustar magic and version")?;
        let name = padded_text(
            &u.name,
            |b| b.is_ascii_alphanumeric() || b == b'_',
            is_portable,
        )?;
        let link = if u.linkname.iter().all(|&b| b == 0) {
            None
        } else {
            Some(padded_text(
                &u.linkname,
                |b| b.is_ascii_alphanumeric() || b == b'_',
                is_portable,
            )?)
        };
        let user_first = |b: u8| b.is_ascii_lowercase() || b == b'_';
        let user_rest =
            |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-';
        let uname = padded_text(&u.uname, user_first, user_rest)?;
        let gname = padded_text(&u.gname, user_first, user_rest)?;
        if uname.len() > 8 || gname.len() > 8 {
            return Err("user or group name longer than 8".into());
        }
        for f in [&u.mode, &u.uid, &u.gid, &u.dev_major, &u.dev_minor] {
            octal_field(f, 6, b" \0")?;
        }
        let size = octal_field(&u.size, 11, b" ")?;
        octal_field(&u.mtime, 11, b" ")?;
        let cksum = octal_field(&u.cksum, 6, b"\0 ")?;
        if !matches!(&u.typeflag, b"0" | b"2") {
            return Err(format!("typeflag {:?}", u.typeflag));
        }
        if u.prefix.iter().chain(&u.pad).any(|&b| b != 0) {
            return Err("prefix or padding not all NUL".into());
        }
        // The tar crate's own field parsers agree.
        let agree = header.size().ok() == Some(size)
            && header.cksum().ok() == u32::try_from(cksum).ok()
            && header.mode().is_ok()
            && header.uid().is_ok()
            && header.gid().is_ok()
            && header.mtime().is_ok()
            && matches!(header.device_major(), Ok(Some(_)))
            && matches!(header.device_minor(), Ok(Some(_)))
            && header.path_bytes().as_ref() == name.as_slice()
            && header.username_bytes() == Some(uname.as_slice())
            && header.groupname_bytes() == Some(gname.as_slice());
        if !agree {
            return Err(format!("the tar crate reads the header at {p} differently"));
        }
        let data = &a[p + 512..p + 1024];
        let len = data.iter().position(|&b| b == 0).unwrap_or(512);
        if len == 0
            || data[len..].iter().any(|&b| b != 0)
            || !data[..len]
                .iter()
                .all(|&b| (b' '..=b'~').contains(&b) || (b'\t'..=b'\r').contains(&b))
        {
            return Err(format!(
                "content block at {} is not 1-512 characters then NUL padding",
                p + 512
            ));
        }
        entries.push(TarEntry {
            name,
            link,
            symlink: u.typeflag == *b"2",
            uname,
            gname,
            content: data[..len].to_vec(),
        });
        p += 1024;
    }
    if entries.is_empty() {
        return Err("no entries".into());
    }
    Ok(entries)
}

/// Sets each header's size to its content length and its checksum to the right one
/// (what ISLa's size and checksum constraints do), so that a real reader can read it.
fn repair_tar(a: &[u8], entries: &[TarEntry]) -> Vec<u8> {
    let mut out = a.to_vec();
    for (k, e) in entries.iter().enumerate() {
        let h = &mut out[k * 1024..k * 1024 + 512];
        h[124..136].copy_from_slice(format!("{:011o} ", e.content.len()).as_bytes());
        h[148..156].copy_from_slice(b"        ");
        let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
        h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    }
    out
}

fn read_repaired_tar(a: &[u8], entries: &[TarEntry]) -> Result<(), String> {
    use std::io::Read;
    let repaired = repair_tar(a, entries);
    let mut archive = tar::Archive::new(repaired.as_slice());
    let mut n = 0;
    for (k, entry) in archive.entries().map_err(|e| e.to_string())?.enumerate() {
        let mut entry = entry.map_err(|e| format!("entry {k}: {e}"))?;
        let want = entries.get(k).ok_or("more entries than generated")?;
        let header = entry.header();
        let kind_ok = if want.symlink {
            header.entry_type() == tar::EntryType::Symlink
        } else {
            header.entry_type() == tar::EntryType::Regular
        };
        if !kind_ok
            || entry.path_bytes().as_ref() != want.name.as_slice()
            || entry.link_name_bytes().map(|l| l.into_owned()) != want.link
            || header.username_bytes() != Some(want.uname.as_slice())
            || header.groupname_bytes() != Some(want.gname.as_slice())
        {
            return Err(format!("entry {k}: header read differently"));
        }
        let mut content = Vec::new();
        entry
            .read_to_end(&mut content)
            .map_err(|e| format!("entry {k}: {e}"))?;
        if content != want.content {
            return Err(format!("entry {k}: content differs"));
        }
        n += 1;
    }
    if n != entries.len() {
        return Err(format!("read {n} entries of {}", entries.len()));
    }
    Ok(())
}

#[test]
fn tar_outputs_have_the_ustar_layout() {
    let inputs = generate_files("tar.bnf", N);
    let mut failures = Vec::new();
    for (i, a) in inputs.iter().enumerate() {
        let result = check_tar_layout(a).and_then(|entries| read_repaired_tar(a, &entries));
        if let Err(e) = result {
            failures.push(format!("#{i}: {e}"));
        }
    }
    assert_all_passed("tar.bnf", N, &failures);

    // The derivation trees put every field at its ustar offset and width.
    for (i, s) in generate_trees("tar.bnf", 200).iter().enumerate() {
        assert_eq!(
            s.input, inputs[i],
            "input #{i} differs between -o and --format json"
        );
        for header in s.tree.all("<header>") {
            assert_eq!(header.text().len(), 512, "#{i}: header is not 512 bytes");
            let mut offset = 0;
            let fields: Vec<(String, usize, usize)> = header
                .children
                .iter()
                .map(|c| {
                    let len = c.text().len();
                    offset += len;
                    (c.label.clone(), offset - len, len)
                })
                .collect();
            let expected: Vec<(String, usize, usize)> = USTAR_FIELDS
                .iter()
                .map(|&(n, o, w)| (n.to_string(), o, w))
                .collect();
            assert_eq!(fields, expected, "#{i}: header fields");
        }
        for content in s.tree.all("<content>") {
            assert_eq!(content.text().len(), 512, "#{i}: content is not one block");
        }
    }
}

// ---------------------------------------------------------------------------------------
// markdown.fan: pulldown-cmark, block and inline structure compared with the tree

#[derive(Debug, Default, PartialEq)]
struct MdShape {
    headings: Vec<usize>,
    rules: usize,
    block_quotes: usize,
    code_blocks: Vec<(String, String)>,
    /// Start number of each list (None for bullet lists).
    lists: Vec<Option<u64>>,
    items: usize,
    paragraphs_outside_lists: usize,
    emphasis: usize,
    strong: usize,
    code_spans: Vec<String>,
    links: Vec<(String, String)>,
    images: Vec<(String, String)>,
    hard_breaks: usize,
    soft_breaks: usize,
}

fn md_expected(tree: &Node) -> MdShape {
    let mut shape = MdShape::default();
    // Adjacent lists of the same kind and marker are one list (CommonMark §5.3).
    let mut previous_list: Option<String> = None;
    for block in tree.children.iter().filter(|c| c.is("<block>")) {
        let b = &block.children[0];
        let key = if b.is("<bullet_list>") {
            Some(b.children[0].label.clone())
        } else if b.is("<ordered_list>") {
            Some(b.children[1].label.clone())
        } else {
            None
        };
        if let Some(k) = &key {
            if previous_list.as_ref() != Some(k) {
                shape.lists.push(if b.is("<ordered_list>") {
                    Some(b.children[0].text().parse().expect("list number"))
                } else {
                    None
                });
            }
            shape.items += b.children.iter().filter(|c| c.is("<text_line>")).count();
        }
        previous_list = key;
    }
    shape.headings = tree
        .all("<heading_marker>")
        .iter()
        .map(|m| m.text().len())
        .collect();
    shape.rules = tree.count("<thematic_break>");
    let quotes = tree.all("<block_quote>");
    shape.block_quotes = quotes.len();
    shape.code_blocks = tree
        .all("<fenced_code>")
        .iter()
        .map(|f| {
            let info = f.child("<info_string>").map(Node::text).unwrap_or_default();
            let body: String = f.all("<code_line>").iter().map(|l| l.text()).collect();
            (info, body)
        })
        .collect();
    shape.paragraphs_outside_lists = tree.count("<paragraph>") + quotes.len();
    shape.emphasis = tree.count("<emphasis>");
    shape.strong = tree.count("<strong>");
    shape.code_spans = tree
        .all("<code_span>")
        .iter()
        .map(|c| {
            let t = c.text();
            t[1..t.len() - 1].to_string()
        })
        .collect();
    let target = |n: &&Node| {
        (
            n.child("<destination>").unwrap().text(),
            n.child("<link_title>")
                .map(|t| t.child("<words>").unwrap().text())
                .unwrap_or_default(),
        )
    };
    shape.links = tree.all("<link>").iter().map(target).collect();
    shape.images = tree.all("<image>").iter().map(target).collect();
    shape.hard_breaks = tree.count("<hard_break>");
    shape.soft_breaks = tree
        .all("<line_break>")
        .iter()
        .filter(|b| b.text() == "\n")
        .count()
        + quotes
            .iter()
            .map(|q| q.children.iter().filter(|c| c.is("<text_line>")).count() - 1)
            .sum::<usize>();
    shape
}

fn md_parsed(text: &str) -> MdShape {
    use pulldown_cmark::{CodeBlockKind, Event, Tag};
    let mut shape = MdShape::default();
    let mut list_depth = 0usize;
    let mut in_code: Option<usize> = None;
    for event in pulldown_cmark::Parser::new_ext(text, pulldown_cmark::Options::empty()) {
        match event {
            Event::Start(tag) => match tag {
                Tag::Heading { level, .. } => shape.headings.push(level as usize),
                Tag::BlockQuote(_) => shape.block_quotes += 1,
                Tag::CodeBlock(kind) => {
                    let info = match kind {
                        CodeBlockKind::Fenced(info) => info.to_string(),
                        CodeBlockKind::Indented => "(indented)".to_string(),
                    };
                    shape.code_blocks.push((info, String::new()));
                    in_code = Some(shape.code_blocks.len() - 1);
                }
                Tag::List(start) => {
                    shape.lists.push(start);
                    list_depth += 1;
                }
                Tag::Item => shape.items += 1,
                Tag::Paragraph if list_depth == 0 => shape.paragraphs_outside_lists += 1,
                Tag::Emphasis => shape.emphasis += 1,
                Tag::Strong => shape.strong += 1,
                Tag::Link {
                    dest_url, title, ..
                } => shape.links.push((dest_url.to_string(), title.to_string())),
                Tag::Image {
                    dest_url, title, ..
                } => shape.images.push((dest_url.to_string(), title.to_string())),
                _ => {}
            },
            Event::End(pulldown_cmark::TagEnd::List(_)) => list_depth -= 1,
            Event::End(pulldown_cmark::TagEnd::CodeBlock) => in_code = None,
            Event::Text(t) => {
                if let Some(k) = in_code {
                    shape.code_blocks[k].1.push_str(&t);
                }
            }
            Event::Code(c) => shape.code_spans.push(c.to_string()),
            Event::Rule => shape.rules += 1,
            Event::HardBreak => shape.hard_breaks += 1,
            Event::SoftBreak => shape.soft_breaks += 1,
            _ => {}
        }
    }
    shape
}

#[test]
fn markdown_outputs_have_the_generated_structure() {
    let samples = generate_trees("markdown.fan", N);
    let mut failures = Vec::new();
    for (i, s) in samples.iter().enumerate() {
        let expected = md_expected(&s.tree);
        let parsed = md_parsed(s.text());
        if parsed != expected {
            failures.push(format!(
                "#{i} {:?}: parsed {parsed:?}, expected {expected:?}",
                s.text()
            ));
        }
    }
    assert_all_passed("markdown.fan", N, &failures);
}

// ---------------------------------------------------------------------------------------
// scriptsizec.bnf: lang-c's C11 parser, with the statement as the body of main()

#[test]
fn scriptsizec_outputs_parse_as_c() {
    let inputs = generate_nul("scriptsizec.bnf", N_C);
    let config = lang_c::driver::Config::default();
    let mut failures = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let program = String::from_utf8(input.clone()).expect("UTF-8");
        // As ISLa's clang oracle does: the statement is the body of main().
        let source = format!("int main() {{\n{program}\n}}\n");
        if let Err(e) = lang_c::driver::parse_preprocessed(&config, source) {
            failures.push(format!("#{i} {program:?}: {e}"));
        }
    }
    assert_all_passed("scriptsizec.bnf", N_C, &failures);
}

// ---------------------------------------------------------------------------------------
// rest.bnf: no reST parser for Rust; a line-level check of the subset, and Docutils
// (Python) on what `check` calls valid

#[test]
fn rest_outputs_have_the_subset_line_structure() {
    let samples = generate_trees("rest.bnf", N);
    let mut failures = Vec::new();
    for (i, s) in samples.iter().enumerate() {
        let text = s.text();
        let ok_chars = text
            .bytes()
            .all(|b| b == b'\t' || b == b'\n' || (b' '..=b'~').contains(&b));
        let lines: Vec<&str> = text.split('\n').collect();
        // Every section title is one line followed by an underline of one repeated
        // '=' or '-'.
        let titles_ok = s.tree.all("<section-title>").iter().all(|t| {
            let title = t.child("<title-text>").unwrap().text();
            let underline = t.child("<underline>").unwrap().text();
            let c = underline.as_bytes()[0];
            (c == b'=' || c == b'-')
                && underline.bytes().all(|b| b == c)
                && !title.contains('\n')
                && lines.windows(2).any(|w| w[0] == title && w[1] == underline)
        });
        // Every label is a line of its own, and so is every enumeration item.
        let labels_ok = s
            .tree
            .all("<label>")
            .iter()
            .all(|l| lines.contains(&l.text().as_str()));
        let items_ok = s.tree.all("<enumeration_item>").iter().all(|item| {
            let t = item.text();
            lines.contains(&t.as_str())
                && t.split_once(". ")
                    .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        });
        if !(ok_chars && titles_ok && labels_ok && items_ok && text.ends_with('\n')) {
            failures.push(format!("#{i} {text:?}"));
        }
    }
    assert_all_passed("rest.bnf", N, &failures);
}

/// Inputs generated without constraints that `thicket check` calls valid (all four
/// reST constraints hold) are what Docutils reads: no warning or error, and every
/// title and list item the tree holds (`judges/rest_docutils.py`), but for the known
/// gaps of rest.bnf's header in at most 2% of them. Skipped without
/// python3 and Docutils, unless `THICKET_REQUIRE_PYTHON=1` (CI installs Docutils).
#[test]
fn rest_inputs_valid_by_check_are_read_by_docutils() {
    const N_REST: usize = 2000;
    let samples = generate_trees("rest.bnf", N_REST);
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (i, s) in samples.iter().enumerate() {
        let path = dir.path().join(format!("{i:05}.rst"));
        std::fs::write(&path, &s.input).unwrap();
        files.push(path.to_str().unwrap().to_string());
    }
    let spec = spec_path("rest.bnf");
    let mut args = vec!["check", spec.to_str().unwrap(), "--json"];
    args.extend(files.iter().map(String::as_str));
    let out = Command::new(BIN).args(&args).output().unwrap();
    let mut manifest = String::new();
    for line in out.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let verdict: Value = serde_json::from_slice(line).unwrap();
        if verdict["valid"] != true {
            continue;
        }
        let file = verdict["file"].as_str().unwrap();
        let i = files.iter().position(|f| f == file).unwrap();
        let tree = &samples[i].tree;
        manifest.push_str(&format!(
            "{file}\t{}\t{}\n",
            tree.all("<section-title>").len(),
            tree.all("<enumeration_item>").len()
        ));
    }
    let valid = manifest.lines().count();
    // Random inputs mostly break some constraint; enough are valid to judge.
    assert!(
        valid >= N_REST / 20,
        "only {valid} of {N_REST} valid by check"
    );
    if let Some(failures) = judges::rest_docutils(&manifest) {
        // At most 2%: the gaps rest.bnf's header names (letter enumerators, blank list
        // items, "::"), which ISLa's grammar and constraints have too.
        assert!(
            failures.len() * 50 <= valid,
            "{} of {valid} inputs valid by check are not what Docutils reads, e.g.\n{}",
            failures.len(),
            failures[..failures.len().min(3)].join("\n")
        );
    }
}
