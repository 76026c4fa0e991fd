#!/usr/bin/env python3
"""Generated inputs of grammars-v4 ANTLR grammars, judged by independent parsers.

For each grammar folder (the .g4 files of antlr/grammars-v4, e.g. json/JSON.g4), asks
`thicket generate` for N inputs (one seed) and counts how many a real parser of the
language accepts: Python's json, csv (strict), xml.etree, tomllib, tinycss2 (no parse
error anywhere), Node's WHATWG URL and JavaScript compiler (vm.Script: syntax only,
nothing runs), and the C compiler for tinyc (a tinyc program wrapped in a C function
that declares its variables). Grammars without an independent parser here
(smtlibv2) are generated and listed as such. Writes a Markdown table to stdout.

usage: eval/antlr_validity.py [--grammars DIR] [--thicket BIN] [-n N] [--seed S]
DIR defaults to ../shared/data/grammars-v4 beside the checkout (a copy of the folders
of https://github.com/antlr/grammars-v4 listed in GRAMMARS).
"""
import argparse
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# folder -> (start rule or None for the first parser rule, judge name)
GRAMMARS = {
    "json": (None, "python json"),
    "csv": (None, "python csv (strict)"),
    "url": (None, "node WHATWG URL"),
    "xml": (None, "python xml.etree"),
    "toml": (None, "python tomllib"),
    "tinyc": (None, "cc -fsyntax-only"),
    "smtlibv2": (None, None),
    "css3": (None, "tinycss2 (no parse error)"),
    "ecmascript": (None, "node vm.Script"),
    "javascript": (None, "node vm.Script"),
}

NODE_URL = r"""
const fs = require('fs');
let ok = 0;
for (const f of process.argv.slice(1)) {
  try { new URL(fs.readFileSync(f, 'utf8')); ok++; } catch (e) {}
}
console.log(ok);
"""

NODE_JS = r"""
const fs = require('fs'); const vm = require('vm');
let ok = 0;
for (const f of process.argv.slice(1)) {
  try { new vm.Script(fs.readFileSync(f, 'utf8')); ok++; } catch (e) {}
}
console.log(ok);
"""


def judge_python(name, texts):
    ok = 0
    for t in texts:
        try:
            if name == "json":
                json.loads(t)
            elif name == "csv":
                list(csv.reader(io.StringIO(t, newline=""), strict=True))
            elif name == "xml":
                ET.fromstring(t)
            elif name == "toml":
                tomllib.loads(t)
            elif name == "css3":
                import tinycss2

                def clean(nodes):
                    for n in nodes:
                        if n.type == "error":
                            return False
                        if n.type == "qualified-rule" or n.type == "at-rule":
                            if n.content is not None:
                                decls = tinycss2.parse_blocks_contents(n.content)
                                if any(d.type == "error" for d in decls):
                                    return False
                    return True

                if not clean(tinycss2.parse_stylesheet(t)):
                    continue
            ok += 1
        except Exception:
            pass
    return ok


def judge_node(script, files):
    ok = 0
    for i in range(0, len(files), 200):
        out = subprocess.run(["node", "-e", script, "--", *files[i : i + 200]],
                             capture_output=True, text=True, check=True)
        ok += int(out.stdout.strip())
    return ok


def judge_tinyc(files):
    import re

    ok = 0
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            body = Path(f).read_text()
            # tinyc's variables are lower-case words; C wants them declared.
            names = sorted(set(re.findall(r"[a-z]+", body)) - {"do", "if", "else", "while"})
            decl = f"int {', '.join(names)};" if names else ""
            src = Path(tmp, "p.c")
            src.write_text(f"void f(void) {{ {decl}\n{body}\n}}\n")
            r = subprocess.run(["cc", "-fsyntax-only", "-w", str(src)], capture_output=True)
            ok += r.returncode == 0
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--grammars", default=str(ROOT.parent / "shared/data/grammars-v4"))
    ap.add_argument("--thicket", default=str(ROOT / "target/release/thicket"))
    ap.add_argument("-n", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as out:
        for name, (start, judge) in GRAMMARS.items():
            if args.only and name not in args.only:
                continue
            folder = Path(args.grammars, name)
            g4 = sorted(str(p) for p in folder.glob("*.g4"))
            if not g4:
                print(f"{name}: no .g4 in {folder}", file=sys.stderr)
                continue
            # A parser + lexer pair: the parser file is the spec, the lexer --lexer.
            lexers = [p for p in g4 if p.endswith("Lexer.g4")]
            parsers = [p for p in g4 if p not in lexers]
            cmd = [args.thicket, "generate", parsers[0], "-n", str(args.n), "--seed", str(args.seed),
                   "-o", f"{out}/{name}", "--force"]
            for lx in lexers:
                cmd += ["--lexer", lx]
            if start:
                cmd += ["--start", start]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                rows.append((name, judge or "none here", 0, "-", f"generate failed: {r.stderr.strip()[:120]}"))
                continue
            files = sorted(str(p) for p in Path(out, name).iterdir())
            texts = [Path(f).read_text(errors="replace") for f in files]
            mean = sum(len(t.encode()) for t in texts) / max(1, len(texts))
            distinct = len(set(texts))
            if judge is None:
                ok = None
            elif name in ("json", "csv", "xml", "toml", "css3"):
                ok = judge_python(name, texts)
            elif name == "url":
                ok = judge_node(NODE_URL, files)
            elif name in ("ecmascript", "javascript"):
                ok = judge_node(NODE_JS, files)
            elif name == "tinyc":
                ok = judge_tinyc(files)
            rows.append((name, judge or "none here", len(files),
                         "-" if ok is None else f"{ok} ({100 * ok / len(files):.1f}%)",
                         f"mean {mean:.0f} B, {100 * distinct / len(files):.1f}% distinct"))
            print(f"{name}: {rows[-1]}", file=sys.stderr)
    print(f"| grammar | independent parser | inputs (seed {args.seed}) | accepted | size, distinct |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")


if __name__ == "__main__":
    main()
