#!/usr/bin/env bash
# The comparison table of docs/fuzz-eval.md: thicket fuzz with feedback, with --valid-only, without
# feedback (random generation), and afl-fuzz where installed (C subjects), 3 seeds each,
# the same number of executions, on real programs nobody here wrote:
#   json     Python's json, pure-Python decoder (crates/thicket-exec/tests/targets/py)
#   urllib   Python's urllib.parse (split, parse, query, quote, join)
#   minidom  Python's xml.dom.minidom (specs/xml.bnf with its constraints)
#   cjson    cJSON 1.7.15, afl-cc (eval/build_c_subjects.sh: Debian sources)
#   json-c   json-c 0.16, afl-cc
# Coverage: statements and branches of the package as thicket counts them (= coverage.py,
# during inputs) for Python; edges for C, measured the same way for every tool: afl-showmap
# -C over the kept inputs (queue/). Writes OUT/runs.tsv and OUT/table.md (median and
# min-max over the seeds) and prints the table.
#
#   bash eval/fuzz_compare.sh [-n EXECS] [-s "SEEDS"] [-m "MODES"] [-o OUT] [SUBJECT...]
#   defaults: -n 5000 -s "1 2 3" -m "feedback valid-only random afl-fuzz"
#   -o target/fuzz-eval, all subjects (afl-fuzz runs on the C subjects only)
#   THICKET=path/to/thicket: use that binary (e.g. to compare two versions) instead of
#   building target/release/thicket
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
execs=5000
seeds="1 2 3"
all_modes="feedback valid-only random afl-fuzz"
out=target/fuzz-eval
while getopts "n:s:m:o:" opt; do
  case $opt in
    n) execs=$OPTARG ;;
    s) seeds=$OPTARG ;;
    m) all_modes=$OPTARG ;;
    o) out=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
subjects=${*:-json urllib minidom cjson json-c}
mkdir -p "$out"
out=$(realpath "$out")
if [[ -n ${THICKET:-} ]]; then
  thicket=$(realpath "$THICKET")
else
  cargo build -q --release -p thicket-cli
  thicket=$repo/target/release/thicket
fi
py=crates/thicket-exec/tests/targets/py
have_afl=0
if command -v afl-cc >/dev/null && command -v afl-showmap >/dev/null; then have_afl=1; fi
case " $subjects " in
  *" cjson "* | *" json-c "*)
    if [[ $have_afl = 1 ]]; then bash eval/build_c_subjects.sh "$out/subjects"; fi ;;
esac
runs=$out/runs.tsv
# The machine's load (other builds share it): execs/s are comparable only at similar load.
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
printf 'subject\tmode\tseed\texecs\tcoverage\tbranches\tkept\texecs_per_s\n' >"$runs"
# Per operation of thicket's campaigns (stats.json "ops"): runs it made, inputs kept.
printf 'subject\tmode\tseed\top\truns\tkept\n' >"$out/ops.tsv"

# edges DIR PROGRAM: edges the inputs in DIR reach (afl-showmap -C).
edges() {
  AFL_QUIET=1 afl-showmap -q -C -i "$1" -o "$1.map" -- "$2" @@ >/dev/null 2>&1 || true
  wc -l <"$1.map"
}

for subject in $subjects; do
  flags=()
  program=
  case $subject in
    json) spec=specs/json.fan
      flags=(--python "$py/json_target.py:target" --python-include '*/json/*'
             --expected-exception JSONDecodeError) ;;
    urllib) spec=specs/url.fan
      flags=(--python "$py/url_target.py:target" --python-include '*/urllib/*') ;;
    minidom) spec=specs/xml.bnf
      flags=(--python eval/targets/minidom_target.py:target --python-include '*/xml/dom/*'
             --expected-exception ExpatError --max-depth 12) ;;
    cjson | json-c) spec=specs/json.fan
      if [[ $have_afl = 0 ]]; then echo "skipped $subject: afl-cc or afl-showmap missing" >&2; continue; fi
      program=$out/subjects/$subject ;;
    *) echo "unknown subject $subject" >&2; exit 2 ;;
  esac
  modes=
  for mode in $all_modes; do
    case $mode in
      feedback | valid-only | random) modes="$modes $mode" ;;
      afl-fuzz) [[ -n $program ]] && command -v afl-fuzz >/dev/null && modes="$modes afl-fuzz" ;;
      *) echo "unknown mode $mode" >&2; exit 2 ;;
    esac
  done
  for seed in $seeds; do
    for mode in $modes; do
      dir=$out/$subject/$mode-$seed
      rm -rf "$dir"
      mkdir -p "$(dirname "$dir")"
      if [[ $mode = afl-fuzz ]]; then
        # Seeds: 10 generated inputs (as thicket's campaign starts from generation).
        rm -rf "$dir.seeds"
        "$thicket" generate "$spec" -n 10 --seed "$seed" --max-depth 8 -o "$dir.seeds" --suffix .json 2>/dev/null
        AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1 \
          AFL_QUIET=1 timeout 3600 afl-fuzz -s "$seed" -E "$execs" -i "$dir.seeds" -o "$dir" \
          -- "$program" @@ >"$dir.log" 2>&1 || { tail -5 "$dir.log" >&2; continue; }
        stats=$dir/default/fuzzer_stats
        n=$(awk '/^execs_done/{print $3}' "$stats")
        eps=$(awk '/^execs_done/{e=$3} /^run_time/{t=$3} END{printf "%.0f", e/(t>0?t:1)}' "$stats")
        kept=$(awk '/^corpus_count/{print $3}' "$stats")
        cov=$(edges "$dir/default/queue" "$program")
        printf '%s\t%s\t%s\t%s\t%s\t-\t%s\t%s\n' "$subject" "$mode" "$seed" "$n" "$cov" "$kept" "$eps" >>"$runs"
        continue
      fi
      extra=()
      case $mode in
        valid-only) extra=(--valid-only) ;;
        random) extra=(--no-feedback) ;;
      esac
      if [[ -n $program ]]; then
        target=(-- "$program" @@)
      else
        target=()
      fi
      timeout 3600 "$thicket" fuzz "$spec" -o "$dir" --seed "$seed" --execs "$execs" \
        "${extra[@]}" "${flags[@]}" "${target[@]}" 2>"$dir.log" || { tail -5 "$dir.log" >&2; continue; }
      read -r n cov branches kept eps < <(python3 - "$dir/stats.json" "$subject" "$mode" "$seed" "$out/ops.tsv" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
c = s["coverage"]
cov = c.get("lines") if c["kind"] == "python" else c.get("edges")
print(s["execs"], cov, c.get("branches", "-"), s["queue"], round(s["execs_per_sec"]))
with open(sys.argv[5], "a") as ops:
    for op, count in s.get("ops", {}).items():
        print(*sys.argv[2:5], op, count["runs"], count["kept"], sep="\t", file=ops)
PY
)
      [[ -n $program ]] && cov=$(edges "$dir/queue" "$program") && branches=-
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$subject" "$mode" "$seed" "$n" "$cov" "$branches" "$kept" "$eps" >>"$runs"
    done
  done
done

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$runs" "$execs" "$seeds" "$load_before" "$load_after" >"$out/table.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
execs, seeds, load_before, load_after = sys.argv[2:6]
def cell(values):
    nums = [float(v) for v in values if v not in ("-", "")]
    if not nums:
        return "-"
    med = statistics.median(nums)
    fmt = lambda x: f"{x:,.0f}" if x == int(x) else f"{x:,.1f}"
    return f"{fmt(med)} ({fmt(min(nums))}-{fmt(max(nums))})"
print(f"{execs} executions per run, seeds {seeds}; median (min-max) over the seeds. "
      "Coverage: statements (Python, as coverage.py counts them, during inputs) or edges "
      f"(C, afl-showmap -C over queue/). Load average (1, 5, 15 min) {load_before} at the "
      f"start, {load_after} at the end.\n")
print("| subject | mode | coverage | branches | kept | execs/s |")
print("|---|---|---|---|---|---|")
order = ["feedback", "valid-only", "random", "afl-fuzz"]
subjects = list(dict.fromkeys(r["subject"] for r in rows))
for subject in subjects:
    for mode in order:
        rs = [r for r in rows if r["subject"] == subject and r["mode"] == mode]
        if not rs:
            continue
        print(f"| {subject} | {mode} | {cell(r['coverage'] for r in rs)} | "
              f"{cell(r['branches'] for r in rs)} | {cell(r['kept'] for r in rs)} | "
              f"{cell(r['execs_per_s'] for r in rs)} |")
# Seed by seed: does a mode reach more coverage than random generation with the same seed?
print()
for subject in subjects:
    random = {r["seed"]: float(r["coverage"]) for r in rows
              if r["subject"] == subject and r["mode"] == "random"}
    for mode in ["feedback", "valid-only", "afl-fuzz"]:
        rs = [r for r in rows if r["subject"] == subject and r["mode"] == mode
              and r["seed"] in random]
        if rs:
            wins = sum(float(r["coverage"]) > random[r["seed"]] for r in rs)
            print(f"- {subject}: {mode} above random in {wins} of {len(rs)} seeds")
PY
cat "$out/table.md"
