#!/usr/bin/env bash
# Executions per second of `thicket fuzz -j 2` against `-j 1` on the same small afl-cc
# target (crates/thicket-exec/tests/targets/branches.c): whole campaigns as a user runs
# them, alternating ROUNDS times so that a changing machine load hits both alike; the
# median of the per-round ratios is printed. -j 2 can reach 2x only with two idle cores:
# note the load average printed beside the figures. Not run by CI; figures go to
# docs/feedback.md.
#
#   bash benches/parallel_fuzz.sh [SECONDS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
rounds=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
AFL_QUIET=1 afl-cc -O1 -o "$work/target" crates/thicket-exec/tests/targets/branches.c
cargo build -q --release -p thicket-cli
thicket=target/release/thicket

total_rate() { # executions per second of all workers under $1 (or of the campaign in $1)
  python3 - "$1" <<'PY'
import json, pathlib, sys
root = pathlib.Path(sys.argv[1])
files = [root / "stats.json"] if (root / "stats.json").exists() else sorted(root.glob("worker-*/stats.json"))
print(round(sum(json.loads(f.read_text())["execs_per_sec"] for f in files)))
PY
}

echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
ratios=()
for round in $(seq "$rounds"); do
  rm -rf "$work/one" "$work/two"
  "$thicket" fuzz specs/json.fan -o "$work/one" --seed "$round" --time "${secs}s" \
    -- "$work/target" @@ 2>/dev/null
  "$thicket" fuzz specs/json.fan -o "$work/two" -j 2 --seed "$round" --time "${secs}s" \
    -- "$work/target" @@ 2>/dev/null
  one=$(total_rate "$work/one")
  two=$(total_rate "$work/two")
  ratio=$(python3 -c "print(f'{$two / max($one, 1):.2f}')")
  ratios+=("$ratio")
  echo "round $round: -j 1 $one execs/s, -j 2 $two execs/s, ratio $ratio"
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 -c "import statistics,sys; r=sorted(map(float,sys.argv[1:])); print(f'median ratio {statistics.median(r):.2f} (min {r[0]:.2f}, max {r[-1]:.2f})')" "${ratios[@]}"
