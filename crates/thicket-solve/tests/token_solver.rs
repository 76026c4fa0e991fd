//! The token constraint solver on the paper's worked example, on unsatisfiable
//! prefixes and on a left-recursive grammar; witnesses are checked by parsing them.

use thicket_grammar::{Tokens, load_spec_text};
use thicket_solve::tokens::{TokenSet, TokenSolver};

/// The paper's grammar (Section 3): `S ::= (let((id S))S) | (Op S S) | num | id`.
const PAPER: &[u8] = b"<start> ::= <s>\n\
<s> ::= \"(\" <w> \"let\" <w> \"(\" <w> \"(\" <w> \"id\" <w> <s> <w> \")\" <w> \")\" <w> <s> <w> \")\"\n\
      | \"(\" <w> <op> <w> <s> <w> <s> <w> \")\" | \"num\" | \"id\"\n\
<op> ::= \"+\" | \"-\"\n\
<w> ::= \" \"*\n";

fn sets(tokens: &Tokens, spec: &[&str]) -> Vec<TokenSet> {
    let n = tokens.kinds().len();
    spec.iter()
        .map(|s| {
            let mut set = TokenSet::none(n);
            for name in s.split(',') {
                let k = tokens
                    .kind_by_name(name)
                    .unwrap_or_else(|| panic!("no kind {name}"));
                set.insert(k);
            }
            set
        })
        .collect()
}

fn text(tokens: &Tokens, witness: &[u32]) -> String {
    let texts: Vec<Vec<u8>> = witness
        .iter()
        .map(|&k| {
            tokens.kinds()[k as usize]
                .literal
                .clone()
                .expect("literal kinds")
                .into()
        })
        .collect();
    String::from_utf8(Tokens::detokenize(&texts)).unwrap()
}

fn parses(grammar: &thicket_grammar::Grammar, input: &str) -> bool {
    let parser =
        thicket_parse::Parser::new(grammar, thicket_parse::ParseConfig::default()).unwrap();
    parser.parse(input.as_bytes()).is_ok()
}

#[test]
fn the_papers_example_gives_a_witness_of_the_right_shape() {
    let g = load_spec_text("paper.fan", PAPER).unwrap();
    let tokens = Tokens::new(&g);
    // "+" and "-" are the two values of the regular rule <op>, one token kind.
    assert_eq!(tokens.kinds().len(), 6, "{:?}", tokens.kinds());
    let mut solver = TokenSolver::new(tokens.grammar(), tokens.kinds().len());
    let w = solver
        .solve(&sets(&tokens, &["(", "op", "(", "let"]))
        .expect("satisfiable");
    let shown: Vec<&str> = w
        .iter()
        .map(|&k| tokens.kinds()[k as usize].name.as_str())
        .collect();
    // (Op (let((id S))S) S) with the shortest S (`num` or `id`): 14 tokens.
    assert_eq!(
        &shown[..7],
        [
            "\"(\"", "<op>", "\"(\"", "\"let\"", "\"(\"", "\"(\"", "\"id\""
        ]
    );
    assert_eq!(shown.len(), 14, "{shown:?}");
    let input: Vec<Vec<u8>> = w
        .iter()
        .map(|&k| match &tokens.kinds()[k as usize].literal {
            Some(l) => l.to_vec(),
            None => b"+".to_vec(),
        })
        .collect();
    let input = String::from_utf8(Tokens::detokenize(&input)).unwrap();
    assert!(parses(&g, &input), "{input}");
    // The same query again comes from the cache.
    assert_eq!(
        solver.solve(&sets(&tokens, &["(", "op", "(", "let"])),
        Some(w)
    );
    assert_eq!(solver.stats().cache_hits, 1);
}

#[test]
fn unsatisfiable_prefixes_are_reported() {
    let g = load_spec_text("paper.fan", PAPER).unwrap();
    let tokens = Tokens::new(&g);
    let mut solver = TokenSolver::new(tokens.grammar(), tokens.kinds().len());
    // The paper: after "(" the second token cannot be "(".
    assert_eq!(solver.solve(&sets(&tokens, &["(", "("])), None);
    // "num" is a whole input: nothing may follow it, and the end is not allowed here.
    assert_eq!(solver.solve(&sets(&tokens, &["num", "num"])), None);
    // ... unless the set allows the end of input.
    let mut s = sets(&tokens, &["num", "num"]);
    s[1].eof = true;
    assert_eq!(solver.solve(&s).map(|w| w.len()), Some(1));
    assert_eq!(solver.stats().unsat, 2);
}

#[test]
fn a_left_recursive_grammar_is_solved() {
    let g = load_spec_text(
        "lr.fan",
        b"<start> ::= <e>\n<e> ::= <e> \"+\" <t> | <t>\n<t> ::= <t> \"*\" <f> | <f>\n<f> ::= \"x\" | \"(\" <e> \")\"\n",
    )
    .unwrap();
    let tokens = Tokens::new(&g);
    let mut solver = TokenSolver::new(tokens.grammar(), tokens.kinds().len());
    let w = solver
        .solve(&sets(&tokens, &["x", "+", "x", "*", "("]))
        .expect("satisfiable");
    assert_eq!(text(&tokens, &w), "x + x * ( x )");
    assert!(parses(&g, "x+x*(x)"));
    // 60 constrained tokens: alternate x and + then close with (.
    let mut long = Vec::new();
    for i in 0..60 {
        long.push(if i % 2 == 0 { "x,(" } else { "+,*" });
    }
    let w = solver.solve(&sets(&tokens, &long)).expect("satisfiable");
    assert!(w.len() >= 61, "{}", w.len());
    let t = text(&tokens, &w).replace(' ', "");
    assert!(parses(&g, &t), "{t}");
    assert_eq!(solver.solve(&sets(&tokens, &["+"])), None);
}

#[test]
fn sets_read_from_text_and_witnesses_get_their_text() {
    let grammar = load_spec_text("paper.bnf", PAPER).unwrap();
    let tokens = Tokens::new(&grammar);
    let n = tokens.kinds().len();
    let open = TokenSet::parse(&tokens, "(", 0).unwrap();
    assert_eq!(open.kinds().count(), 1);
    assert!(!open.eof);
    let not_open = TokenSet::parse(&tokens, "!(", 1).unwrap();
    assert_eq!(not_open.kinds().count(), n - 1);
    assert!(not_open.eof);
    let any = TokenSet::parse(&tokens, "*", 2).unwrap();
    assert_eq!(any, TokenSet::all(n));
    let error = TokenSet::parse(&tokens, "num,nope", 3).unwrap_err();
    assert!(
        error.starts_with("set 4 (`num,nope`): the spec has no token `nope`"),
        "{error}"
    );
    let mut solver = TokenSolver::new(tokens.grammar(), n);
    let witness = solver
        .solve(&[open, TokenSet::parse(&tokens, "let", 1).unwrap()])
        .unwrap();
    let text = thicket_solve::tokens::witness_text(&grammar, &tokens, &witness);
    assert!(
        text.starts_with(b"( let ("),
        "{}",
        String::from_utf8_lossy(&text)
    );
}
