"""Reads the campaigns of eval/whitebox_compare.sh and prints the Fig. 5 table.

Stage coverage is lines covered over the stage's statements that can run during a call
(coverage.py's statements in the stage's files and line range, minus module- and
class-body statements, which run at import: the same count thicket's runner uses)."""
import ast
import glob
import json
import os
import sys

from coverage.parser import PythonParser

OUT, BUDGET, SITE = sys.argv[1], sys.argv[2], sys.argv[3]
STAGES = {
    "esprima": {"lexer": ("esprima/scanner.py", None), "parser": ("esprima/parser.py", None),
                "deep": ("esprima/nodes.py", None)},
    "js2py": {"lexer": ("pyjsparser/parser.py", (61, 991)),
              "parser": ("pyjsparser/parser.py", (992, 3041)),
              "deep": ("js2py/translators/translating_nodes.py", None)},
}
PAPER = [
    ("gram-blackbox", 7837, 11.9, 100, 22.1, 100, 24.1, 72.2, 61.2),
    ("wb+tokens", 3086, 16.4, 100, 35.4, 100, 39.2, 15.5, 53.0),
    ("GBW", 2378, 20.0, 100, 24.8, 100, 42.4, 80.7, 81.5),
    ("seeds", 50, 10.6, 100, 18.4, 100, 20.6, 66.0, 50.9),
]


def deftime(source):
    out = set()
    todo = list(ast.parse(source).body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.add(node.lineno)
            out.update(d.lineno for d in node.decorator_list)
            continue
        if isinstance(node, ast.ClassDef):
            out.add(node.lineno)
        elif isinstance(node, ast.stmt):
            out.add(node.lineno)
        for field in ("body", "orelse", "finalbody", "handlers"):
            todo.extend(getattr(node, field, None) or ())
    return out


def statements(pattern, lines):
    total = 0
    for path in glob.glob(os.path.join(SITE, pattern)):
        p = PythonParser(filename=path)
        p.parse_source()
        runs = set(p.statements) - deftime(open(path, "rb").read())
        if lines:
            runs = {l for l in runs if lines[0] <= l <= lines[1]}
        total += len(runs)
    return total


rows = []
for subject in ("esprima", "js2py"):
    totals = {name: statements(*spec) for name, spec in STAGES[subject].items()}
    for strategy in ("seeds", "blackbox-tokens", "whitebox-nogrammar", "whitebox"):
        d = os.path.join(OUT, f"{subject}-{strategy}")
        wb = json.load(open(os.path.join(d, "whitebox.json")))
        st = json.load(open(os.path.join(d, "stats.json")))
        cov = st["coverage"]
        total = 100.0 * cov["lines"] / max(cov["statements"], 1)
        cells = [subject, strategy, wb["inputs_run"], f"{total:.1f}"]
        for stage in wb["stages"]:
            n = totals[stage["name"]]
            cells += [f"{stage['reach_pct']:.1f}", f"{100.0 * stage['covered_lines'] / max(n, 1):.1f}"]
        s = wb["solver"]
        solved = s["calls"] - s["cache_hits"]
        cells += [wb["queries"], f"{wb['unsat_pct']:.1f}", solved,
                  f"{wb['solver_ms_per_call']:.3f}", f"{wb['solver_time_pct']:.2f}",
                  st["distinct_failures"]]
        rows.append(cells)

print(f"Budget per strategy: {BUDGET} (seeds: the 50 seeds alone), seed {os.environ.get('SEED', '1')}, "
      "specs/javascript.fan, 2 shared cores.\n")
print("| subject | strategy | inputs | total % | lex reach | lex cov | parse reach | parse cov "
      "| deep reach | deep cov | queries | UNSAT % | solver calls | ms/call | solver time % | distinct failures |")
print("|" + "---|" * 16)
for r in rows:
    print("| " + " | ".join(str(c) for c in r) + " |")
print("\nThe paper's Fig. 5 (IE7, 2 h per strategy; deep = code generator):\n")
print("| strategy | inputs | total % | lex reach | lex cov | parse reach | parse cov | CG reach | CG cov |")
print("|" + "---|" * 9)
for r in PAPER:
    print("| " + " | ".join(str(c) for c in r) + " |")
