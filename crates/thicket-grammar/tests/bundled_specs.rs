//! The bundled specs keep to the rule of their file name. A `specs/*.bnf` spec (grammar
//! and ISLa constraints) reads the same as a Fandango file as it does in the ISLa dialect
//! it was written in: the same rules, in the same order, with the same bodies, and its
//! constraints where they were. A `specs/*.fan` spec is in Fandango's language (so that
//! Fandango reads it too: the CLI's `fandango_bundled` test asks Fandango) and holds no
//! ISLa constraints.

use thicket_grammar::{LoadOptions, load_spec_bytes};

#[test]
fn bundled_specs_load_as_they_did() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../specs");
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bnf"))
        .collect();
    names.sort();
    assert!(names.len() >= 5, "{names:?}");
    for path in names {
        let bytes = std::fs::read(&path).unwrap();
        let name = path.display().to_string();
        let fan = load_spec_bytes(&format!("{name}.fan"), &bytes, &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{}", e.render()));
        let isla = load_spec_bytes(&name, &bytes, &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{}", e.render()));
        assert_eq!(fan.grammar.to_string(), isla.grammar.to_string(), "{name}");
        assert_eq!(
            fan.grammar.rules().len(),
            isla.grammar.rules().len(),
            "{name}"
        );
        assert_eq!(fan.constraints_start, isla.constraints_start, "{name}");
        assert_eq!(fan.grammar.start(), isla.grammar.start(), "{name}");
        assert_eq!(
            fan.grammar.expr_count(),
            isla.grammar.expr_count(),
            "{name}"
        );
        let fandango = &fan.fandango;
        assert!(
            fandango.python.is_empty() && fandango.generators.is_empty(),
            "{name}"
        );
        assert!(!fandango.is_protocol() && !fandango.uses_bits, "{name}");
        assert!(
            fandango.warnings.is_empty(),
            "{name}: {:?}",
            fandango.warnings
        );
        // Every `where` block is captured, the first where ISLa reading starts.
        if let Some(start) = fan.constraints_start {
            let first = &fandango.constraints[0].block;
            assert!(first.span.start as usize > start, "{name}");
            assert!(fan.source.text()[start..].starts_with("where"), "{name}");
        }
    }
}

#[test]
fn bundled_fandango_specs_hold_no_isla_constraints() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../specs");
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fan"))
        .collect();
    names.sort();
    assert!(names.len() >= 5, "{names:?}");
    for path in names {
        let bytes = std::fs::read(&path).unwrap();
        let name = path.display().to_string();
        let spec = load_spec_bytes(&name, &bytes, &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{}", e.render()));
        assert_eq!(spec.constraints_start, None, "{name}");
        assert!(spec.fandango.warnings.is_empty(), "{name}");
        // Fandango's names are Python identifiers: no `-` in a nonterminal.
        for rule in spec.grammar.rules() {
            assert!(!rule.name.contains('-'), "{name}: {}", rule.name);
        }
    }
}
