#!/usr/bin/env bash
# Executions per second of `thicket fuzz` against afl-fuzz on the C subjects of
# eval/fuzz_compare.sh (cJSON and json-c, afl-cc), with input sizes made comparable: a
# parser's time grows with its input, and thicket's campaign runs inputs of hundreds of
# bytes where afl-fuzz from small seeds runs inputs of tens.
#
# How the sizes are made comparable. The mean size of the inputs each tool runs is
# measured the same way for both: the size of the input file the target reads, sampled
# every 10 ms during the run (a time-weighted mean: a longer input is sampled more often).
# afl-fuzz starts from inputs of thicket's campaign of the same seed, taken from its
# queue/: the entries nearest in size to a goal (within a quarter of it, at least 20). A
# narrow band, because afl-fuzz runs its favoured entries most, and those are the small
# ones: from the smallest entries up to a mean, as this script first chose, afl-fuzz's
# inputs were well below thicket's. Nor does afl-fuzz run its seeds as they are (its
# havoc cuts and grows them), so the goal is calibrated: the first run's goal is 4/3 of
# thicket's sampled mean (in trial runs on cJSON afl-fuzz ran inputs of 0.72-0.81 of its
# seeds' mean); when afl-fuzz's sampled mean lands more than TOL% (-p, default 12) from
# thicket's, afl-fuzz runs again from seeds whose goal is scaled by thicket's sampled mean
# over afl-fuzz's (the factor held within 0.5-2: a short run's sample can be far off), at
# most RETRIES (-r, default 1) times. The row reported is afl-fuzz's last run; every run
# is kept in OUT/afl_runs.tsv. Trimming is off (AFL_DISABLE_TRIM=1): it would first shrink
# the seeds, chosen for their size. A secondary column normalises by size:
# thicket's execs/s times its sampled mean over afl-fuzz's (bytes per second), which
# overstates the cost of size (a run's fork and start do not grow with its input).
# thicket's own mean (per execution) and its own time per execution (`own_us_per_exec`)
# are printed too. Runs alternate, one at a time; the 1-minute load average is printed
# per pair.
#
#   bash eval/speed_vs_afl.sh [-t SECONDS] [-s "SEEDS"] [-o OUT] [-p TOL] [-r RETRIES] [SUBJECT...]
#   defaults: -t 30 -s "1 2 3" -o target/speed-vs-afl -p 12 -r 1, subjects cjson json-c
#   THICKET=path: use that binary instead of building target/release/thicket
set -euo pipefail
cd "$(dirname "$0")/.."
secs=30
seeds="1 2 3"
out=target/speed-vs-afl
tolerance=12
retries=1
while getopts "t:s:o:p:r:" opt; do
  case $opt in
    t) secs=$OPTARG ;;
    s) seeds=$OPTARG ;;
    o) out=$OPTARG ;;
    p) tolerance=$OPTARG ;;
    r) retries=$OPTARG ;;
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

# pick_seeds QUEUE SEEDS GOAL: copies the entries of QUEUE nearest to GOAL in size into
# SEEDS (those within a quarter of GOAL, at least 20); prints their number and mean size.
pick_seeds() {
  python3 - "$1" "$2" "$3" <<'PY'
import os, shutil, sys
queue, seeds, goal = sys.argv[1], sys.argv[2], float(sys.argv[3])
files = sorted((abs(os.path.getsize(os.path.join(queue, f)) - goal), f)
               for f in os.listdir(queue) if f.startswith("id:"))
near = [f for n, (off, f) in enumerate(files) if n < 20 or off <= goal / 4]
for name in near:
    shutil.copy(os.path.join(queue, name), os.path.join(seeds, name.replace(":", "_")))
sizes = [os.path.getsize(os.path.join(queue, f)) for f in near]
print(len(near), round(sum(sizes) / len(sizes)))
PY
}

runs=$out/runs.tsv
afl_runs=$out/afl_runs.tsv
printf 'subject\tseed\tthicket_eps\tthicket_mean\tthicket_sampled\town_us\tafl_seeds\tafl_seed_mean\tafl_eps\tafl_sampled\tratio\tbytes_ratio\tload\n' >"$runs"
printf 'subject\tseed\trun\tgoal\tafl_seeds\tafl_seed_mean\tafl_eps\tafl_sampled\tthicket_sampled\tload\n' >"$afl_runs"
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
    # afl-fuzz ran inputs of 0.72-0.81 of its seeds' mean in trial runs on cJSON.
    goal=$((t_sampled * 4 / 3))
    ok=1
    for run in $(seq 0 "$retries"); do
      rm -rf "$dir/seeds" "$dir/afl"
      mkdir -p "$dir/seeds"
      read -r n_seeds seed_mean < <(pick_seeds "$dir/thicket/queue" "$dir/seeds" "$goal")
      a_load=$(awk '{print $1}' /proc/loadavg)
      AFL_DISABLE_TRIM=1 afl-fuzz -s "$seed" -V "$secs" -i "$dir/seeds" -o "$dir/afl" \
        -- "$program" @@ >"$dir/afl.log" 2>&1 &
      pid=$!
      sleep 1
      a_sampled=$(sample "$dir/afl/default/.cur_input" "$((secs - 2))")
      wait $pid || { tail -5 "$dir/afl.log" >&2; ok=0; break; }
      a_eps=$(awk '/^execs_done/{e=$3} /^run_time/{t=$3} END{printf "%.0f", e/(t>0?t:1)}' \
        "$dir/afl/default/fuzzer_stats")
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$subject" "$seed" "$run" "$goal" \
        "$n_seeds" "$seed_mean" "$a_eps" "$a_sampled" "$t_sampled" "$a_load" >>"$afl_runs"
      # Within the tolerance, or the last try: this run is the one reported.
      goal=$(python3 -c "
t, a, g, tol = $t_sampled, $a_sampled, $goal, $tolerance / 100
print('' if abs(a - t) <= tol * t else round(g * min(max(t / max(a, 1), 0.5), 2)))")
      [[ -z $goal ]] && break
    done
    ((ok)) || continue
    read -r ratio bytes_ratio < <(python3 -c "
print(f'{$t_eps / max($a_eps, 1):.2f}', f'{$t_eps * $t_sampled / max($a_eps * $a_sampled, 1):.2f}')")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$subject" "$seed" "$t_eps" \
      "$t_mean" "$t_sampled" "$own" "$n_seeds" "$seed_mean" "$a_eps" "$a_sampled" "$ratio" \
      "$bytes_ratio" "$load" | tee -a "$runs"
  done
done
column -t "$runs"
