#!/usr/bin/env bash
# Executions per second against afl-fuzz on the same small afl-cc target
# (tests/targets/branches.c) and seeds (20 JSON inputs): first thicket's forkserver
# executor alone, then the whole campaign as a user runs both (`thicket fuzz
# specs/json.fan ... -- ./target @@` against `afl-fuzz -i seeds ... -- ./target @@`,
# defaults; afl-fuzz binds itself to a free core). Campaigns alternate ROUNDS times so
# that a changing machine load hits both alike; the median of the per-round ratios is
# printed. Not run by CI; figures go to docs/feedback.md.
#
#   bash benches/exec_vs_afl.sh [SECONDS] [ROUNDS]
#   THICKET=path/to/thicket: the campaign of that binary (e.g. an older version)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
rounds=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
AFL_QUIET=1 afl-cc -O1 -o "$work/target" crates/thicket-exec/tests/targets/branches.c
mkdir -p "$work/seeds"
cargo build -q --release -p thicket-cli -p thicket-exec --example exec_speed
thicket=${THICKET:-target/release/thicket}
"$thicket" generate specs/json.fan -n 20 --seed 1 --max-depth 8 -o "$work/seeds" --suffix .json
export AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1

afl_rate() { # afl-fuzz's executions per second over its whole run
  awk '/^execs_done/{e=$3} /^run_time/{t=$3} END{printf "%.0f", e/(t>0?t:1)}' "$1/default/fuzzer_stats"
}

echo "== executor alone, ${secs}s each"
target/release/examples/exec_speed "$secs" "$work/seeds" -- "$work/target" @@
rm -rf "$work/afl"
AFL_NO_AFFINITY=1 afl-fuzz -V "$secs" -i "$work/seeds" -o "$work/afl" -- "$work/target" @@ \
  >"$work/afl.log" 2>&1 || { tail -20 "$work/afl.log"; exit 1; }
echo "afl-fuzz (AFL_NO_AFFINITY=1): $(afl_rate "$work/afl") execs/s"

echo "== whole campaign as a user runs it, ${secs}s each, $rounds rounds"
ratios=()
for round in $(seq "$rounds"); do
  rm -rf "$work/thicket" "$work/afl"
  "$thicket" fuzz specs/json.fan -o "$work/thicket" --seed "$round" --time "${secs}s" \
    -- "$work/target" @@ 2>"$work/thicket.log"
  t=$(python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["execs_per_sec"]))' \
    "$work/thicket/stats.json")
  afl-fuzz -V "$secs" -i "$work/seeds" -o "$work/afl" -- "$work/target" @@ >"$work/afl.log" 2>&1 \
    || { tail -20 "$work/afl.log"; exit 1; }
  a=$(afl_rate "$work/afl")
  ratio=$(python3 -c "print(f'{$t / $a:.2f}')")
  ratios+=("$ratio")
  echo "round $round: thicket fuzz $t execs/s, afl-fuzz $a execs/s, ratio $ratio"
done
python3 -c "import statistics,sys; r=sorted(map(float,sys.argv[1:])); print(f'median ratio {statistics.median(r):.2f} (min {r[0]:.2f}, max {r[-1]:.2f})')" "${ratios[@]}"
