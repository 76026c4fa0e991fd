#!/usr/bin/env bash
# thicket mine (issue 20) on the bundled specs and on the paper's Table 3 subjects.
#
# Bundled specs (xml, csv, tar): 150 inputs solved for the spec's own constraints
# (`thicket generate`) and 150 generated without them that violate them (`thicket
# check`); 100 + 100 to mine from, 50 + 50 held out. The mined constraint (the best
# result) is checked on the held-out inputs instead of the spec's.
# DOT: inputs generated from eval/mine/dot.fan, labelled by graphviz (`dot -Tcanon`);
# mining also labels 100 mutants (validation off: see docs/mining.md).
# ICMP: echo requests/replies as pythonping builds them, and one-byte mutants the
# checker eval/mine/icmp_check.py rejects; mining also labels mutants with it.
# Racket: not run (see docs/mining.md).
#
# Usage: bash eval/mine.sh [WORKDIR]   (THICKET=path/to/thicket to use another build,
# SUBJECTS="xml csv tar dot icmp" to run some)
# Prints one Markdown table row per subject (docs/mining.md has the table).
set -euo pipefail
cd "$(dirname "$0")/.."
T=${THICKET:-target/release/thicket}
[ -x "$T" ] || cargo build --release -p thicket-cli
W=${1:-$(mktemp -d)}
mkdir -p "$W"

# score NAME SPEC ISLA HELD_POS HELD_NEG SECONDS: TP FN FP TN, recall, specificity,
# precision, accuracy of the mined constraint on the held-out inputs.
score() {
  # check exits 1 when an input is invalid: expected here.
  { "$T" check "$2" --no-spec-constraints --constraint "$3" "$4" "$5" --json 2>/dev/null || true; } |
    python3 -c '
import json, sys
name, pos_dir, secs = sys.argv[1], sys.argv[2], sys.argv[3]
tp = fn = fp = tn = 0
for line in sys.stdin:
    d = json.loads(line)
    pos = d["file"].startswith(pos_dir)
    ok = d["valid"]
    tp += pos and ok; fn += pos and not ok; fp += (not pos) and ok; tn += (not pos) and not ok
pct = lambda a, b: f"{100 * a / b:.0f}" if b else "-"
print(f"| {name} | {tp} | {fn} | {fp} | {tn} | {pct(tp, tp + fn)} | {pct(tn, tn + fp)} | "
      f"{pct(tp, tp + fp)} | {pct(tp + tn, tp + tn + fp + fn)} | {secs} |")
' "$1" "$4" "$6"
}

# mine NAME SPEC OUT ARGS...: runs thicket mine on one core, the best result to OUT.
mine() {
  local name=$1 spec=$2 out=$3
  shift 3
  local start end
  start=$(date +%s.%N)
  "$T" mine "$spec" -j 1 -o "$out" "$@" > "$W/$name.results" 2> "$W/$name.log"
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.1f}')"
}

split() { # DIR N TRAIN HELD: first N files of DIR to TRAIN, the next 50 to HELD
  mkdir -p "$3" "$4"
  # sed reads to the end, so no SIGPIPE under pipefail.
  ls "$1" | sort | sed -n "1,$2p" | while read -r f; do mv "$1/$f" "$3/"; done
  ls "$1" | sort | sed -n "1,50p" | while read -r f; do mv "$1/$f" "$4/"; done
}

SUBJECTS=${SUBJECTS:-xml csv tar dot icmp}
for s in xml csv tar; do
  case " $SUBJECTS " in *" $s "*) ;; *) continue ;; esac
  d=$W/$s
  rm -rf "$d"
  "$T" generate "specs/$s.bnf" -n 150 --seed 1 -o "$d/valid" --suffix ".$s" 2>/dev/null
  "$T" generate "specs/$s.bnf" -n 400 --seed 2 --no-constraints -o "$d/gen" --suffix ".$s" 2>/dev/null
  mkdir -p "$d/invalid"
  for f in "$d"/gen/*; do
    "$T" check "specs/$s.bnf" -q "$f" 2>/dev/null || mv "$f" "$d/invalid/"
  done
  split "$d/valid" 100 "$d/p" "$d/hp"
  split "$d/invalid" 100 "$d/n" "$d/hn"
  secs=$(mine "$s" "specs/$s.bnf" "$d/mined.isla" --positive "$d/p" --negative "$d/n" --time "${MINE_TIME:-5m}")
  score "$s" "specs/$s.bnf" "$d/mined.isla" "$d/hp" "$d/hn" "$secs"
done

if [[ " $SUBJECTS " != *" dot "* ]]; then
  :
elif command -v dot > /dev/null; then
  d=$W/dot
  rm -rf "$d"
  "$T" generate eval/mine/dot.fan -n 600 --seed 1 -o "$d/gen" --suffix .dot 2>/dev/null
  mkdir -p "$d/valid" "$d/invalid"
  for f in "$d"/gen/*; do
    if timeout 5 dot -Tcanon "$f" > /dev/null 2>&1; then mv "$f" "$d/valid/"; else mv "$f" "$d/invalid/"; fi
  done
  split "$d/valid" 100 "$d/p" "$d/hp"
  split "$d/invalid" 100 "$d/n" "$d/hn"
  secs=$(mine dot eval/mine/dot.fan "$d/mined.isla" --positive "$d/p" --negative "$d/n" \
    --generate 0 --mutate 100 --validate 0 --time 5m -- dot -Tcanon @@)
  score "DOT" eval/mine/dot.fan "$d/mined.isla" "$d/hp" "$d/hn" "$secs"
else
  echo "| DOT | graphviz's dot is not installed: skipped |"
fi

[[ " $SUBJECTS " == *" icmp "* ]] || exit 0
d=$W/icmp
rm -rf "$d"
python3 eval/mine/icmp_samples.py 1 100 "$d/p" "$d/n"
python3 eval/mine/icmp_samples.py 2 50 "$d/hp" "$d/hn"
secs=$(mine icmp eval/mine/icmp.fan "$d/mined.isla" --positive "$d/p" --negative "$d/n" \
  --generate 0 --mutate 100 --validate 0 --time 5m -- python3 eval/mine/icmp_check.py @@)
score "ICMP" eval/mine/icmp.fan "$d/mined.isla" "$d/hp" "$d/hn" "$secs"
echo "results, logs and samples in $W" >&2
