#!/usr/bin/env python3
"""CODEINE on rare locations of real subjects: the refinement loop (`learn-coverage
--focus`) against random generation and against the one-shot model (docs/codeine.md,
"Rare locations").

Per subject (Python's json decoder, urllib.parse, tomllib, e-mail header parsing
(email.utils) and ipaddress, those with caches emptied before each input; none written
here; the last two are not run by default):
1. 1000 random training inputs (seed 1) are run once (`learn-coverage --matrix`); the
   one-shot model is learned from them (functions and lines).
2. R random reference inputs (seed 2, default 5000) are run once; a location's random
   hit rate is the share of them that cover it. Locations with a rate of 0.1-1 % are
   the candidates; up to N of them (default 10), evenly spread over the candidates
   sorted by rate, are aimed at.
3. Per aimed location j:
   - one-shot: 100 inputs from `generate --target` on the one-shot model (seed 100+j);
     a location the training inputs never reach has no tree (hit rate 0);
   - refined: `learn-coverage --from-matrix` on the training matrix (nothing run again)
     with `--focus LOCATION --execs 5000 --seed j`, then 100 inputs from `generate
     --target` on the refined model (seed 200+j). The loop's own figures (executions
     spent, whether the goal was reached (a tree's pooled aimed rounds put the lower 95 %
     bound of its hit rate at the goal), the last aimed round's hits, the kept tree's
     rounds and their bound) are read from its report.
   Every input set is run with the subject to count the inputs that reach the location.

Usage: python3 eval/codeine_refine_eval.py [OUT_DIR] [--subjects json,urllib,toml,email,ipaddress]
       [--per-subject N] [--reference R] [--execs E] [--band LO,HI] [--goal G]
       [--candidates-only] [--only J,K,...] [--keep-inputs]
(--band: the random hit rates of the candidates, default 0.001,0.01; --goal: the loop's
goal, default 0.9: a tree's rounds showing it at 95 % confidence end the loop; --candidates-only: stop
after choosing the locations, to check cheaply that a subject has enough in the band;
--only: aim only at these of the chosen locations (by index j, seeds unchanged), to
split a subject's run over several processes; --keep-inputs: write every input a loop
ran into OUT_DIR/SUBJECT/loopJ/, named `-hit` or `-miss`, to see what its misses are.
The summary counts
refined sets reaching 90 % whatever the goal.)
Environment: THICKET (the binary; default target/release/thicket, built if missing).
Prints a Markdown table per location and a summary per subject.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = os.path.join(REPO, "crates/thicket-exec/tests/targets/py")
SUBJECTS = {
    "json": ("specs/json.fan", os.path.join(PY, "json_target.py") + ":target", ["*/json/*"]),
    # urllib.parse with its caches emptied before each input (eval/targets/url_fresh.py):
    # thicket-exec's url_target.py runs in one process, so there a line's coverage
    # depends on the inputs run before.
    "urllib": ("specs/url.fan", os.path.join(REPO, "eval/targets/url_fresh.py") + ":target", ["*/urllib/*"]),
    # tomllib.loads with its time-zone cache emptied before each input
    # (eval/targets/toml_fresh.py), for the same reason.
    "toml": ("eval/grammars/toml.fan", os.path.join(REPO, "eval/targets/toml_fresh.py") + ":target", ["*/tomllib/*"]),
    # e-mail Date and address-list header values read by email.utils / email._parseaddr
    # (no cache to empty).
    "email": ("eval/grammars/email_header.fan", os.path.join(REPO, "eval/targets/email_fresh.py") + ":target",
              ["*/email/_parseaddr.py", "*/email/utils.py"]),
    # ipaddress with its net-mask tables and property caches emptied before each input.
    "ipaddress": ("eval/grammars/ip.fan", os.path.join(REPO, "eval/targets/ip_fresh.py") + ":target",
                  ["*/ipaddress.py"]),
}
AIMED = 100


def run(args, check=True):
    out = subprocess.run(args, capture_output=True, text=True)
    if check and out.returncode != 0:
        sys.exit(f"failed ({out.returncode}): {' '.join(args)}\n{out.stderr}")
    return out


def main():
    argv = sys.argv[1:]
    if "-h" in argv or "--help" in argv:
        print(__doc__)
        return
    out_dir, subjects, per, reference, execs = "/tmp/codeine-refine-eval", ["json", "urllib", "toml"], 10, 5000, 5000
    low, high = 0.001, 0.01
    goal = 0.9
    candidates_only = False
    only = None
    keep_inputs = False
    i = 0
    while i < len(argv):
        if argv[i] == "--subjects":
            subjects = argv[i + 1].split(",")
        elif argv[i] == "--per-subject":
            per = int(argv[i + 1])
        elif argv[i] == "--reference":
            reference = int(argv[i + 1])
        elif argv[i] == "--execs":
            execs = int(argv[i + 1])
        elif argv[i] == "--goal":
            goal = float(argv[i + 1])
        elif argv[i] == "--candidates-only":
            candidates_only = True
            i += 1
            continue
        elif argv[i] == "--keep-inputs":
            keep_inputs = True
            i += 1
            continue
        elif argv[i] == "--only":
            only = {int(x) for x in argv[i + 1].split(",")}
        elif argv[i] == "--band":
            low, high = (float(x) for x in argv[i + 1].split(","))
        else:
            out_dir = argv[i]
            i += 1
            continue
        i += 2
    thicket = os.environ.get("THICKET", os.path.join(REPO, "target/release/thicket"))
    if not os.path.exists(thicket):
        run(["cargo", "build", "--release", "-p", "thicket-cli"])
    summary = []
    print("| subject | location | random (of %d) | one-shot (of %d) | refined (of %d) | executions | goal reached | last round "
          "| kept tree's rounds (bound) | k | seed |" % (reference, AIMED, AIMED))
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in subjects:
        spec, target, include = SUBJECTS[name]
        spec = os.path.join(REPO, spec)
        d = os.path.join(out_dir, name)
        run(["rm", "-rf", d])
        os.makedirs(d)
        py = ["--python", target] + sum((["--python-include", g] for g in include), [])

        def gen(folder, extra):
            run([thicket, "generate", spec, "-o", os.path.join(d, folder), "--suffix", ".txt", *extra])

        def matrix(folder):
            """Runs the inputs of `folder` once: their coverage matrix."""
            path = os.path.join(d, folder + ".matrix.json")
            run([thicket, "learn-coverage", spec, os.path.join(d, folder), "-o",
                 os.path.join(d, folder + ".unused.json"), "--matrix", path, "--folds", "0",
                 "--max-locations", "1", *py])
            return json.load(open(path))

        def hits(folder, location):
            m = matrix(folder)
            if location not in m["locations"]:
                return 0, len(m["inputs"])
            c = m["locations"].index(location)
            return sum(1 for row in m["covered"] if c in row), len(m["inputs"])

        gen("train", ["-n", "1000", "--seed", "1"])
        model_path = os.path.join(d, "model.json")
        run([thicket, "learn-coverage", spec, os.path.join(d, "train"), "-o", model_path,
             "--matrix", os.path.join(d, "train.matrix.json"), *py])
        model = json.load(open(model_path))
        trained = {l["name"] for l in model["locations"]}
        gen("reference", ["-n", str(reference), "--seed", "2"])
        ref = matrix("reference")
        counts = [0] * len(ref["locations"])
        for row in ref["covered"]:
            for c in row:
                counts[c] += 1
        candidates = sorted(
            (counts[c] / reference, ref["locations"][c]) for c in range(len(counts))
            if low <= counts[c] / reference <= high)
        if len(candidates) > per:
            step = len(candidates) / per
            chosen = [candidates[int(j * step)] for j in range(per)]
        else:
            chosen = candidates
        if candidates_only:
            print(f"<!-- {name}: {len(candidates)} candidates: "
                  + ", ".join(f"{re.sub(r'/.*/', '.../', loc)} {100 * rate:.2f} %" for rate, loc in chosen) + " -->")
            summary.append((name, len(candidates), []))
            continue
        rows = []
        for j, (rate, loc) in enumerate(chosen):
            if only is not None and j not in only:
                continue
            started = time.time()
            if loc in trained:
                gen(f"oneshot{j}", ["--target", f"{model_path}:{loc}", "-n", str(AIMED), "--seed", str(100 + j)])
                one, _ = hits(f"oneshot{j}", loc)
            else:
                one = 0
            refined = os.path.join(d, f"refined{j}.json")
            keep = ["--save-inputs", os.path.join(d, f"loop{j}")] if keep_inputs else []
            out = run([thicket, "learn-coverage", spec, os.path.join(d, "train"), "-o", refined,
                       "--from-matrix", os.path.join(d, "train.matrix.json"), "--focus", loc,
                       "--execs", str(execs), "--goal", str(goal), "--seed", str(j), "--folds", "0", *keep, *py],
                      check=False)
            report = re.search(r"focus .*: goal \d+ % (reached|NOT reached) after (\d+) executions in (\d+) rounds"
                               r"(?: \(last aimed round: (\d+)/(\d+) reached it\))?; paths up to k = (\d+)", out.stderr)
            if out.returncode != 0 or not report:
                print(f"<!-- {name} {loc}: refinement failed: {out.stderr[-500:]} -->", file=sys.stderr)
                continue
            reached, spent = report.group(1) == "reached", int(report.group(2))
            last = f"{report.group(4)}/{report.group(5)}" if report.group(4) else "-"
            k = report.group(6)
            kept = re.search(r"the kept tree's aimed inputs hit ([0-9/ +]+), at least ([0-9.]+) %", out.stderr)
            kept = f"{kept.group(1)} ({kept.group(2)} %)" if kept else "-"
            refined_model = json.load(open(refined))
            if any(l["name"] == loc for l in refined_model["locations"]):
                gen(f"refined{j}", ["--target", f"{refined}:{loc}", "-n", str(AIMED), "--seed", str(200 + j)])
                ref_hits, _ = hits(f"refined{j}", loc)
            else:
                ref_hits = 0
            short = re.sub(r"/.*/", ".../", loc)
            print(f"| {name} | `{short}` | {round(rate * reference)} ({100 * rate:.1f} %) | {one} | {ref_hits} "
                  f"| {spent} | {'yes' if reached else 'no'} | {last} | {kept} | {k} | {j} |", flush=True)
            rows.append((rate, one / AIMED, ref_hits / AIMED, spent, reached, time.time() - started))
        summary.append((name, len(candidates), rows))
    print()
    print(f"| subject | candidates ({100 * low:g}-{100 * high:g} %) | aimed at | median random | median one-shot | median refined "
          "| refined >= 90 % | goal reached | median executions |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, n, rows in summary:
        if not rows:
            print(f"| {name} | {n} | 0 | - | - | - | - | - | - |")
            continue
        med = lambda i: statistics.median(r[i] for r in rows)
        print(f"| {name} | {n} | {len(rows)} | {100 * med(0):.2f} % | {100 * med(1):.0f} % | {100 * med(2):.0f} % "
              f"| {sum(1 for r in rows if r[2] >= 0.9)} | {sum(1 for r in rows if r[4])} | {med(3):.0f} |")


main()
