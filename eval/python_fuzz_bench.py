#!/usr/bin/env python3
"""Executions per second of `thicket.fuzz` (in-process) against `thicket fuzz --python`.

Both fuzz `json.loads` with inputs of the same spec, the same seed and the same budget
in executions, on the same campaign loop (the coverage-guided strategy), with
`JSONDecodeError` expected (not a failure), measuring lines and branches of the `json`
package. The command line runs the function in thicket's runner (a separate interpreter,
coverage.py, a pipe per input); the module calls it in this interpreter
(`thicket._coverage`: sys.monitoring on 3.12+, sys.settrace before). Rounds alternate
the two (A B A B ...) with a fresh seed per round, so a shared machine's drift hits
both alike; reported per side: the campaign's executions per second (as each reports
it in its figures: the loop's time, not the start-up), the wall time of the whole call
or process, and the lines and branches covered after the budget (coverage per
execution, since both ran the same number). Minimisation is off on both sides.

Build both in release mode first (debug builds measure the debug build):

    cargo build --release -p thicket-cli
    pip install ./crates/thicket-py          # release build of the module
    python3 eval/python_fuzz_bench.py --thicket target/release/thicket

The runner needs coverage.py in the interpreter it starts (`--python-exe`, by default
this one). Options: --spec (default specs/json.fan), --execs (20000), --rounds (5),
--seed (1).
"""

import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import thicket

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run_cli(binary, spec, execs, seed, python):
    """The command line's figures (its stats.json) and its wall time."""
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "out"
        started = time.perf_counter()
        subprocess.run(
            [
                binary, "fuzz", str(spec), "-o", str(out), "--seed", str(seed),
                "--execs", str(execs), "--python", "json:loads", "--python-exe", python,
                "--expected-exception", "JSONDecodeError",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wall = time.perf_counter() - started
        stats = json.loads((out / "stats.json").read_text())
    return {
        "execs": stats["execs"],
        "execs_per_sec": stats["execs_per_sec"],
        "wall": wall,
        "lines": stats["coverage"].get("lines", 0),
        "branches": stats["coverage"].get("branches", 0),
        "queue": stats["queue"],
    }


def run_python(spec, execs, seed):
    """`thicket.fuzz`'s figures and its wall time (the spec loaded before the clock)."""
    started = time.perf_counter()
    result = thicket.fuzz(
        spec, json.loads, execs=execs, seed=seed, expected=json.JSONDecodeError, minimize=False
    )
    wall = time.perf_counter() - started
    return {
        "execs": result.execs,
        "execs_per_sec": result.execs_per_sec,
        "wall": wall,
        "lines": result.lines,
        "branches": result.branches,
        "queue": len(result.corpus),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--thicket", default=str(ROOT / "target" / "release" / "thicket"))
    parser.add_argument("--spec", default=str(ROOT / "specs" / "json.fan"))
    parser.add_argument("--execs", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--python-exe", default=sys.executable)
    args = parser.parse_args()

    spec = thicket.Spec.load(args.spec)
    # A warm-up of each, not counted.
    run_cli(args.thicket, args.spec, 200, args.seed, args.python_exe)
    run_python(spec, 200, args.seed)

    rows = []
    for r in range(args.rounds):
        seed = args.seed + r
        cli = run_cli(args.thicket, args.spec, args.execs, seed, args.python_exe)
        py = run_python(spec, args.execs, seed)
        ratio = py["execs_per_sec"] / cli["execs_per_sec"]
        wall_ratio = cli["wall"] / py["wall"]
        rows.append((cli, py, ratio, wall_ratio))
        print(
            f"round {r}: CLI {cli['execs_per_sec']:,.0f} execs/s ({cli['wall']:.1f} s, "
            f"{cli['lines']} lines, {cli['branches']} branches); in-process "
            f"{py['execs_per_sec']:,.0f} execs/s ({py['wall']:.1f} s, {py['lines']} lines, "
            f"{py['branches']} branches); ratio {ratio:.2f} (wall {wall_ratio:.2f})",
            flush=True,
        )

    def median(key, side):
        return statistics.median(row[side][key] for row in rows)

    print()
    print(f"Python {sys.version.split()[0]}, {args.execs} executions per campaign, "
          f"{args.rounds} rounds, medians:")
    print("| | execs/s | wall s | lines | branches | kept inputs |")
    print("|---|---|---|---|---|---|")
    for name, side in (("`thicket fuzz --python json:loads`", 0), ("`thicket.fuzz(spec, json.loads)`", 1)):
        print(
            f"| {name} | {median('execs_per_sec', side):,.0f} | {median('wall', side):.1f} | "
            f"{median('lines', side):.0f} | {median('branches', side):.0f} | "
            f"{median('queue', side):.0f} |"
        )
    ratios = [row[2] for row in rows]
    walls = [row[3] for row in rows]
    print(
        f"| in-process / CLI, per round | median {statistics.median(ratios):.2f} "
        f"({min(ratios):.2f} to {max(ratios):.2f}) | wall: median {statistics.median(walls):.2f} | | | |"
    )


if __name__ == "__main__":
    main()
