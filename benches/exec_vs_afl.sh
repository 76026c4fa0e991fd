#!/usr/bin/env bash
# Executions per second: thicket's forkserver executor vs afl-fuzz on the same small
# afl-cc target and inputs. Not run by CI (afl-fuzz runs for a while); figures go to
# docs/feedback.md.
#
#   bash benches/exec_vs_afl.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
AFL_QUIET=1 afl-cc -O1 -o "$work/target" crates/thicket-exec/tests/targets/branches.c
mkdir -p "$work/seeds"
cargo run -q --release -p thicket-cli -- generate specs/json.fan -n 20 --seed 1 --max-depth 8 \
  -o "$work/seeds" --suffix .json
cargo build -q --release -p thicket-exec --example exec_speed

echo "== thicket forkserver executor, ${secs}s"
target/release/examples/exec_speed "$secs" "$work/seeds" -- "$work/target" @@

echo "== afl-fuzz, ${secs}s"
AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1 \
  afl-fuzz -V "$secs" -i "$work/seeds" -o "$work/afl" -- "$work/target" @@ >"$work/afl.log" 2>&1 || {
  tail -20 "$work/afl.log"; exit 1; }
grep -E "^(execs_done|execs_per_sec|run_time) " "$work/afl/default/fuzzer_stats"
echo "afl-fuzz overall: $(awk '/^execs_done/{e=$3} /^run_time/{t=$3} END{printf "%.0f execs/s", e/t}' "$work/afl/default/fuzzer_stats")"
