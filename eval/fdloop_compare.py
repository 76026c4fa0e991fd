#!/usr/bin/env python3
"""FdLoop against its baselines (issue 17): every strategy on every subject for N seeds
with the same execution budget; a table of coverage, exceptions, unique exceptions,
mappings, target run time and input size, with Mann-Whitney U p-values (exact, two-sided)
and Vargha-Delaney A12 of FdLoop against each baseline, and an SVG plot of coverage over
executions per subject.

    python3 eval/fdloop_compare.py [-n EXECS] [-s SEEDS] [-o OUT] [--strategies ...] [SUBJECT...]
    defaults: -n 1000 -s 5, all subjects, strategies fdloop evogfuzz random probabilistic
    inverse coverage (thicket's default loop, as a further baseline); OUT = target/fdloop-eval (runs.tsv, table.md, coverage-SUBJECT.svg)
    THICKET=path/to/thicket: use that binary instead of building target/release/thicket

Coverage is the target's code features thicket counts (Python: lines + branches, the
same for every strategy); exceptions are failing runs, unique exceptions distinct
`kind @ location` keys (no exception is declared expected, so a JSONDecodeError at a new
place counts: the paper counts the exceptions the subject throws). The learning strategies
learn from the subject's seed folder if it has one, else from 100 uniformly generated
inputs. A subject is one line of SUBJECTS. The Java subjects (gson, jackson, json-simple,
rhino) call the adapters of eval/java/Subjects.java, which the script compiles with
eval/java/build.sh (needs a JDK and the Debian packages named there; docs/java.md).

    --table-only: run nothing, build the table from the stats.json files already in OUT
    (so that subjects can run as separate processes into one OUT, then be tabled together)
"""

import argparse
import itertools
import json
import math
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "crates/thicket-exec/tests/targets/py"

# name: (spec, target flags, seed folder or None)
SUBJECTS = {
    "json": ("specs/json.fan",
             ["--python", f"{PY}/json_target.py:target", "--python-include", "*/json/*"],
             "eval/seeds/json"),
    "urllib": ("specs/url.fan",
               ["--python", f"{PY}/url_target.py:target", "--python-include", "*/urllib/*"],
               None),
    "minidom": ("specs/xml.bnf",
                ["--python", "eval/targets/minidom_target.py:target",
                 "--python-include", "*/xml/dom/*", "--no-constraints", "--max-depth", "12"],
                None),
    # Java subjects (eval/java/Subjects.java, compiled by eval/java/build.sh, whose
    # classpath replaces {CP}); coverage is JaCoCo's methods + lines of the library.
    "gson": ("specs/json.fan",
             ["--java", "thicket.subjects.Subjects.gson", "--classpath", "{CP}",
              "--java-includes", "com.google.gson.*"],
             "eval/seeds/json"),
    "jackson": ("specs/json.fan",
                ["--java", "thicket.subjects.Subjects.jackson", "--classpath", "{CP}",
                 "--java-includes", "com.fasterxml.jackson.*"],
                "eval/seeds/json"),
    "json-simple": ("specs/json.fan",
                    ["--java", "thicket.subjects.Subjects.jsonSimple", "--classpath", "{CP}",
                     "--java-includes", "org.json.simple.*"],
                    "eval/seeds/json"),
    # JavaScript: grammars-v4's ECMAScript 5.1 grammar, read as an ANTLR spec; a script
    # may loop forever, so a short time limit (a hang restarts the JVM).
    "rhino": ("eval/grammars/ECMAScript.g4",
              ["--java", "thicket.subjects.Subjects.rhino", "--classpath", "{CP}",
               "--java-includes", "org.mozilla.javascript.*", "--timeout", "1000"],
              None),
}

STRATEGIES = ["fdloop", "evogfuzz", "random", "probabilistic", "inverse", "coverage"]
METRICS = [  # (column, stats.json reader, higher is better)
    ("coverage", lambda s: s["code_features"], True),
    ("exceptions", lambda s: s["failing_runs"], True),
    ("unique exc.", lambda s: s["distinct_failures"], True),
    ("mappings", lambda s: s["mappings"], True),
    # Run time is one of FdLoop's goals (inputs that take long): higher counts as better.
    ("run time (s)", lambda s: round(s["target_time_s"], 3), True),
    ("input size (B)", lambda s: round(s["mean_input_size"], 1), None),
]


def mann_whitney_u(a, b):
    """U of `a` and the exact two-sided p-value (all splits of the pooled values; ties
    get mid-ranks), for the small samples here."""
    pooled = sorted(a + b)
    def ranks(values):
        out = []
        for v in values:
            lo = pooled.index(v)
            hi = len(pooled) - pooled[::-1].index(v)
            out.append((lo + 1 + hi) / 2)
        return out
    def u_of(xs):
        return sum(ranks(xs)) - len(xs) * (len(xs) + 1) / 2
    u = u_of(a)
    mean = len(a) * len(b) / 2
    observed = abs(u - mean)
    allv = a + b
    extreme = total = 0
    for idx in itertools.combinations(range(len(allv)), len(a)):
        total += 1
        if abs(u_of([allv[i] for i in idx]) - mean) >= observed - 1e-9:
            extreme += 1
    return u, extreme / total


def a12(a, b):
    """Vargha-Delaney A12: the chance that a value of `a` beats one of `b` (ties half)."""
    wins = sum((x > y) + 0.5 * (x == y) for x in a for y in b)
    return wins / (len(a) * len(b))


def svg_plot(series, title, path):
    """Mean coverage over executions, one line per strategy."""
    colors = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"]
    width, height, pad = 640, 360, 50
    xs = [x for pts in series.values() for x, _ in pts] or [1]
    ys = [y for pts in series.values() for _, y in pts] or [1]
    xmax, ymax = max(xs) or 1, max(ys) or 1
    def sx(x):
        return pad + x / xmax * (width - 2 * pad)
    def sy(y):
        return height - pad - y / ymax * (height - 2 * pad)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="20" text-anchor="middle">{title}</text>',
           f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="black"/>',
           f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="black"/>',
           f'<text x="{width / 2}" y="{height - 12}" text-anchor="middle">executions (max {xmax})</text>',
           f'<text x="12" y="{height / 2}" transform="rotate(-90 12 {height / 2})" '
           f'text-anchor="middle">lines covered (max {ymax:.0f})</text>']
    for i, (name, pts) in enumerate(series.items()):
        color = colors[i % len(colors)]
        d = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{d}"/>')
        out.append(f'<text x="{width - pad - 100}" y="{pad + 16 * i}" fill="{color}">{name}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def curve(plot_csv, execs):
    """(execs, coverage) points of one run's plot_data.csv, on a grid of 20 steps."""
    points = []
    with open(plot_csv) as f:
        next(f)
        for line in f:
            parts = line.strip().split(",")
            points.append((int(parts[1]), float(parts[2])))
    grid = []
    for step in range(21):
        x = execs * step // 20
        ys = [y for px, y in points if px <= x]
        grid.append((x, ys[-1] if ys else 0.0))
    return grid


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=1000, help="executions per run")
    ap.add_argument("-s", type=int, default=5, help="seeds 1..S")
    ap.add_argument("-o", default="target/fdloop-eval")
    ap.add_argument("--strategies", nargs="+", default=STRATEGIES)
    ap.add_argument("--table-only", action="store_true",
                    help="run nothing; table the stats.json files already in OUT")
    ap.add_argument("subjects", nargs="*", default=list(SUBJECTS))
    args = ap.parse_args()
    os.chdir(REPO)
    thicket = os.environ.get("THICKET")
    if not thicket and not args.table_only:
        subprocess.run(["cargo", "build", "-q", "--release", "-p", "thicket-cli"], check=True)
        thicket = "target/release/thicket"
    os.makedirs(args.o, exist_ok=True)
    classpath = None
    if not args.table_only and any("{CP}" in SUBJECTS[s][1] for s in args.subjects):
        # Compiles the adapters (needs a JDK and the Debian jars eval/java/build.sh names).
        classpath = subprocess.run(["eval/java/build.sh"], check=True, capture_output=True,
                                   text=True).stdout.strip().splitlines()[-1]
    results = {}  # (subject, strategy) -> list of stats
    curves = {}
    runs_name = "runs.tsv" if args.table_only or len(args.subjects) == len(SUBJECTS) \
        else f"runs-{'-'.join(args.subjects)}.tsv"
    runs = open(os.path.join(args.o, runs_name), "w")

    def record(subject, strategy, seed, out, stats):
        results.setdefault((subject, strategy), []).append(stats)
        curves.setdefault((subject, strategy), []).append(
            curve(os.path.join(out, "plot_data.csv"), args.n))
        row = [str(m[1](stats)) for m in METRICS]
        runs.write(f"{subject}\t{strategy}\t{seed}\t" + "\t".join(row)
                   + f"\t{stats['execs_per_sec']:.0f}\n")
        runs.flush()
        print(subject, strategy, seed, *row, flush=True)

    runs.write("subject\tstrategy\tseed\t" + "\t".join(m[0] for m in METRICS) + "\texecs_per_s\n")
    for subject in args.subjects:
        spec, flags, seeds_dir = SUBJECTS[subject]
        flags = [classpath if f == "{CP}" else f for f in flags]
        for strategy in args.strategies:
            for seed in range(1, args.s + 1):
                out = os.path.join(args.o, subject, f"{strategy}-{seed}")
                if args.table_only:
                    if not os.path.exists(os.path.join(out, "stats.json")):
                        continue
                    stats = json.load(open(os.path.join(out, "stats.json")))
                    record(subject, strategy, seed, out, stats)
                    continue
                subprocess.run(["rm", "-rf", out], check=True)
                os.makedirs(os.path.dirname(out), exist_ok=True)
                cmd = [thicket, "fuzz", spec, "-o", out, "--seed", str(seed),
                       "--execs", str(args.n), "--strategy", strategy, "--track-features",
                       "--plot-every", str(max(1, args.n // 20))] + flags
                if seeds_dir and strategy in ("fdloop", "evogfuzz", "probabilistic", "inverse"):
                    cmd += ["--seeds", seeds_dir]
                with open(out + ".log", "w") as log:
                    done = subprocess.run(cmd, stderr=log, stdout=subprocess.DEVNULL)
                if done.returncode != 0:
                    print(f"{subject} {strategy} {seed}: failed, see {out}.log", file=sys.stderr)
                    continue
                stats = json.load(open(os.path.join(out, "stats.json")))
                record(subject, strategy, seed, out, stats)
    runs.close()

    lines = [f"Budget {args.n} executions per run, seeds 1..{args.s}; median (min-max).", ""]
    head = "| subject | strategy | " + " | ".join(m[0] for m in METRICS) + " |"
    lines += [head, "|" + "---|" * (2 + len(METRICS))]
    for subject in args.subjects:
        for strategy in args.strategies:
            values = results.get((subject, strategy), [])
            if not values:
                continue
            cells = []
            for _, read, _ in METRICS:
                xs = sorted(read(s) for s in values)
                med = xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2
                cells.append(f"{med:g} ({xs[0]:g}-{xs[-1]:g})")
            lines.append(f"| {subject} | {strategy} | " + " | ".join(cells) + " |")
    lines += ["", "FdLoop against each baseline: Mann-Whitney U exact two-sided p, and A12 "
              "(> 0.5: FdLoop higher). `win` = FdLoop better with p < 0.05.", ""]
    lines += ["| subject | baseline | " + " | ".join(m[0] for m in METRICS[:5]) + " |",
              "|" + "---|" * 7]
    wins = settings = 0
    for subject in args.subjects:
        fd = results.get((subject, "fdloop"), [])
        for base in args.strategies:
            other = results.get((subject, base), [])
            if base == "fdloop" or not fd or not other:
                continue
            cells = []
            for _, read, higher in METRICS[:5]:
                a = [float(read(s)) for s in fd]
                b = [float(read(s)) for s in other]
                _, p = mann_whitney_u(a, b)
                e = a12(a, b)
                better = (e > 0.5) if higher else (e < 0.5)
                settings += 1
                win = better and p < 0.05
                wins += win
                cells.append(f"p={p:.3f} A12={e:.2f}{' win' if win else ''}")
            lines.append(f"| {subject} | {base} | " + " | ".join(cells) + " |")
    lines += ["", f"FdLoop significantly better in {wins} of {settings} settings."]
    unique = {}
    for (subject, strategy), values in results.items():
        keys = set()
        for s in values:
            keys |= {f["key"] for f in s["failures"] if not f["key"].startswith("hang @")}
        unique.setdefault(strategy, set()).update(f"{subject}: {k}" for k in keys)
    lines += ["", "Distinct exceptions (kind @ location) over all seeds and subjects: "
              + ", ".join(f"{k} {len(v)}" for k, v in sorted(unique.items())), ""]
    table = "\n".join(lines) + "\n"
    table_name = "table.md" if runs_name == "runs.tsv" else runs_name.replace("runs", "table")[:-4] + ".md"
    with open(os.path.join(args.o, table_name), "w") as f:
        f.write(table)
    print(table)
    for subject in args.subjects:
        series = {}
        for strategy in args.strategies:
            cs = curves.get((subject, strategy))
            if cs:
                series[strategy] = [(cs[0][i][0], sum(c[i][1] for c in cs) / len(cs))
                                    for i in range(len(cs[0]))]
        svg_plot(series, f"{subject}: mean coverage over executions ({args.s} seeds)",
                 os.path.join(args.o, f"coverage-{subject}.svg"))


if __name__ == "__main__":
    main()
