#!/usr/bin/env bash
# Runs `thicket fuzz` on each Java subject of eval/java/Subjects.java and writes a table of
# coverage and exceptions (OUT/table.tsv): the Java half of issue 17's comparison.
#
#   eval/java/run.sh OUT [EXECS] [SEEDS] [STRATEGY]
#
# EXECS per campaign (default 2000), seeds 1..SEEDS (default 1). STRATEGY is passed as
# `--strategy STRATEGY` (random, probabilistic, inverse, evogfuzz, fdloop: the campaign
# strategies of `thicket fuzz --strategy`); empty or `coverage`: thicket's default
# coverage-guided loop, without the option. Rhino and cssparser need a grammar of their
# language: set RHINO_SPEC and CSS_SPEC (e.g. an ANTLR .g4 grammar), else they are
# skipped. THICKET (default: target/release/thicket) is the binary.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:?usage: $0 OUT [EXECS] [SEEDS] [STRATEGY]}"
execs="${2:-2000}"
seeds="${3:-1}"
strategy="${4:-}"
thicket="${THICKET:-$root/target/release/thicket}"
[ -x "$thicket" ] || (cd "$root" && cargo build --release -p thicket-cli)
cp="$("$here/build.sh")"
strategy_args=()
if [ -n "$strategy" ] && [ "$strategy" != coverage ]; then
    strategy_args=(--strategy "$strategy")
fi
# subject method, spec, include patterns
subjects=(
    "gson $root/specs/json.fan com.google.gson.*"
    "jacksonCore $root/specs/json.fan com.fasterxml.jackson.core.*"
    "jackson $root/specs/json.fan com.fasterxml.jackson.*"
    "jsonSimple $root/specs/json.fan org.json.simple.*"
    "commonsCsv $root/specs/csv.bnf org.apache.commons.csv.*"
    "rhino ${RHINO_SPEC:-} org.mozilla.javascript.*"
    "cssparser ${CSS_SPEC:-} com.steadystate.css.*"
)
mkdir -p "$out"
table="$out/table.tsv"
printf 'subject\tstrategy\tseed\texecs\tmethods\tmethod_total\tlines\tline_total\tdistinct_failures\texceptions\telapsed_s\n' >"$table"
for entry in "${subjects[@]}"; do
    read -r name spec includes <<<"$entry"
    if [ -z "$includes" ]; then # no spec given: the pattern shifted into $spec
        echo "skipping $name: set its spec (RHINO_SPEC / CSS_SPEC)" >&2
        continue
    fi
    for seed in $(seq 1 "$seeds"); do
        dir="$out/$name-${strategy:-coverage}-$seed"
        rm -rf "$dir"
        echo "== $name seed $seed" >&2
        "$thicket" fuzz "$spec" -o "$dir" --seed "$seed" --execs "$execs" \
            "${strategy_args[@]}" --java "thicket.subjects.Subjects.$name" --classpath "$cp" \
            --java-includes "$includes" >/dev/null
        python3 - "$dir/stats.json" "$name" "${strategy:-coverage}" "$seed" >>"$table" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
c = s["coverage"]
exc = sum(f["count"] for f in s["failures"] if f["key"].startswith("java "))
print("\t".join(str(v) for v in [sys.argv[2], sys.argv[3], sys.argv[4], s["execs"],
      c.get("methods", 0), c.get("method_total", 0), c.get("lines", 0),
      c.get("statements", 0), s["distinct_failures"], exc, round(s["elapsed_s"], 1)]))
PY
    done
done
column -t -s $'\t' "$table"
