#!/usr/bin/env python3
"""CODEINE on real Python subjects (issue 18): targeted generation against random
generation, and prediction quality on held-out inputs; the setting of the paper's
Tables 9 and 10 (Havrikov, Kampmann, Zeller, §5.4).

Per subject: 1000 random training inputs (seed 1) are run once (`learn-coverage
--matrix`) and one tree is learned per location (functions and lines); 1000 random
held-out inputs (seed 2) are run too. For every trained location that the held-out
inputs cover in 1-50 % of cases, N inputs are generated for it with `generate --target`
and N random inputs (a fresh seed per location) are drawn; all are run once and, per
location, the share of its inputs that reach it is counted ("relative", median over
locations) and whether any does ("absolute", share of locations). Prediction: `predict
--truth` on the held-out set (accuracy, precision, recall over input x location pairs).

Usage: python3 eval/codeine_eval.py [OUT_DIR] [--subjects expr,json,urllib] [-n N]
Environment: THICKET (the binary; default target/release/thicket, built if missing).
Prints a Markdown table (docs/codeine.md holds the last run's).
"""
import json
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = os.path.join(REPO, "crates/thicket-exec/tests/targets/py")
SUBJECTS = {
    "expr": ("specs/expr.fan", os.path.join(REPO, "eval/targets/expr_eval.py") + ":evaluate", []),
    "json": ("specs/json.fan", os.path.join(PY, "json_target.py") + ":target", ["*/json/*"]),
    "urllib": ("specs/url.fan", os.path.join(PY, "url_target.py") + ":target", ["*/urllib/*"]),
}


def run(args, **kw):
    started = time.time()
    out = subprocess.run(args, capture_output=True, text=True, **kw)
    if out.returncode != 0:
        sys.exit(f"failed ({out.returncode}): {' '.join(args)}\n{out.stderr}")
    return out, time.time() - started


def main():
    argv = sys.argv[1:]
    out_dir = "/tmp/codeine-eval"
    subjects = ["expr", "json", "urllib"]
    per = 20
    i = 0
    while i < len(argv):
        if argv[i] == "--subjects":
            subjects = argv[i + 1].split(",")
            i += 2
        elif argv[i] == "-n":
            per = int(argv[i + 1])
            i += 2
        else:
            out_dir = argv[i]
            i += 1
    thicket = os.environ.get("THICKET", os.path.join(REPO, "target/release/thicket"))
    if not os.path.exists(thicket):
        run(["cargo", "build", "--release", "-p", "thicket-cli"], cwd=REPO)
    rows = []
    for name in subjects:
        spec, target, include = SUBJECTS[name]
        spec = os.path.join(REPO, spec)
        d = os.path.join(out_dir, name)
        run(["rm", "-rf", d])
        os.makedirs(d)
        py = ["--python", target] + sum((["--python-include", g] for g in include), [])

        def gen(seed, n, folder, extra=()):
            run([thicket, "generate", spec, "-n", str(n), "--seed", str(seed), "-o",
                 os.path.join(d, folder), "--suffix", ".txt", *extra])

        def matrix(folder, tag):
            """Runs the inputs of `folder` once: their coverage matrix."""
            path = os.path.join(d, tag + ".matrix.json")
            run([thicket, "learn-coverage", spec, os.path.join(d, folder), "-o",
                 os.path.join(d, tag + ".unused.json"), "--matrix", path, *py])
            return json.load(open(path))

        gen(1, 1000, "train")
        gen(2, 1000, "test")
        model_path = os.path.join(d, "model.json")
        learned, learn_time = run([thicket, "learn-coverage", spec, os.path.join(d, "train"),
                                   "-o", model_path, "--matrix", os.path.join(d, "train.matrix.json"), *py])
        model = json.load(open(model_path))
        test = matrix("test", "test")
        predicted, _ = run([thicket, "predict", model_path, os.path.join(d, "test"), "--truth",
                            os.path.join(d, "test.matrix.json"), "--json"])
        scores = json.loads(predicted.stdout)
        # Locations random held-out inputs cover in 1-50 % of cases.
        column = {l: i for i, l in enumerate(test["locations"])}
        n_test = len(test["inputs"])
        counts = [0] * len(test["locations"])
        for row in test["covered"]:
            for c in row:
                counts[c] += 1
        chosen = []
        for loc in model["locations"]:
            c = column.get(loc["name"])
            share = counts[c] / n_test if c is not None else 0
            if 0.01 <= share <= 0.5:
                chosen.append(loc["name"])
        targeted_dir = os.path.join(d, "targeted")
        os.makedirs(targeted_dir)
        owner = {}
        infeasible = 0
        for j, loc in enumerate(chosen):
            sub = os.path.join(targeted_dir, f"{j:05}")
            out = subprocess.run([thicket, "generate", spec, "--target", f"{model_path}:{loc}",
                                  "-n", str(per), "--seed", str(100 + j), "-o", sub, "--suffix", ".txt"],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                infeasible += 1  # no feasible covering leaf: counts as no hit
                continue
            for f in os.listdir(sub):
                os.rename(os.path.join(sub, f), os.path.join(targeted_dir, f"{j:05}-{f}"))
                owner[f"{j:05}-{f}"] = j
            os.rmdir(sub)
        gen(3, per * len(chosen), "random")
        hit = {}
        for kind, folder in (("targeted", "targeted"), ("random", "random")):
            m = matrix(folder, kind)
            col = {l: i for i, l in enumerate(m["locations"])}
            frac = []
            for j, loc in enumerate(chosen):
                c = col.get(loc)
                mine = [r for name, r in zip(m["inputs"], m["covered"])
                        if (owner.get(os.path.basename(name)) == j if kind == "targeted"
                            else int(os.path.basename(name).split(".")[0]) // per == j)]
                frac.append(sum(1 for r in mine if c is not None and c in r) / per)
            hit[kind] = frac
        rel = {k: statistics.median(v) if v else float("nan") for k, v in hit.items()}
        ab = {k: sum(1 for x in v if x > 0) / len(v) if v else float("nan") for k, v in hit.items()}
        mean = {k: statistics.mean(v) if v else float("nan") for k, v in hit.items()}
        rows.append((name, len(model["locations"]) + model["skipped"], len(model["locations"]),
                     len(chosen), infeasible, rel, ab, mean, scores, learn_time))
    print(f"| subject | locations seen / trained | aimed at (1-50 %) | no feasible leaf "
          f"| relative R / C (median) | mean R / C | absolute R / C | accuracy | precision | recall |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, seen, trained, chosen, infeasible, rel, ab, mean, s, _ in rows:
        print(f"| {name} | {seen} / {trained} | {chosen} | {infeasible} "
              f"| {rel['random']:.3f} / {rel['targeted']:.3f} | {mean['random']:.3f} / {mean['targeted']:.3f} "
              f"| {ab['random']:.3f} / {ab['targeted']:.3f} "
              f"| {s['accuracy']:.3f} | {s['precision']:.3f} | {s['recall']:.3f} |")


main()
