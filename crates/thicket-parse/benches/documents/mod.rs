//! The benchmark documents, shared by `benches/parse.rs` and the examples: written by a
//! fixed pseudo-random process, so every run parses the same bytes.

/// A small deterministic generator (SplitMix64) for the documents.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

/// A pretty-printed JSON document of roughly `size` bytes: an array of records with
/// strings, numbers, booleans, nulls and nested arrays and objects.
pub fn json_document(size: usize) -> Vec<u8> {
    fn value(out: &mut String, rng: &mut Lcg, depth: usize, indent: usize) {
        let pad = "  ".repeat(indent);
        match rng.next(if depth > 3 { 5 } else { 7 }) {
            0 => out.push_str(&format!(
                "\"{}\"",
                [
                    "alpha",
                    "beta gamma",
                    "δέλτα",
                    "e\\u00e9\\n",
                    "",
                    "quote \\\" here"
                ][rng.next(6) as usize]
            )),
            1 => out.push_str(&format!("{}", rng.next(1_000_000) as i64 - 500_000)),
            2 => out.push_str(&format!(
                "{}.{}e-{}",
                rng.next(1000),
                rng.next(100),
                rng.next(20)
            )),
            3 => out.push_str(["true", "false"][rng.next(2) as usize]),
            4 => out.push_str("null"),
            5 => {
                out.push_str("[\n");
                let n = rng.next(5);
                for i in 0..n {
                    out.push_str(&pad);
                    out.push_str("  ");
                    value(out, rng, depth + 1, indent + 1);
                    out.push_str(if i + 1 < n { ",\n" } else { "\n" });
                }
                out.push_str(&pad);
                out.push(']');
            }
            _ => {
                out.push_str("{\n");
                let n = rng.next(5);
                for i in 0..n {
                    out.push_str(&format!("{pad}  \"key{}\": ", rng.next(100)));
                    value(out, rng, depth + 1, indent + 1);
                    out.push_str(if i + 1 < n { ",\n" } else { "\n" });
                }
                out.push_str(&pad);
                out.push('}');
            }
        }
    }
    let mut rng = Lcg(7);
    let mut out = String::from("[\n");
    while out.len() < size {
        out.push_str("  ");
        value(&mut out, &mut rng, 0, 1);
        out.push_str(",\n");
    }
    out.push_str("  null\n]\n");
    out.into_bytes()
}

/// An RFC 4180 CSV file of roughly `size` bytes.
pub fn csv_document(size: usize) -> Vec<u8> {
    let mut rng = Lcg(3);
    let mut out = String::from("id,name,price,comment\r\n");
    while out.len() < size {
        out.push_str(&format!(
            "{},{},{}.{:02},{}\r\n",
            rng.next(100_000),
            ["apple", "pear", "\"quoted, with comma\"", "plain"][rng.next(4) as usize],
            rng.next(1000),
            rng.next(100),
            ["", "\"multi\r\nline\"", "ok", "\"say \"\"hi\"\"\""][rng.next(4) as usize],
        ));
    }
    out.into_bytes()
}
