#!/usr/bin/env python3
"""Blanks in generated inputs of specs with whitespace rules, two builds in turn.

For each subject, each build and each seed this runs `thicket generate SPEC -n N
--seed S -d DIR` and measures the inputs: mean size, the share of their bytes that are
blanks (space and tab) and whitespace of any kind, the share of distinct inputs, the
k-path coverage (k = 2, by the candidate build's `thicket cover`, the same measure for
both builds) and the share each independent judge accepts (real parsers: tomllib and
tomlkit for TOML, Python's json and node's JSON.parse for JSON). The wall time of each
generate run is recorded too; the builds run in turn in the same script, so their
ratio is comparable, but a speed claim needs a benchmark of its own.

    python3 eval/whitespace_rules.py --baseline OLD/thicket --candidate NEW/thicket \
        [--python VENV/bin/python] [-n 2000] [--seeds 1 2 3] [--out results.json]

`--python` is a Python with tomlkit installed (`pip install tomlkit`); the judges run
in it. Prints a Markdown table (the one in docs/antlr.md, "Whitespace rules of `.fan` specs").
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

SUBJECTS = {
    "toml-like": ("eval/grammars/toml_like.fan", ["tomllib", "tomlkit"]),
    "toml": ("eval/grammars/toml.fan", ["tomllib", "tomlkit"]),
    "json": ("specs/json.fan", ["json", "node"]),
}

# Runs in the judging Python: reads the paths on stdin, prints one JSON list of
# verdicts per judge named in argv.
JUDGE_PY = r"""
import json, sys
paths = [line.rstrip("\n") for line in sys.stdin]
def judge(name, data):
    text = data.decode("utf-8")
    if name == "tomllib":
        import tomllib; tomllib.loads(text)
    elif name == "tomlkit":
        import tomlkit; tomlkit.parse(text)
    elif name == "json":
        json.loads(text)
    else:
        raise SystemExit("unknown judge " + name)
out = {}
for name in sys.argv[1:]:
    verdicts = []
    for p in paths:
        data = open(p, "rb").read()
        try:
            judge(name, data)
            verdicts.append(True)
        except Exception:
            verdicts.append(False)
    out[name] = verdicts
print(json.dumps(out))
"""

JUDGE_NODE = r"""
const fs = require("fs");
const paths = fs.readFileSync(0, "utf8").split("\n").filter(p => p.length);
const verdicts = paths.map(p => {
  try { JSON.parse(fs.readFileSync(p, "utf8")); return true; } catch (e) { return false; }
});
process.stdout.write(JSON.stringify({node: verdicts}));
"""


def judge(python, names, paths):
    out = {}
    py_names = [n for n in names if n != "node"]
    stdin = "\n".join(paths) + "\n"
    if py_names:
        run = subprocess.run([python, "-c", JUDGE_PY, *py_names], input=stdin,
                             capture_output=True, text=True, check=True)
        out.update(json.loads(run.stdout))
    if "node" in names:
        run = subprocess.run(["node", "-e", JUDGE_NODE], input=stdin,
                             capture_output=True, text=True, check=True)
        out.update(json.loads(run.stdout))
    return out


def kpath_coverage(thicket, spec, folder):
    run = subprocess.run([thicket, "cover", spec, folder, "-k", "2", "--json"],
                         capture_output=True, text=True, cwd=ROOT)
    report = json.loads(run.stdout)
    k2 = [c for c in report["coverage"] if c["k"] == 2][0]
    return k2["covered"], k2["total"]


def measure(thicket, candidate, spec, judges, n, seed, python, scratch):
    folder = os.path.join(scratch, "out")
    shutil.rmtree(folder, ignore_errors=True)
    start = time.perf_counter()
    subprocess.run([thicket, "generate", spec, "-n", str(n), "--seed", str(seed),
                    "-d", folder], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    paths = sorted(os.path.join(folder, f) for f in os.listdir(folder))
    datas = [open(p, "rb").read() for p in paths]
    total = sum(len(d) for d in datas)
    blanks = sum(d.count(b" ") + d.count(b"\t") for d in datas)
    spaces = blanks + sum(d.count(b"\n") + d.count(b"\r") for d in datas)
    verdicts = judge(python, judges, paths)
    covered, of = kpath_coverage(candidate, spec, folder)
    return {
        "inputs": len(datas),
        "mean_size": total / max(len(datas), 1),
        "blank_share": blanks / max(total, 1),
        "whitespace_share": spaces / max(total, 1),
        "distinct_share": len(set(datas)) / max(len(datas), 1),
        "kpaths": [covered, of],
        "valid": {name: sum(v) / len(v) for name, v in verdicts.items()},
        "seconds": seconds,
    }


def summary(rows, key):
    values = [key(r) for r in rows]
    return statistics.median(values), min(values), max(values)


def table(results, builds, subjects):
    lines = [
        "| subject | build | mean size (B) | blanks | all whitespace | distinct | "
        "2-paths | accepted | time (s) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    pct = lambda v: f"{100 * v:.1f}%"
    for subject in subjects:
        for build in builds:
            rows = results[subject][build]
            med = lambda key, fmt: "{} ({}-{})".format(*(fmt(x) for x in summary(rows, key)))
            judges = rows[0]["valid"].keys()
            accepted = ", ".join(
                f"{j} {med(lambda r, j=j: r['valid'][j], pct)}" for j in judges)
            kp = med(lambda r: r["kpaths"][0], str) + f" of {rows[0]['kpaths'][1]}"
            lines.append(
                f"| {subject} | {build} | {med(lambda r: r['mean_size'], lambda v: f'{v:.0f}')} "
                f"| {med(lambda r: r['blank_share'], pct)} "
                f"| {med(lambda r: r['whitespace_share'], pct)} "
                f"| {med(lambda r: r['distinct_share'], pct)} | {kp} | {accepted} "
                f"| {med(lambda r: r['seconds'], lambda v: f'{v:.2f}')} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", required=True, help="the thicket binary before")
    ap.add_argument("--candidate", required=True, help="the thicket binary after")
    ap.add_argument("--python", default=sys.executable,
                    help="a Python with tomlkit, for the judges")
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--subjects", nargs="+", default=list(SUBJECTS))
    ap.add_argument("--out", help="write the measurements as JSON")
    args = ap.parse_args()
    builds = {"baseline": args.baseline, "candidate": args.candidate}
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        for subject in args.subjects:
            spec, judges = SUBJECTS[subject]
            results[subject] = {b: [] for b in builds}
            for seed in args.seeds:
                for build, binary in builds.items():
                    row = measure(binary, args.candidate, spec, judges, args.n, seed,
                                  args.python, scratch)
                    row["seed"] = seed
                    results[subject][build].append(row)
                    print(f"{subject} {build} seed {seed}: {json.dumps(row)}",
                          file=sys.stderr)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"n": args.n, "seeds": args.seeds, "builds": builds,
                       "results": results}, f, indent=1)
    print(table(results, list(builds), args.subjects))


if __name__ == "__main__":
    main()
