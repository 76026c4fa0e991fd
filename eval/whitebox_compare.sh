#!/usr/bin/env bash
# The paper's comparison (Godefroid, Kiezun, Levin, PLDI'08, Fig. 5) on two Python
# JavaScript front ends from PyPI: esprima 4.0.1 (parseScript) and js2py (translate_js:
# pyjsparser's lexer and parser, then js2py's translator, the code generator stage).
# Each strategy gets the same time budget, seed and grammar (specs/javascript.fan);
# the whitebox strategies start from 50 seeds of 15-20 tokens. Writes
# docs/whitebox-results.md (the table) and leaves the campaigns in $OUT.
#
# Usage: eval/whitebox_compare.sh [BUDGET] [OUT]   (default 120s, /tmp/thicket-whitebox)
# Needs: pip install esprima==4.0.1 js2py coverage; a built thicket (cargo build).
set -euo pipefail
cd "$(dirname "$0")/.."
BUDGET=${1:-120s}
OUT=${2:-/tmp/thicket-whitebox}
THICKET=${THICKET:-target/debug/thicket}
SEED=${SEED:-1}
rm -rf "$OUT"
mkdir -p "$OUT"
site=$(python3 -c 'import esprima, os; print(os.path.dirname(os.path.dirname(esprima.__file__)))')

run() { # subject strategy budget-args...
    local subject=$1 strategy=$2
    shift 2
    local args=()
    case $subject in
    esprima)
        args=(--python esprima:parseScript --tokenizer esprima.scanner:Scanner.lex
            --expected-exception Error
            --stage "lexer=*/esprima/scanner.py" --stage "parser=*/esprima/parser.py"
            --stage "deep=*/esprima/nodes.py")
        ;;
    js2py)
        # pyjsparser holds lexer (lines 61-991: scanning methods) and parser in one file.
        args=(--python js2py:translate_js --tokenizer pyjsparser.parser:PyJsParser.advance
            --python-include '*/pyjsparser/*' --python-include '*/js2py/translators/*'
            --expected-exception JsException
            --stage "lexer=*/pyjsparser/parser.py:61-991"
            --stage "parser=*/pyjsparser/parser.py:992-3041"
            --stage "deep=*/js2py/translators/translating_nodes.py")
        ;;
    esac
    echo "== $subject $strategy $*" >&2
    "$THICKET" fuzz specs/javascript.fan -o "$OUT/$subject-$strategy" --seed "$SEED" \
        --max-depth 20 --timeout 5000 --strategy "$strategy" "$@" "${args[@]}" \
        >"$OUT/$subject-$strategy.log" 2>&1 || { cat "$OUT/$subject-$strategy.log"; exit 1; }
    tail -4 "$OUT/$subject-$strategy.log" >&2
}

for subject in esprima js2py; do
    # The seeds alone: the whitebox search stopped after its 50 seeds.
    run "$subject" whitebox --execs 50
    mv "$OUT/$subject-whitebox" "$OUT/$subject-seeds"
    mv "$OUT/$subject-whitebox.log" "$OUT/$subject-seeds.log"
    for strategy in blackbox-tokens whitebox-nogrammar whitebox; do
        run "$subject" "$strategy" --time "$BUDGET"
    done
done

python3 eval/whitebox_table.py "$OUT" "$BUDGET" "$site" >docs/whitebox-results.md
cat docs/whitebox-results.md
