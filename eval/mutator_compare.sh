#!/usr/bin/env bash
# Issue 22's comparison: AFL++ alone, AFL++ with thicket's custom mutator, and `thicket fuzz`,
# on real C JSON parsers (cJSON 1.7.15 and json-c 0.16 from Debian's sources, afl-cc:
# eval/build_c_subjects.sh), the same wall time per run, one run after another.
#
# Configurations:
#   afl            afl-fuzz alone
#   afl+thicket    afl-fuzz with AFL_CUSTOM_MUTATOR_LIBRARY=libthicket_mutator.so (THICKET_SPEC=
#                  specs/json.fan) next to its own havoc
#   thicket-only   the same with AFL_CUSTOM_MUTATOR_ONLY=1 (thicket's mutations only)
#   thicket        thicket fuzz specs/json.fan --time T (generates its own start: it takes no seeds)
# afl-fuzz runs start from eval/seeds/json/ (five small valid JSON documents), with -s SEED
# (which also seeds the mutator), -V T, AFL_NO_UI AFL_SKIP_CPUFREQ AFL_NO_AFFINITY
# AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES.
#
# Figures per run: edges of the final queue, measured the same way for every configuration
# (afl-showmap -C -i QUEUE, the inputs kept, not the crashes); crashes saved (AFL: its
# crashes/ folder, deduplicated by new edges; thicket: distinct kind@location); executions;
# execs/s (executions / wall seconds of the run); queue size; for the mutator, the share of
# its calls whose entry was outside the grammar (THICKET_MUTATOR_STATS: `fresh` / `calls`);
# the share of the queue that specs/json.fan parses;
# the 1-minute load average when the run started. Writes OUT/runs.tsv and OUT/table.md
# (median and min-max over the seeds) and prints the table.
#
#   bash eval/mutator_compare.sh [-t SECONDS] [-s "SEEDS"] [-o OUT] [-c "CONFIGS"] [SUBJECT...]
#   defaults: -t 60 -s "1 2 3" -o target/mutator-eval -c "afl afl+thicket thicket-only thicket",
#   subjects cjson json-c
#   THICKET=path, MUTATOR=path: use those builds instead of building target/release's
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
budget=60
seeds="1 2 3"
out=target/mutator-eval
configs="afl afl+thicket thicket-only thicket"
while getopts "t:s:o:c:" opt; do
  case $opt in
    t) budget=$OPTARG ;;
    s) seeds=$OPTARG ;;
    o) out=$OPTARG ;;
    c) configs=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
subjects=${*:-cjson json-c}
for tool in afl-cc afl-fuzz afl-showmap; do
  command -v $tool >/dev/null || { echo "$tool is missing (Debian: apt-get install afl++)" >&2; exit 1; }
done
mkdir -p "$out"
out=$(realpath "$out")
if [[ -z ${THICKET:-} || -z ${MUTATOR:-} ]]; then
  cargo build -q --release -p thicket-cli -p thicket-mutator
fi
thicket=$(realpath "${THICKET:-${CARGO_TARGET_DIR:-target}/release/thicket}")
mutator=$(realpath "${MUTATOR:-${CARGO_TARGET_DIR:-target}/release/libthicket_mutator.so}")
spec=$repo/specs/json.fan
seed_dir=$repo/eval/seeds/json
bash eval/build_c_subjects.sh "$out/subjects"

runs=$out/runs.tsv
printf 'subject\tconfig\tseed\twall_s\texecs\texecs_per_s\tedges\tcrashes\tqueue\tmutator_calls\tmutator_fresh\tin_grammar\tload\n' >"$runs"
load_start=$(uptime)
echo "start: $load_start" >&2

# edges DIR PROGRAM: edges the inputs in DIR reach (afl-showmap -C), 0 for an empty DIR.
edges() {
  [[ -n $(ls -A "$1" 2>/dev/null) ]] || { echo 0; return; }
  AFL_QUIET=1 afl-showmap -q -C -t 1000 -i "$1" -o "$1.map" -- "$2" @@ >/dev/null 2>&1 || true
  if [[ -f $1.map ]]; then wc -l <"$1.map"; else echo -; fi
}
# in_grammar DIR: percentage of the inputs in DIR that the spec parses.
in_grammar() {
  local n=0 ok=0 f
  for f in "$1"/id:*; do
    [[ -f $f ]] || continue
    n=$((n + 1))
    "$thicket" parse "$spec" --quiet "$f" 2>/dev/null && ok=$((ok + 1))
  done
  if ((n > 0)); then echo $((100 * ok / n)); else echo -; fi
}
# count DIR: inputs saved in DIR (AFL's layout: id:... files).
count() { find "$1" -maxdepth 1 -type f -name 'id:*' 2>/dev/null | wc -l; }

for subject in $subjects; do
  program=$out/subjects/$subject
  [[ -x $program ]] || { echo "unknown subject $subject" >&2; exit 2; }
  for seed in $seeds; do
    for config in $configs; do
      dir=$out/$subject/$config-$seed
      rm -rf "$dir" "$dir".*
      mkdir -p "$(dirname "$dir")"
      load=$(awk '{print $1}' /proc/loadavg)
      echo "$subject $config seed $seed (${budget}s, load $load)" >&2
      start=$(date +%s.%N)
      calls=- fresh=-
      case $config in
        afl | afl+thicket | thicket-only)
          env=(AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1
               AFL_NO_AFFINITY=1)
          if [[ $config != afl ]]; then
            env+=(AFL_CUSTOM_MUTATOR_LIBRARY="$mutator" THICKET_SPEC="$spec"
                  THICKET_MUTATOR_STATS="$dir.mutator")
          fi
          [[ $config = thicket-only ]] && env+=(AFL_CUSTOM_MUTATOR_ONLY=1)
          env "${env[@]}" timeout $((budget + 120)) afl-fuzz -s "$seed" -V "$budget" \
            -i "$seed_dir" -o "$dir" -- "$program" @@ >"$dir.log" 2>&1 \
            || { echo "afl-fuzz failed:" >&2; tail -5 "$dir.log" >&2; continue; }
          wall=$(echo "$(date +%s.%N) - $start" | bc)
          stats=$dir/default/fuzzer_stats
          execs=$(awk '/^execs_done/{print $3}' "$stats")
          queue=$dir/default/queue
          crashes=$(count "$dir/default/crashes")
          if [[ -f $dir.mutator ]]; then
            calls=$(awk '/^calls/{print $2}' "$dir.mutator")
            fresh=$(awk '/^fresh/{print $2}' "$dir.mutator")
          fi ;;
        thicket)
          timeout $((budget + 120)) "$thicket" fuzz "$spec" -o "$dir" --seed "$seed" \
            --time "${budget}s" -- "$program" @@ >"$dir.log" 2>&1 \
            || { echo "thicket fuzz failed:" >&2; tail -5 "$dir.log" >&2; continue; }
          wall=$(echo "$(date +%s.%N) - $start" | bc)
          read -r execs crashes < <(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
print(s["execs"], s["distinct_failures"])' "$dir/stats.json")
          queue=$dir/queue ;;
        *) echo "unknown configuration $config" >&2; exit 2 ;;
      esac
      eps=$(echo "$execs / $wall" | bc)
      cov=$(edges "$queue" "$program")
      printf '%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$subject" "$config" \
        "$seed" "$wall" "$execs" "$eps" "$cov" "$crashes" "$(count "$queue")" "$calls" "$fresh" \
        "$(in_grammar "$queue")" "$load" >>"$runs"
      tail -1 "$runs" >&2
    done
  done
done
load_end=$(uptime)
echo "end: $load_end" >&2

python3 - "$runs" "$budget" "$seeds" "$load_start" "$load_end" >"$out/table.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
budget, seeds, load_start, load_end = sys.argv[2:6]
def cell(values):
    nums = [float(v) for v in values if v not in ("-", "")]
    if not nums:
        return "-"
    med = statistics.median(nums)
    fmt = lambda x: f"{x:,.0f}" if x == int(x) or abs(x) >= 100 else f"{x:,.1f}"
    return f"{fmt(med)} ({fmt(min(nums))}-{fmt(max(nums))})"
def fresh_share(r):
    if r["mutator_calls"] in ("-", "", "0"):
        return "-"
    return str(100 * int(r["mutator_fresh"]) / int(r["mutator_calls"]))
print(f"{budget} s per run, seeds {seeds}, one run at a time; median (min-max) over the seeds. "
      "Edges: afl-showmap -C over the final queue. Load: 1-minute average at each run's start.\n")
print(f"- load at start: `{load_start.strip()}`")
print(f"- load at end: `{load_end.strip()}`\n")
print("| subject | configuration | edges | crashes | executions | execs/s | queue | queue in grammar (%) | mutator calls on entries outside the grammar (%) | load |")
print("|---|---|---|---|---|---|---|---|---|---|")
order = ["afl", "afl+thicket", "thicket-only", "thicket"]
subjects = list(dict.fromkeys(r["subject"] for r in rows))
for subject in subjects:
    for config in order:
        rs = [r for r in rows if r["subject"] == subject and r["config"] == config]
        if not rs:
            continue
        print(f"| {subject} | {config} | {cell(r['edges'] for r in rs)} | "
              f"{cell(r['crashes'] for r in rs)} | {cell(r['execs'] for r in rs)} | "
              f"{cell(r['execs_per_s'] for r in rs)} | {cell(r['queue'] for r in rs)} | "
              f"{cell(r['in_grammar'] for r in rs)} | "
              f"{cell(fresh_share(r) for r in rs)} | {cell(r['load'] for r in rs)} |")
PY
cat "$out/table.md"
