//! Prints a digest of the trees the parser returns, for comparing parser versions: a
//! change to the parser's speed must leave every line of this output unchanged.
//!
//! `cargo run --release -p thicket-parse --example tree_digest -- [COUNT]`
//!
//! With the default COUNT the output is `tests/tree_digest.expected`, which
//! `cargo test -p thicket-parse --test tree_digest` checks; a larger COUNT digests more
//! generated inputs per spec. What is digested: see `tests/digest/mod.rs`.

#[path = "../tests/digest/mod.rs"]
mod digest;
#[path = "../benches/documents/mod.rs"]
mod documents;

fn main() {
    let count: u64 = match std::env::args().nth(1) {
        None => digest::DEFAULT_COUNT,
        Some(n) => match n.parse() {
            Ok(n) => n,
            Err(_) => {
                eprintln!("usage: tree_digest [COUNT]");
                std::process::exit(2);
            }
        },
    };
    print!("{}", digest::report(count));
}
