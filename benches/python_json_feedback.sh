#!/usr/bin/env bash
# Lines of Python's json module (pure-Python decoder) reached by N inputs: the feedback
# campaign vs plain random generation (--no-feedback), same seeds, same N. Figures go to
# docs/feedback.md.
#
#   bash benches/python_json_feedback.sh [N] [SEEDS...]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
shift || true
seeds=${*:-1 2 3}
cargo build -q --release -p thicket-cli
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
harness=crates/thicket-exec/tests/targets/py/json_target.py:target
printf '%-6s %-12s %6s %9s %6s\n' seed mode lines branches kept
for seed in $seeds; do
  for mode in feedback valid-only random; do
    case $mode in
      feedback) flags=() ;;
      valid-only) flags=(--valid-only) ;;
      random) flags=(--no-feedback) ;;
    esac
    out="$work/$mode-$seed"
    target/release/thicket fuzz specs/json.fan -o "$out" --seed "$seed" --execs "$n" \
      --python "$harness" --python-include '*/json/*' --expected-exception JSONDecodeError \
      "${flags[@]}" 2>/dev/null
    python3 - "$out/stats.json" "$seed" "$mode" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
c = s["coverage"]
print(f"{sys.argv[2]:<6} {sys.argv[3]:<12} {c['lines']:>6} {c['branches']:>9} {s['queue']:>6}"
      f"   (of {c['statements']} statements, {c['branch_total']} branches)")
PY
  done
done
