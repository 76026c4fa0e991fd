#!/usr/bin/env bash
# Edges a campaign's queue held at given times, from the queue it left: every entry's name
# carries the millisecond it was kept (`time:MS`, the same in afl-fuzz's and thicket's
# queues, and neither deletes entries), so the queue at time T is the entries with MS <= T.
# Edges are counted as eval/mutator_compare.sh counts them (afl-showmap -C over the
# entries), so one run of T seconds gives the equal-time comparison at every T' <= T.
#
#   bash eval/edges_over_time.sh PROGRAM QUEUE SECONDS...   -> one line: SECONDS=EDGES ...
set -euo pipefail
program=${1:?usage: edges_over_time.sh PROGRAM QUEUE SECONDS...}
queue=${2:?usage: edges_over_time.sh PROGRAM QUEUE SECONDS...}
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
line=()
for secs in "$@"; do
  rm -rf "$work/in" "$work/map"
  mkdir "$work/in"
  for f in "$queue"/id:*; do
    [[ -f $f ]] || continue
    ms=$(basename "$f" | sed -n 's/.*,time:\([0-9]*\).*/\1/p')
    [[ -n $ms ]] || continue
    # afl-showmap -i skips symbolic links, so the entries are copied.
    if ((ms <= secs * 1000)); then cp "$f" "$work/in/"; fi
  done
  if [[ -n $(ls -A "$work/in") ]]; then
    AFL_QUIET=1 afl-showmap -q -C -t 1000 -i "$work/in" -o "$work/map" -- "$program" @@ \
      >/dev/null 2>&1 || true
    edges=$([[ -f $work/map ]] && wc -l <"$work/map" || echo -)
  else
    edges=0
  fi
  line+=("$secs=$edges")
done
echo "${line[@]}"
