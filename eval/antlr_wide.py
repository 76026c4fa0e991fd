#!/usr/bin/env python3
"""thicket on every grammars-v4 grammar with a desc.xml, with ANTLR as the judge.

For each grammar (a folder of a grammars-v4 checkout holding a desc.xml; its grammar
files and start rule from its pom.xml, overridden by desc.xml's <grammar-name> and
<entry-point>):

1. ANTLR: does the tool (antlr-ng, Python target) accept the grammar files?
2. thicket: does thicket-antlr import them (the `g4_examples` example, which also
   parses the example inputs named by desc.xml's first <test><inputs>, default
   examples/; an input counts as parsed when both readings, the exact one and the byte
   grammar, accept it, as `thicket parse` requires; inputs with a NAME.errors file
   beside them are negative examples, counted apart)?
3. `thicket generate -n N --seed S` inputs, judged by ANTLR's own generated Python
   parser (eval/antlr_oracle.py) with predicates off: the judge is generated from a
   copy of the grammar without actions, predicates, named actions and superClass
   options (what thicket assumes: predicates true, actions ignored). Grammars with
   no target code at all are the ones the judge reads unchanged.

Each grammar's results are one JSON line appended to --out (a grammar already there
is skipped, so an interrupted run resumes); --table writes the Markdown tables of
docs/antlr.md from that file. Grammars run in a fixed shuffled order (--order-seed),
so a run cut short is a uniform sample.

usage:
  eval/antlr_wide.py --repo GRAMMARS_V4 --out results.jsonl [--jobs 2] [--only json,csv]
  eval/antlr_wide.py --table results.jsonl
Needs: target/release/thicket and target/release/examples/g4_examples (or --bin DIR),
antlr-ng (ANTLR_NG_DIR, see antlr_oracle.py) and antlr4-python3-runtime 4.13.2.
"""
import argparse
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ORACLE = ROOT / "eval" / "antlr_oracle.py"


# ---------------------------------------------------------------- grammar discovery

def xml_texts(path, tag):
    """The texts of every element named `tag` (any namespace) in an XML file."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError):
        return []
    return [e.text.strip() for e in root.iter() if e.tag.split("}")[-1] == tag and e.text]


def describe(folder, repo):
    """The grammar files, start rule and example inputs of a grammars-v4 folder."""
    desc = folder / "desc.xml"
    pom = folder / "pom.xml"
    includes = xml_texts(pom, "include") if pom.exists() else []
    files = []
    for pattern in includes:
        files += sorted(str(Path(p)) for p in glob.glob(str(folder / pattern)))
    if not files:
        files = sorted(str(p) for p in folder.glob("*.g4"))
    # grammars-v4's own test driver (trgen) takes desc.xml's entry point, else the
    # parser rule that ends in EOF; pom.xml's entryPoint is older and sometimes stale
    # (spl's names `expression`, which cannot read its examples whole).
    start = (xml_texts(desc, "entry-point") or eof_rules(files)[:1]
             or xml_texts(pom, "entryPoint") or [None])[0]
    name = (xml_texts(desc, "grammar-name") or xml_texts(pom, "grammarName") or [None])[0]
    patterns = xml_texts(desc, "inputs")[:1] or ["examples"]
    inputs = []
    for pattern in patterns:
        path = folder / pattern
        if path.is_dir():
            found = [p for p in path.rglob("*") if p.is_file()]
        else:
            found = [Path(p) for p in glob.glob(str(path), recursive=True) if Path(p).is_file()]
        inputs += [p for p in found if not p.name.endswith((".tree", ".errors"))]
    return {
        "grammar": str(folder.relative_to(repo)),
        "files": files,
        "start": start,
        "name": name,
        "inputs": sorted(str(p) for p in set(inputs)),
    }


def eof_rules(files):
    """The parser rules of `files` whose every alternative ends in EOF, when there is
    exactly one (trgen's start rule); else none."""
    found = []
    for f in files:
        text = re.sub(r"//[^\n]*|/\*.*?\*/", "", Path(f).read_text(errors="replace"), flags=re.S)
        for m in re.finditer(r"^\s*([a-z]\w*)\s*:(.*?);\s*$", text, flags=re.S | re.M):
            alts = re.sub(r"'(\\.|[^'\\])*'", "''", m.group(2)).split("|")
            if all(re.search(r"\bEOF\s*$", a.strip()) for a in alts):
                found.append(m.group(1))
    return found if len(found) == 1 else []


def kind_of(path):
    text = Path(path).read_text(errors="replace")
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)
    m = re.search(r"\b(lexer\s+grammar|parser\s+grammar|grammar)\s+(\w+)", text)
    if not m:
        return None, None
    return m.group(1).split()[0], m.group(2)


def main_and_lexer(files, name):
    """The parser or combined grammar thicket reads as the spec, and its lexer grammar."""
    kinds = {f: kind_of(f) for f in files}
    parsers = [f for f in files if kinds[f][0] in ("parser", "grammar")]
    lexers = [f for f in files if kinds[f][0] == "lexer"]
    # Several candidates: the one grammars-v4 names (NameParser, or Name).
    def named(cands, suffix):
        for c in cands:
            if name and kinds[c][1] in (name + suffix, name):
                return c
        return cands[0] if cands else None

    main = named(parsers, "Parser")
    lexer = named(lexers, "Lexer") if kinds.get(main, (None,))[0] == "parser" else None
    return main, lexer


# ---------------------------------------------------------------- predicates off

def closing(text, i, close):
    """Where `close` ends a literal or set of a grammar that goes on at `i` (escapes
    skipped), or the end of `text`."""
    while i < len(text) and text[i] != close:
        i += 2 if text[i] == "\\" else 1
    return i


def strip_target_code(text):
    """The grammar without target code: actions `{..}` and named actions `@x {..}` /
    `@x::y {..}` dropped, predicates `{..}?` written `{True}?` (Python for "true"), the
    `superClass` / `contextSuperClass` options dropped, lexer commands spelled with a
    capital letter written as the commands. `options {..}`, `tokens {..}` and
    `channels {..}` blocks are kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(text[i:j])
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(text[i:j])
            i = j
        elif c in "'[":
            j = closing(text, i + 1, "'" if c == "'" else "]")
            out.append(text[i : j + 1])
            i = j + 1
        elif c == "{":
            before = "".join(out).rstrip()
            word = re.search(r"(\w+)$", before)
            if word and word.group(1) in ("options", "tokens", "channels"):
                out.append(c)
                i += 1
                continue
            j, depth = i, 0
            while j < n:
                ch = text[j]
                if ch in "\"'":
                    k = j + 1
                    while k < n and text[k] != ch and text[k] != "\n":
                        k += 2 if text[k] == "\\" else 1
                    j = k + 1
                    continue
                if text.startswith("//", j):
                    k = text.find("\n", j)
                    j = n if k < 0 else k
                    continue
                if text.startswith("/*", j):
                    k = text.find("*/", j + 2)
                    j = n if k < 0 else k + 2
                    continue
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            i = j + 1
            k = i
            while k < n and text[k] in " \t\r\n":
                k += 1
            if k < n and text[k] == "?":
                # A predicate assumed true, kept as one: the tool's view of the
                # grammar (which literals name which token) stays as it was.
                out.append("{True}?")
                i = k + 1
                continue
            # A named action: drop its `@name` / `@scope::name` too.
            joined = "".join(out)
            m = re.search(r"@\s*\w+(\s*::\s*\w+)?\s*$", joined)
            if m:
                out = [joined[: m.start()]]
        else:
            out.append(c)
            i += 1
    text = "".join(out)
    text = re.sub(r"\b(superClass|contextSuperClass)\s*=\s*[\w.]+\s*;", "", text)
    # A lexer command spelled with a capital letter (`-> Channel(X)`) is emitted as
    # target code through its template, which the Python target cannot run: the
    # command itself, as thicket reads it.
    return re.sub(r"->[^;|]*", lambda m: re.sub(
        r"\b(Skip|More|PopMode|Channel|Type|PushMode|Mode)\b",
        lambda w: w.group(1)[0].lower() + w.group(1)[1:], m.group(0)), text)


def has_target_code(files):
    return any(strip_target_code(Path(f).read_text(errors="replace")) != Path(f).read_text(errors="replace")
               for f in files)


# ---------------------------------------------------------------- running

def run(cmd, timeout, **kw):
    """(returncode or 'timeout', stdout, stderr, seconds)."""
    clock = time.monotonic()
    given = kw.pop("input", None)
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             stdin=subprocess.PIPE if given is not None else subprocess.DEVNULL,
                             errors="replace", start_new_session=True, **kw)
    except OSError as e:
        return "error", "", str(e), 0.0
    try:
        out, err = p.communicate(input=given, timeout=timeout)
        return p.returncode, out, err, time.monotonic() - clock
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        out, err = p.communicate()
        return "timeout", out, err, time.monotonic() - clock


def antlr_accepts(files, tool, work):
    """None when antlr-ng accepts the grammar files (Python target), else its errors."""
    lib = str(Path(files[0]).parent)
    names = []
    for f in files:
        shutil.copy(f, work / Path(f).name)
        names.append(Path(f).name)
    names.sort(key=lambda n: 0 if kind_of(work / n)[0] == "lexer" else 1)
    code, out, err, _ = run([tool, "-Dlanguage=Python3", "--lib", lib, "-o", str(work), *names],
                            120, cwd=work)
    messages = (out + err).strip()
    if code == "timeout":
        return "antlr-ng timed out (120 s)"
    if code != 0 or "error(" in messages:
        lines = [l for l in messages.splitlines() if "error(" in l] or messages.splitlines()
        return " / ".join(lines[:3])[:300] or f"antlr-ng exited {code}"
    return None


def examples_verdicts(out):
    """Per-input verdicts from g4_examples' output."""
    verdicts = {}
    for line in out.splitlines():
        m = re.match(r"(.*): exact (accepts|REJECTS.*?) \([^)]*\), byte grammar (accepts|REJECTS.*) \(", line)
        if m:
            verdicts[m.group(1)] = {"exact": m.group(2) == "accepts", "bytes": m.group(3) == "accepts",
                                    "why": (m.group(2) if m.group(2) != "accepts" else m.group(3))[:200]}
            continue
        m = re.match(r"(.*): negative example, exact (.*)", line)
        if m:
            verdicts[m.group(1)] = {"negative": True, "rejected": m.group(2) != "ACCEPTS"}
            continue
        m = re.match(r"(.*): unreadable: (.*)", line)
        if m:
            verdicts[m.group(1)] = {"unreadable": True}
    return verdicts


def antlr_verdicts(files, main, lexer, start, folder, timeout, inputs, **kw):
    """ANTLR's verdicts, predicates off (eval/antlr_oracle.py on the grammar files without
    target code, written into `folder`), on `inputs` (oracle arguments: `--stdin-json`
    with the texts as `input=`, or `--` and files): (exit code, the verdicts read,
    stderr, seconds)."""
    # The judge is generated from the spec and its lexer (one parser class); the other
    # grammars of the folder are there for `import`.
    for g in set(files) | set(Path(main).parent.glob("*.g4")):
        g = Path(g)
        (folder / g.name).write_text(strip_target_code(g.read_text(errors="replace")))
    judged = [str(folder / Path(g).name) for g in [main] + ([lexer] if lexer else [])]
    cmd = [sys.executable, str(ORACLE), "--cache", str(folder / "cache")]
    if start:
        cmd += ["--start", start]
    code, out, err, secs = run(cmd + judged + inputs, timeout, **kw)
    verdicts = []
    for line in out.splitlines():
        try:
            verdicts.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    return code, verdicts, err, secs


def evaluate(desc, args, tool):
    record = dict(desc)
    record.pop("inputs")
    files = desc["files"]
    main, lexer = main_and_lexer(files, desc["name"])
    record["main"], record["lexer"] = main, lexer
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "orig").mkdir()
        record["antlr_error"] = antlr_accepts(files, tool, tmp / "orig") if files else "no .g4 files"
        if main is None:
            record["thicket_error"] = "no parser or combined grammar among the files"
            return record
        # thicket: import and example inputs.
        positives = [p for p in desc["inputs"] if not Path(p + ".errors").exists()]
        negatives = [p for p in desc["inputs"] if Path(p + ".errors").exists()]
        record["examples_total"] = len(positives)
        if len(positives) > args.max_examples:
            step = len(positives) / args.max_examples
            positives = [positives[int(i * step)] for i in range(args.max_examples)]
        chosen = sorted(positives + negatives, key=lambda p: os.path.getsize(p))
        grammars = [main] + ([lexer] if lexer else [])
        cmd = [str(args.bin / "examples" / "g4_examples")]
        for g in grammars:
            cmd += ["--grammar", g]
        if desc["start"]:
            cmd += ["--start", desc["start"]]
        cmd += ["--", *chosen]
        code, out, err, secs = run(cmd, args.example_timeout)
        record["examples_seconds"] = round(secs, 1)
        if not out.startswith("read "):
            record["thicket_error"] = ("timed out reading the grammar" if code == "timeout"
                                       else err.strip()[:600] or f"exit {code}")
            return record
        record["thicket_error"] = None
        verdicts = examples_verdicts(out)
        pos = [verdicts.get(p) for p in chosen if p in positives]
        record["examples_run"] = len(positives)
        record["examples_reached"] = sum(v is not None for v in pos)
        record["examples_exact"] = sum(bool(v and v.get("exact")) for v in pos)
        record["examples_parsed"] = sum(bool(v and v.get("exact") and v.get("bytes")) for v in pos)
        record["examples_failures"] = [
            {"input": os.path.relpath(p, args.repo), "why": verdicts[p].get("why", "unreadable")}
            for p in chosen if p in positives and p in verdicts and not
            (verdicts[p].get("exact") and verdicts[p].get("bytes"))]
        record["examples_chosen"] = [os.path.relpath(p, args.repo) for p in positives]
        record["examples_unreached"] = [os.path.relpath(p, args.repo) for p in positives
                                        if p not in verdicts]
        record["target_code"] = has_target_code(files)
        negs = [verdicts.get(p) for p in negatives]
        record["negatives"] = len(negatives)
        record["negatives_rejected"] = sum(bool(v and v.get("rejected")) for v in negs)
        record["examples_timed_out"] = code == "timeout"
        if args.examples_only:
            return record
        # Generation.
        gen = [str(args.bin / "thicket"), "generate", main, "-n", str(args.n), "--seed", str(args.seed),
               "-o", str(tmp / "gen"), "--force"]
        if lexer:
            gen += ["--lexer", lexer]
        if desc["start"]:
            gen += ["--start", desc["start"]]
        code, out, err, secs = run(gen, args.generate_timeout)
        record["generate_seconds"] = round(secs, 1)
        produced = sorted((tmp / "gen").iterdir(), key=lambda p: p.name) if (tmp / "gen").is_dir() else []
        texts = [p.read_bytes().decode("utf-8", errors="replace") for p in produced if p.is_file()]
        record["generated"] = len(texts)
        if code != 0:
            record["generate_error"] = "timed out" if code == "timeout" else err.strip()[-400:]
        if texts:
            record["mean_size"] = round(sum(len(t.encode()) for t in texts) / len(texts))
        # ANTLR's verdict on them, predicates off.
        record["target_code"] = has_target_code(files)
        if not texts or record["antlr_error"]:
            return record
        (tmp / "judge").mkdir()
        code, verdicts, err, secs = antlr_verdicts(files, main, lexer, desc["start"], tmp / "judge",
                                                   args.judge_timeout, ["--stdin-json"],
                                                   input=json.dumps(texts))
        record["judge_seconds"] = round(secs, 1)
        record["judged"] = len(verdicts)
        record["accepted"] = sum(v["ok"] for v in verdicts)
        if code != 0:
            record["judge_error"] = "timed out" if code == "timeout" else err.strip()[-400:]
        record["rejections"] = [
            {"input": texts[int(v["input"][1:])][:160], "errors": v["errors"][:2]}
            for v in verdicts if not v["ok"]][:5]
    return record


def recheck(path, args):
    """ANTLR's verdict (predicates true, actions left out: the reading thicket gives a
    grammar) on the example inputs thicket did not parse or did not reach, and on every
    example run of a grammar with target code (where ANTLR without that code may reject
    what thicket parses), written into each record as "antlr_examples": {input: ANTLR
    accepts? (None: no verdict)}. Each record is written back as soon as it is asked."""
    rows = [json.loads(l) for l in Path(path).read_text().splitlines() if l.strip()]
    for r in rows:
        if "antlr_examples" in r or r.get("antlr_error") or r.get("thicket_error"):
            continue
        asked = [f["input"] for f in r.get("examples_failures", [])] + r.get("examples_unreached", [])
        if r.get("target_code"):
            asked = r.get("examples_chosen", asked)
        if not asked:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            _, found, _, _ = antlr_verdicts(r["files"], r["main"], r.get("lexer"), r.get("start"),
                                            Path(tmp), args.judge_timeout,
                                            ["--", *(str(args.repo / f) for f in asked)])
            verdicts = {os.path.relpath(v["input"], args.repo): v["ok"] for v in found}
            r["antlr_examples"] = {f: verdicts.get(f) for f in asked}
            print(f"{r['grammar']}: {r['antlr_examples']}", file=sys.stderr, flush=True)
        Path(path).write_text("".join(json.dumps(r) + "\n" for r in rows))


def antlr_reading(r):
    """(examples ANTLR accepts with predicates true and actions left out, how many of
    those thicket parses) for one record rechecked by `recheck`; an example ANTLR gave
    no verdict on counts as accepted."""
    rejected = {f for f, ok in r.get("antlr_examples", {}).items() if ok is False}
    failed = {f["input"] for f in r.get("examples_failures", [])} | set(r.get("examples_unreached", []))
    accepted = r.get("examples_run", 0) - len(rejected)
    parsed_rejected = len(rejected - failed)
    return accepted, r.get("examples_parsed", 0) - parsed_rejected


def table(path):
    rows = [json.loads(l) for l in Path(path).read_text().splitlines() if l.strip()]
    rows.sort(key=lambda r: r["grammar"])
    accepted = [r for r in rows if not r.get("antlr_error")]
    imported = [r for r in accepted if r.get("thicket_error") is None]
    ex_run = sum(r.get("examples_run", 0) for r in imported)
    ex_ok = sum(r.get("examples_parsed", 0) for r in imported)
    ex_exact = sum(r.get("examples_exact", 0) for r in imported)
    ex_reached = sum(r.get("examples_reached", 0) for r in imported)
    plain = [r for r in imported if not r.get("target_code")]
    def gen(rs):
        return sum(r.get("judged", 0) for r in rs), sum(r.get("accepted", 0) for r in rs)
    pj, pa = gen(plain)
    aj, aa = gen(imported)
    print(f"grammars: {len(rows)}; ANTLR accepts {len(accepted)}; thicket imports {len(imported)} of those "
          f"({100 * len(imported) / max(1, len(accepted)):.1f}%)")
    print(f"example inputs (of the grammars imported): {ex_ok} of {ex_run} parse by both readings "
          f"({100 * ex_ok / max(1, ex_run):.1f}%), exact reading {ex_exact} ({100 * ex_exact / max(1, ex_run):.1f}%); "
          f"{ex_run - ex_reached} not reached in the time budget")
    checked = [r for r in imported if "examples_chosen" in r]
    if checked and all("antlr_examples" in r or not r["examples_chosen"]
                       or not (r.get("examples_failures") or r.get("examples_unreached")
                               or r.get("target_code")) for r in checked):
        pairs = [antlr_reading(r) for r in checked]
        base, hit = sum(a for a, _ in pairs), sum(b for _, b in pairs)
        print(f"example inputs ANTLR parses with predicates true and actions left out (--recheck): "
              f"{base} of {sum(r.get('examples_run', 0) for r in checked)}; thicket parses {hit} of "
              f"them ({100 * hit / max(1, base):.1f}%)")
    print(f"generated inputs accepted by ANTLR: grammars without target code {pa} of {pj} "
          f"({100 * pa / max(1, pj):.2f}%); all judged grammars {aa} of {aj} ({100 * aa / max(1, aj):.2f}%)")
    print()
    # Records merged from runs of several builds carry the build's commit.
    builds = any("commit" in r for r in rows)
    build_head = " build |" if builds else ""
    print(f"| grammar | ANTLR | thicket imports | examples parsed | generated, accepted by ANTLR | mean size |{build_head} notes |")
    print("|---|---|---|---|---|---|" + ("---|" if builds else "") + "---|")
    for r in rows:
        antlr = "refuses" if r.get("antlr_error") else "accepts"
        if r.get("thicket_error") is None:
            imp = "yes"
        else:
            imp = "no"
        ex = "-"
        if "examples_run" in r:
            ex = f"{r['examples_parsed']}/{r['examples_run']}"
            if r["examples_run"] < r.get("examples_total", 0):
                ex += f" (of {r['examples_total']})"
        gj = "-"
        if "judged" in r:
            gj = f"{r['accepted']}/{r['judged']}"
            if r.get("target_code"):
                gj += " (pred. off)"
        elif "generated" in r:
            gj = f"{r['generated']} generated, not judged"
        notes = []
        if r.get("antlr_error"):
            notes.append("ANTLR: " + r["antlr_error"][:160])
        if r.get("thicket_error"):
            notes.append("thicket: " + r["thicket_error"].splitlines()[0][:200])
        if r.get("examples_reached", 0) < r.get("examples_run", 0):
            notes.append(f"{r['examples_run'] - r['examples_reached']} examples not reached in time")
        if r.get("examples_failures"):
            f = r["examples_failures"][0]
            notes.append(f"e.g. {f['input']}: {f['why'][:120]}")
        failed = {f["input"] for f in r.get("examples_failures", [])} | set(r.get("examples_unreached", []))
        verdicts = [v for f, v in r.get("antlr_examples", {}).items() if f in failed and v is not None]
        if verdicts:
            notes.append(f"ANTLR rejects {verdicts.count(False)} of the {len(verdicts)} "
                         "examples thicket did not parse")
        if r.get("generate_error"):
            notes.append("generate: " + r["generate_error"].splitlines()[-1][:160])
        if r.get("judge_error") and r.get("judged", 0) < r.get("generated", 0):
            notes.append("judge: " + r["judge_error"].splitlines()[-1][:160])
        if r.get("rejections"):
            notes.append("ANTLR rejects e.g.: " + (r["rejections"][0]["errors"] or ["?"])[0][:120])
        note = "; ".join(notes).replace("|", "\\|").replace("\n", " ")
        size = f"{r['mean_size']} B" if "mean_size" in r else "-"
        build = f" {r.get('commit', '')} |" if builds else ""
        print(f"| {r['grammar']} | {antlr} | {imp} | {ex} | {gj} | {size} |{build} {note} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--table", type=Path)
    ap.add_argument("--recheck", type=Path,
                    help="ask ANTLR about the example inputs thicket did not parse (needs --repo)")
    ap.add_argument("--bin", type=Path, default=ROOT / "target" / "release")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("-n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--order-seed", type=int, default=1)
    ap.add_argument("--only", help="comma-separated grammar folders (relative to --repo)")
    ap.add_argument("--max-examples", type=int, default=20,
                    help="example inputs per grammar, evenly spread over the sorted list [20]")
    ap.add_argument("--example-timeout", type=float, default=90)
    ap.add_argument("--generate-timeout", type=float, default=90)
    ap.add_argument("--judge-timeout", type=float, default=120)
    ap.add_argument("--examples-only", action="store_true",
                    help="steps 1 and 2 only: no generation and no judging (to re-run the "
                         "example inputs after a change to parsing; needs no thicket binary)")
    args = ap.parse_args()
    if args.table:
        table(args.table)
        return 0
    if args.recheck:
        args.repo = args.repo.resolve()
        recheck(args.recheck, args)
        return 0
    if not args.repo or not args.out:
        ap.error("--repo and --out are needed (or --table)")
    sys.path.insert(0, str(ROOT / "eval"))
    from antlr_oracle import antlr_ng

    tool = antlr_ng()
    if tool is None:
        print("antlr-ng not found (npm install antlr-ng; set ANTLR_NG_DIR)", file=sys.stderr)
        return 4
    args.repo = args.repo.resolve()
    folders = sorted(p.parent for p in args.repo.rglob("desc.xml"))
    if args.only:
        wanted = set(args.only.split(","))
        folders = [f for f in folders if str(f.relative_to(args.repo)) in wanted]
    random.Random(args.order_seed).shuffle(folders)
    done = set()
    if args.out.exists():
        done = {json.loads(l)["grammar"] for l in args.out.read_text().splitlines() if l.strip()}
    lock = threading.Lock()

    def one(folder):
        desc = describe(folder, args.repo)
        if desc["grammar"] in done:
            return
        clock = time.monotonic()
        try:
            record = evaluate(desc, args, tool)
        except Exception as e:  # a bug here must not stop the other grammars
            record = {"grammar": desc["grammar"], "files": desc["files"], "eval_error": repr(e),
                      "antlr_error": None, "thicket_error": f"evaluation failed: {e!r}"}
        record["seconds"] = round(time.monotonic() - clock, 1)
        with lock:
            with args.out.open("a") as f:
                f.write(json.dumps(record) + "\n")
            print(f"{record['grammar']}: antlr {'ok' if not record.get('antlr_error') else 'refuses'}, "
                  f"thicket {'ok' if record.get('thicket_error') is None else 'refuses'}, "
                  f"examples {record.get('examples_parsed')}/{record.get('examples_run')}, "
                  f"accepted {record.get('accepted')}/{record.get('judged')} ({record['seconds']} s)",
                  file=sys.stderr, flush=True)

    with ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(one, folders))
    return 0


if __name__ == "__main__":
    sys.exit(main())
