//! CODEINE (issue 18) on the paper's running example: the expression grammar and an
//! evaluator (eval/targets/expr_eval.py) whose `paren_subtraction_in_product` runs only
//! when a product's right operand is a parenthesised subtraction.

use std::path::Path;
use std::process::Command;

mod common;
use common::{repo, text, thicket};

fn ok(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// How many inputs in `dir` reach the target function (eval/codeine_hits.py).
fn hits(dir: &Path) -> (u32, u32) {
    hits_of(
        "eval/targets/expr_eval.py",
        "paren_subtraction_in_product",
        dir,
    )
}

/// How many inputs in `dir` reach `function` of the evaluator `file`.
fn hits_of(file: &str, function: &str, dir: &Path) -> (u32, u32) {
    let out = Command::new("python3")
        .args([
            &repo("eval/codeine_hits.py"),
            &format!("{}:evaluate", repo(file)),
            function,
            dir.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let line = text(&out.stdout);
    let mut it = line.split_whitespace().map(|n| n.parse().unwrap());
    (it.next().unwrap(), it.next().unwrap())
}

#[test]
fn the_running_example_is_learned_explained_targeted_and_predicted() {
    if !common::have_coverage("CODEINE tests") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = |p: &str| dir.path().join(p).display().to_string();
    let spec = repo("specs/expr.fan");
    let python = format!("{}:evaluate", repo("eval/targets/expr_eval.py"));
    let generate = |seed: &str, n: &str, out: &str, extra: &[&str]| {
        let mut args = vec![
            "generate", &spec, "-n", n, "--seed", seed, "-o", out, "--suffix", ".txt",
        ];
        args.extend_from_slice(extra);
        ok(thicket(&args));
    };
    generate("1", "400", &d("train"), &[]);
    ok(thicket(&[
        "learn-coverage",
        &spec,
        &d("train"),
        "-o",
        &d("model.json"),
        "--matrix",
        &d("matrix.json"),
        "--locations",
        "functions",
        "--python",
        &python,
    ]));
    // The tree names the paper's pattern (Fig. 8, §5.2).
    let explained = ok(thicket(&[
        "explain",
        &d("model.json"),
        ":paren_subtraction_in_product",
        "--json",
    ]));
    let report: serde_json::Value = serde_json::from_str(&explained).unwrap();
    let covering: Vec<&serde_json::Value> = report["leaves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["covered"] == true)
        .collect();
    assert!(
        covering.iter().any(|l| l["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["present"] == true
                && c["pattern"] == "MultExpr (* | / | %) ( AddExpr - MultExpr )")),
        "{explained}"
    );
    // The matrix is reusable: learning again from it gives the same model.
    ok(thicket(&[
        "learn-coverage",
        &spec,
        &d("train"),
        "-o",
        &d("again.json"),
        "--from-matrix",
        &d("matrix.json"),
        "--locations",
        "functions",
    ]));
    assert_eq!(
        std::fs::read(d("model.json")).unwrap(),
        std::fs::read(d("again.json")).unwrap()
    );
    // Leaves give their training inputs by class; the only accuracy shown is the
    // cross-validated one, said to be on inputs the tree was not fitted on.
    let text = ok(thicket(&[
        "explain",
        &d("model.json"),
        ":paren_subtraction_in_product",
    ]));
    assert!(
        text.contains("COVERED (training inputs here: ") && text.contains(" covering, 0 not) if:"),
        "{text}"
    );
    assert!(
        text.contains("predicting inputs it was not fitted on (5-fold cross-validation): accuracy"),
        "{text}"
    );
    assert_eq!(text.matches("accuracy").count(), 1, "{text}");
    assert!(report["leaves"][0].get("accuracy").is_none(), "{explained}");
    assert!(report["cross_validated"]["accuracy"].as_f64().unwrap() > 0.9);
    // Targeted generation against random generation, 100 inputs each.
    let target = format!("{}:paren_subtraction_in_product", d("model.json"));
    generate("5", "100", &d("targeted"), &["--target", &target]);
    generate("5", "100", &d("random"), &[]);
    let (t, n) = hits(&dir.path().join("targeted"));
    let (r, _) = hits(&dir.path().join("random"));
    assert_eq!(n, 100);
    assert!(t >= 80, "targeted generation hit {t} of 100");
    assert!(r <= 25, "random generation hit {r} of 100");
    // Prediction on held-out inputs, scored against the program.
    generate("9", "100", &d("test"), &[]);
    let predicted = ok(thicket(&[
        "predict",
        &d("model.json"),
        &d("test"),
        "--json",
        "--python",
        &python,
    ]));
    let p: serde_json::Value = serde_json::from_str(&predicted).unwrap();
    assert!(p["accuracy"].as_f64().unwrap() > 0.8, "{predicted}");
    assert!(p["recall"].as_f64().unwrap() > 0.5, "{predicted}");
}

#[test]
fn bad_models_and_locations_are_reported_not_panicked_on() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"spec\": 3").unwrap();
    let out = thicket(&["explain", bad.to_str().unwrap(), "x"]);
    assert_eq!(out.status.code(), Some(4));
    let err = text(&out.stderr);
    assert!(
        err.contains("bad.json:1:") && err.contains("not a thicket model"),
        "{err}"
    );
    let spec = repo("specs/expr.fan");
    let out = thicket(&["generate", &spec, "--target", "no-such-model.json:f"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

/// The running example in C (eval/targets/expr_eval.c), built with SanitizerCoverage's
/// function guards and thicket's runtime: functions named by symbols.
#[test]
fn the_running_example_in_c_names_the_pattern_and_is_targeted() {
    let clang = Command::new("clang")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !clang {
        assert!(
            std::env::var_os("THICKET_REQUIRE_SANCOV").is_none_or(|v| v != "1"),
            "clang is missing but THICKET_REQUIRE_SANCOV=1"
        );
        eprintln!("\n*** SKIPPED: no clang; the C CODEINE test did not run ***\n");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = |p: &str| dir.path().join(p).display().to_string();
    let rt = d("rt.o");
    let cc = Command::new("cc")
        .args([
            "-c",
            "-O1",
            "-o",
            &rt,
            &repo("crates/thicket-exec/src/sancov_rt.c"),
        ])
        .status()
        .unwrap();
    assert!(cc.success());
    let program = d("expr_eval");
    let built = Command::new("clang")
        .args([
            "-fsanitize-coverage=func,trace-pc-guard",
            "-O1",
            "-o",
            &program,
            &repo("eval/targets/expr_eval.c"),
            &rt,
        ])
        .status()
        .unwrap();
    assert!(built.success());
    let spec = repo("specs/expr.fan");
    let generate = |seed: &str, n: &str, out: &str, extra: &[&str]| {
        let mut args = vec![
            "generate", &spec, "-n", n, "--seed", seed, "-o", out, "--suffix", ".txt",
        ];
        args.extend_from_slice(extra);
        ok(thicket(&args));
    };
    let learn = |inputs: &str, model: &str, matrix: &str| {
        ok(thicket(&[
            "learn-coverage",
            &spec,
            inputs,
            "-o",
            model,
            "--matrix",
            matrix,
            "--",
            &program,
        ]));
    };
    generate("1", "400", &d("train"), &[]);
    learn(&d("train"), &d("model.json"), &d("train.matrix.json"));
    let explained = ok(thicket(&[
        "explain",
        &d("model.json"),
        "paren_subtraction_in_product",
    ]));
    assert!(
        explained.contains("has    MultExpr (* | / | %) ( AddExpr - MultExpr )"),
        "{explained}"
    );
    let target = format!("{}:paren_subtraction_in_product", d("model.json"));
    generate("5", "100", &d("targeted"), &["--target", &target]);
    learn(
        &d("targeted"),
        &d("unused.json"),
        &d("targeted.matrix.json"),
    );
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d("targeted.matrix.json")).unwrap()).unwrap();
    let column = m["locations"]
        .as_array()
        .unwrap()
        .iter()
        .position(|l| {
            l.as_str()
                .unwrap()
                .ends_with(":paren_subtraction_in_product")
        })
        .expect("targeted inputs reach the function") as u64;
    let hits = m["covered"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| {
            row.as_array()
                .unwrap()
                .iter()
                .any(|c| c.as_u64() == Some(column))
        })
        .count();
    assert!(hits >= 80, "targeted generation hit {hits} of 100");
}

/// A location random inputs reach about 1 % of the time (eval/targets/expr_rare.py:
/// `a * (x - b)`): 300 training inputs hold 4 covering inputs, which the learning and
/// `explain` flag; `--focus` runs aimed inputs and learns again until they hit.
#[test]
fn a_rare_location_is_flagged_and_refined_with_the_program() {
    if !common::have_coverage("CODEINE tests") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = |p: &str| dir.path().join(p).display().to_string();
    let spec = repo("specs/expr.fan");
    let python = format!("{}:evaluate", repo("eval/targets/expr_rare.py"));
    let generate = |seed: &str, n: &str, out: &str, extra: &[&str]| {
        let mut args = vec![
            "generate", &spec, "-n", n, "--seed", seed, "-o", out, "--suffix", ".txt",
        ];
        args.extend_from_slice(extra);
        ok(thicket(&args));
    };
    let train = d("train");
    generate("11", "300", &train, &[]);
    let learn = |model: &str, extra: &[&str]| {
        let mut args = vec![
            "learn-coverage",
            &spec,
            &train,
            "-o",
            model,
            "--locations",
            "functions",
            "--python",
            &python,
        ];
        args.extend_from_slice(extra);
        let out = thicket(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stderr)
    };
    let stderr = learn(&d("once.json"), &[]);
    assert!(
        stderr.contains("fewer than 20 covering inputs")
            && stderr.contains("identifier_minus_in_product with 4")
            && stderr.contains("--focus"),
        "{stderr}"
    );
    let out = thicket(&["explain", &d("once.json"), ":identifier_minus_in_product"]);
    assert!(out.status.success());
    let warning = text(&out.stderr);
    assert!(
        warning.contains("only 4 of 300 training inputs cover this location")
            && warning.contains("--focus"),
        "{warning}"
    );
    let stderr = learn(
        &d("refined.json"),
        &[
            "--focus",
            ":identifier_minus_in_product",
            "--execs",
            "4000",
            "--save-inputs",
            &d("ran"),
        ],
    );
    assert!(stderr.contains("Aimed round"), "{stderr}");
    let ran = std::fs::read_dir(d("ran")).unwrap().count();
    assert!(ran <= 4000, "{ran} inputs run");
    // Aimed inputs of each model, run with the program.
    let aim = |model: &str, out: &str| {
        let target = format!("{model}:identifier_minus_in_product");
        generate("5", "100", out, &["--target", &target]);
        hits_of(
            "eval/targets/expr_rare.py",
            "identifier_minus_in_product",
            Path::new(out),
        )
        .0
    };
    let once = aim(&d("once.json"), &d("aimed-once"));
    let refined = aim(&d("refined.json"), &d("aimed-refined"));
    assert!(
        refined >= 50 && refined >= 2 * once,
        "refined {refined} of 100, one-shot {once} of 100\n{stderr}"
    );
    let explained = ok(thicket(&[
        "explain",
        &d("refined.json"),
        ":identifier_minus_in_product",
    ]));
    assert!(explained.contains("cross-validation"), "{explained}");
}

#[test]
fn a_focus_goal_that_is_no_share_is_a_usage_error_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.json");
    let out = thicket(&[
        "learn-coverage",
        &repo("specs/expr.fan"),
        dir.path().to_str().unwrap(),
        "-o",
        model.to_str().unwrap(),
        "--focus",
        "x",
        "--goal",
        "2",
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("--goal") && stderr.contains("not a probability between 0 and 1"),
        "{stderr}"
    );
    assert!(!model.exists());
}
