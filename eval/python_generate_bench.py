#!/usr/bin/env python3
"""Inputs per second of `spec.generate(N)` from Python against `thicket generate -n N`.

Both make the same inputs (input i of a seed is the same in both), so the figures compare
the same work: the command line writing them to a pipe (read and counted by this script),
the Python module returning them as `thicket.Input` objects. Rounds alternate the two
(A B A B ...) with a fresh seed per round, and the medians and the per-round ratio are
reported, so that a shared machine's drift hits both alike. Also reported: the mean
input size and the share of distinct inputs (of each round's N).

Build both in release mode first (debug builds measure the debug build):

    cargo build --release -p thicket-cli
    pip install ./crates/thicket-py          # release build of the module
    python3 eval/python_generate_bench.py --thicket target/release/thicket

Options: --spec (default specs/json.fan), -n (100000), --rounds (5), --seed (1).
"""

import argparse
import pathlib
import statistics
import subprocess
import sys
import time

import thicket

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run_cli(binary, spec, n, seed):
    """Seconds, inputs, for the command line writing N NUL-separated inputs to a pipe."""
    started = time.perf_counter()
    out = subprocess.run(
        [binary, "generate", str(spec), "-n", str(n), "--seed", str(seed), "-0"],
        check=True,
        stdout=subprocess.PIPE,
    ).stdout
    seconds = time.perf_counter() - started
    return seconds, out.split(b"\0")[:-1]


def run_python(spec, n, seed):
    """Seconds, inputs, for `spec.generate(N)` (the spec loaded before the clock)."""
    started = time.perf_counter()
    inputs = spec.generate(n, seed=seed)
    seconds = time.perf_counter() - started
    return seconds, [bytes(i) for i in inputs]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--thicket", default=str(ROOT / "target" / "release" / "thicket"))
    parser.add_argument("--spec", default=str(ROOT / "specs" / "json.fan"))
    parser.add_argument("-n", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    spec = thicket.Spec.load(args.spec)
    # A warm-up of each, not counted (page cache, the module's first thread pool).
    run_cli(args.thicket, args.spec, 1000, args.seed)
    run_python(spec, 1000, args.seed)

    cli_rates, py_rates, ratios = [], [], []
    sizes, distinct = [], []
    for r in range(args.rounds):
        seed = args.seed + r
        cli_seconds, cli_inputs = run_cli(args.thicket, args.spec, args.n, seed)
        py_seconds, py_inputs = run_python(spec, args.n, seed)
        if cli_inputs != py_inputs:
            sys.exit(f"round {r}: the module's inputs differ from the command line's")
        cli_rates.append(args.n / cli_seconds)
        py_rates.append(args.n / py_seconds)
        ratios.append(py_rates[-1] / cli_rates[-1])
        sizes.append(sum(map(len, py_inputs)) / len(py_inputs))
        distinct.append(len(set(py_inputs)) / len(py_inputs))
        print(
            f"round {r}: CLI {cli_rates[-1]:,.0f}/s, Python {py_rates[-1]:,.0f}/s, "
            f"ratio {ratios[-1]:.2f}",
            flush=True,
        )
    median = statistics.median
    print(f"spec {args.spec}, n {args.n}, {args.rounds} rounds (medians)")
    print(f"  thicket generate (CLI): {median(cli_rates):,.0f} inputs/s")
    print(f"  spec.generate (Python): {median(py_rates):,.0f} inputs/s")
    print(f"  Python / CLI: {median(ratios):.2f} (min {min(ratios):.2f}, max {max(ratios):.2f})")
    print(f"  mean size {median(sizes):.1f} bytes, distinct {100 * median(distinct):.1f}%")


if __name__ == "__main__":
    main()
