#!/usr/bin/env python3
"""ANTLR's own verdict on inputs: the ANTLR 4 tool (antlr-ng, from npm) generates a
Python parser for a grammar, and the Python runtime (PyPI antlr4-python3-runtime
4.13.2) parses each input from the start rule. Predicates and actions are the
grammar's own Python target code; grammars written for another target fail to
generate or to run, and are reported so. Python files given with the grammars (a
lexer's `superClass`, such as grammars-v4's PythonLexerBase.py) are put beside the
generated code.

usage:
  eval/antlr_oracle.py [--start RULE] [--tokens] [--cache DIR] GRAMMAR.g4 [LEXER.g4 ...] [BASE.py ...] -- INPUT...
  eval/antlr_oracle.py ... --stdin-json      (inputs as a JSON list of strings on stdin)
  eval/antlr_oracle.py --probe               (exit 0 when antlr-ng and the runtime are there)

Prints one JSON object per input: {"input": name, "ok": bool, "errors": [...],
"tokens": [[type, text], ...] (with --tokens: the tokens of the default channel),
"tree": "(s (e ...) <EOF>)" (with --tree: ANTLR's toStringTree)}.
Exit status 0 when the grammar generated and ran (whatever the verdicts), 3 when the
tool refused the grammar (its messages on stderr), 4 when antlr-ng or the runtime is
missing.

antlr-ng is found as `antlr-ng` on PATH, or in node_modules/.bin below the folder
named by ANTLR_NG_DIR. Generated parsers are cached by the grammars' contents in
--cache (default: a folder in the system temp directory).
"""
import argparse
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def antlr_ng():
    found = shutil.which("antlr-ng")
    if found:
        return found
    base = os.environ.get("ANTLR_NG_DIR")
    if base:
        candidate = Path(base) / "node_modules" / ".bin" / "antlr-ng"
        if candidate.exists():
            return str(candidate)
    return None


def generate(grammars, cache):
    """Generates the Python parser of `grammars` into a cached folder; returns it."""
    digest = hashlib.sha256()
    for g in grammars:
        digest.update(Path(g).name.encode())
        digest.update(Path(g).read_bytes())
    out = Path(cache) / digest.hexdigest()[:20]
    done = out / ".done"
    if done.exists():
        return out, None
    tool = antlr_ng()
    if tool is None:
        return None, "antlr-ng not found (npm install antlr-ng; set ANTLR_NG_DIR)"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for g in grammars:
        shutil.copy(g, out / Path(g).name)
    # Python files given beside the grammars are target code they name (a lexer's
    # superClass), imported by the generated code from the same folder.
    grammars = [g for g in grammars if not str(g).endswith(".py")]
    # Imported grammars are looked up beside the first grammar.
    lib = str(Path(grammars[0]).resolve().parent)
    names = [Path(g).name for g in grammars]
    # Lexer grammars first: a parser grammar's tokenVocab needs the lexer's tokens.
    names.sort(key=lambda n: 0 if "lexer grammar" in (out / n).read_text(errors="replace") else 1)
    result = subprocess.run(
        [tool, "-Dlanguage=Python3", "--lib", lib, "-o", str(out), *names],
        cwd=out,
        capture_output=True,
        text=True,
    )
    messages = (result.stdout + result.stderr).strip()
    if result.returncode != 0 or "error(" in messages:
        return None, messages or f"antlr-ng exited {result.returncode}"
    done.write_text(messages)
    return out, None


def load_classes(folder):
    lexer = parser = None
    for path in folder.glob("*.py"):
        name = path.stem
        if not (name.endswith("Lexer") or name.endswith("Parser")):
            continue
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        cls = getattr(module, name, None)
        if cls is None:
            continue
        import antlr4

        if issubclass(cls, antlr4.Lexer):
            lexer = cls
        elif issubclass(cls, antlr4.Parser):
            parser = cls
    return lexer, parser


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--start")
    ap.add_argument("--tokens", action="store_true")
    ap.add_argument("--tree", action="store_true", help="also print the parse tree (toStringTree)")
    ap.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "thicket-antlr-oracle"))
    ap.add_argument("--stdin-json", action="store_true")
    ap.add_argument("--probe", action="store_true", help="only check that antlr-ng and the runtime are installed")
    ap.add_argument("args", nargs="*")
    argv = sys.argv[1:]
    inputs = []
    if "--" in argv:
        i = argv.index("--")
        argv, inputs = argv[:i], argv[i + 1 :]
    a = ap.parse_args(argv)
    grammars = a.args
    try:
        import antlr4  # noqa: F401
        from antlr4.error.ErrorListener import ErrorListener
    except ImportError:
        print("antlr4-python3-runtime missing (pip install antlr4-python3-runtime==4.13.2)", file=sys.stderr)
        return 4
    if a.probe:
        if antlr_ng() is None:
            print("antlr-ng not found (npm install antlr-ng; set ANTLR_NG_DIR)", file=sys.stderr)
            return 4
        return 0
    folder, error = generate(grammars, a.cache)
    if folder is None:
        print(error, file=sys.stderr)
        return 4 if "not found" in error else 3
    sys.path.insert(0, str(folder))
    sys.setrecursionlimit(20000)
    lexer_cls, parser_cls = load_classes(folder)
    if lexer_cls is None or parser_cls is None:
        print(f"no lexer or parser generated in {folder}", file=sys.stderr)
        return 3

    class Collect(ErrorListener):
        def __init__(self):
            self.errors = []

        def syntaxError(self, recognizer, symbol, line, column, msg, e):
            self.errors.append(f"{line}:{column} {msg}")

    if a.stdin_json:
        texts = [(f"#{i}", t) for i, t in enumerate(json.load(sys.stdin))]
    else:
        texts = [(p, Path(p).read_bytes().decode("utf-8", errors="replace")) for p in inputs]
    for name, text in texts:
        listener = Collect()
        lexer = lexer_cls(antlr4.InputStream(text))
        lexer.removeErrorListeners()
        lexer.addErrorListener(listener)
        stream = antlr4.CommonTokenStream(lexer)
        parser = parser_cls(stream)
        parser.removeErrorListeners()
        parser.addErrorListener(listener)
        start = a.start or parser_cls.ruleNames[0]
        tree = None
        try:
            tree = getattr(parser, start)()
            # A start rule without EOF may stop early: the rest must be only EOF.
            if stream.LA(1) != antlr4.Token.EOF:
                listener.errors.append("input left after the start rule")
        except Exception as e:  # target code of the grammar, recursion
            listener.errors.append(f"exception: {type(e).__name__}: {e}")
        record = {"input": name, "ok": not listener.errors, "errors": listener.errors[:5]}
        if a.tree and tree is not None:
            record["tree"] = tree.toStringTree(recog=parser)
        if a.tokens:
            names = parser_cls.symbolicNames
            literal = parser_cls.literalNames
            toks = []
            for t in stream.tokens:
                if t.type == antlr4.Token.EOF or t.channel != 0:
                    continue
                sym = names[t.type] if 0 <= t.type < len(names) and names[t.type] != "<INVALID>" else None
                if sym is None and 0 <= t.type < len(literal):
                    sym = literal[t.type]
                toks.append([sym, t.text])
            record["tokens"] = toks
        print(json.dumps(record), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
