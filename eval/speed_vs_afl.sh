#!/usr/bin/env bash
# Executions per second of `thicket fuzz` against afl-fuzz on the C subjects of
# eval/fuzz_compare.sh (cJSON and json-c, afl-cc), with input sizes made comparable: a
# parser's time grows with its input, and thicket's campaign runs inputs of hundreds of
# bytes where afl-fuzz from small seeds runs inputs of tens. So afl-fuzz starts from
# inputs of thicket's campaign of the same seed: the smallest entries of its queue/
# whose mean size is at most the mean size of the inputs the campaign ran
# (`mean_input_size`), with trimming off (AFL_DISABLE_TRIM=1, which would shrink them
# first). The mean size of the inputs each tool runs is then measured the same way for
# both: the size of the input file the target reads, sampled every 10 ms during the run
# (a time-weighted mean: a longer input is sampled more often). thicket's own mean
# (per execution) and its own time per execution (`own_us_per_exec`) are printed too.
# Runs alternate, one at a time; the 1-minute load average is printed per pair.
#
#   bash eval/speed_vs_afl.sh [-t SECONDS] [-s "SEEDS"] [-o OUT] [SUBJECT...]
#   defaults: -t 30 -s "1 2 3" -o target/speed-vs-afl, subjects cjson json-c
#   THICKET=path: use that binary instead of building target/release/thicket
set -euo pipefail
cd "$(dirname "$0")/.."
secs=30
seeds="1 2 3"
out=target/speed-vs-afl
while getopts "t:s:o:" opt; do
  case $opt in
    t) secs=$OPTARG ;;
    s) seeds=$OPTARG ;;
    o) out=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
subjects=${*:-cjson json-c}
for tool in afl-cc afl-fuzz; do
  command -v $tool >/dev/null || { echo "$tool is missing (Debian: apt-get install afl++)" >&2; exit 1; }
done
mkdir -p "$out"
out=$(realpath "$out")
if [[ -z ${THICKET:-} ]]; then cargo build -q --release -p thicket-cli; fi
thicket=$(realpath "${THICKET:-${CARGO_TARGET_DIR:-target}/release/thicket}")
bash eval/build_c_subjects.sh "$out/subjects"

# sample GLOB SECONDS: the mean size of the file GLOB names, sampled every 10 ms.
sample() {
  python3 - "$1" "$2" <<'PY'
import glob, os, sys, time
pattern, secs = sys.argv[1], float(sys.argv[2])
sizes, end = [], time.time() + secs
while time.time() < end:
    for path in glob.glob(pattern)[:1]:
        try:
            sizes.append(os.stat(path).st_size)
        except OSError:
            pass
    time.sleep(0.01)
print(round(sum(sizes) / len(sizes)) if sizes else "-")
PY
}

runs=$out/runs.tsv
printf 'subject\tseed\tthicket_eps\tthicket_mean\tthicket_sampled\town_us\tafl_seeds\tafl_eps\tafl_sampled\tratio\tload\n' >"$runs"
export AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1
for subject in $subjects; do
  program=$out/subjects/$subject
  for seed in $seeds; do
    dir=$out/$subject-$seed
    rm -rf "$dir"
    mkdir -p "$dir"
    load=$(awk '{print $1}' /proc/loadavg)
    # thicket keeps its input file in a folder of its own under TMPDIR.
    mkdir -p "$dir/tmp"
    TMPDIR=$dir/tmp "$thicket" fuzz specs/json.fan -o "$dir/thicket" --seed "$seed" \
      --time "${secs}s" -- "$program" @@ 2>"$dir/thicket.log" &
    pid=$!
    t_sampled=$(sample "$dir/tmp/.thicket-exec-*/cur_input" "$((secs - 1))")
    wait $pid
    read -r t_eps t_mean own < <(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
print(round(s["execs_per_sec"]), round(s["mean_input_size"]), round(s["own_us_per_exec"], 1))' \
      "$dir/thicket/stats.json")
    # afl-fuzz's seeds: thicket's smallest kept inputs, their mean within t_mean.
    mkdir -p "$dir/seeds"
    python3 - "$dir/thicket/queue" "$dir/seeds" "$t_mean" <<'PY'
import os, shutil, sys
queue, seeds, most = sys.argv[1], sys.argv[2], float(sys.argv[3])
files = sorted((os.path.getsize(os.path.join(queue, f)), f) for f in os.listdir(queue)
               if f.startswith("id:"))
total = 0
for n, (size, name) in enumerate(files, 1):
    if n > 1 and (total + size) / n > most:
        break
    total += size
    shutil.copy(os.path.join(queue, name), os.path.join(seeds, name.replace(":", "_")))
PY
    AFL_DISABLE_TRIM=1 afl-fuzz -s "$seed" -V "$secs" -i "$dir/seeds" -o "$dir/afl" \
      -- "$program" @@ >"$dir/afl.log" 2>&1 &
    pid=$!
    sleep 1
    a_sampled=$(sample "$dir/afl/default/.cur_input" "$((secs - 2))")
    wait $pid || { tail -5 "$dir/afl.log" >&2; continue; }
    a_eps=$(awk '/^execs_done/{e=$3} /^run_time/{t=$3} END{printf "%.0f", e/(t>0?t:1)}' \
      "$dir/afl/default/fuzzer_stats")
    ratio=$(python3 -c "print(f'{$t_eps / max($a_eps, 1):.2f}')")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$subject" "$seed" "$t_eps" \
      "$t_mean" "$t_sampled" "$own" "$(ls "$dir/seeds" | wc -l)" "$a_eps" "$a_sampled" "$ratio" \
      "$load" | tee -a "$runs"
  done
done
column -t "$runs"
