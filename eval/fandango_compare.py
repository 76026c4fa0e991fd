#!/usr/bin/env python3
"""thicket against Fandango 1.3.1 on Fandango's own specs: does thicket read them, are its
inputs valid by Fandango's judgement, and how many valid inputs per second each makes.

    python3 eval/fandango_compare.py validity --fandango-repo DIR [options] [SPEC...]
    python3 eval/fandango_compare.py speed    --fandango-repo DIR [options] [SPEC...]

Fandango's specs come from its source checkout (git clone
https://github.com/fandango-fuzzer/fandango; measured at commit f9cd6f4), given as
--fandango-repo. Fandango itself is `--fandango PATH` (an existing `fandango` executable) or,
by default, a virtual environment the script creates under eval/.venv-fandango with
`pip install fandango-fuzzer==1.3.1 faker python-dateutil docutils` (faker and dateutil: some
specs import them; docutils: the second judge of the rest spec). Each spec runs with its top
folder (docs/, tutorial/, ...) as working directory, as tutorial/README.md asks.

validity: every spec under docs/, evaluation/, tutorial/ and demo/ (or the SPEC paths
given, relative to the checkout). Specs with parties (a nonterminal written
`<Party:name>` or `<Party:Party:name>`, in the spec or a file it includes) are protocol
specs, listed and skipped. For the others: (a) does `fandango fuzz` generate 100 inputs
(and does `fandango parse --validate` accept Fandango's own outputs, a check of the judge),
(b) does `thicket lint` accept the spec, (c) `thicket generate -n 100 --seed 1 -o DIR`,
(d) how many of thicket's inputs `fandango parse --validate` accepts (each file judged on
its own: parse errors and unsatisfied constraints are attributed per file from Fandango's
log) and, for the five evaluation specs, how many an independent judge accepts (csv:
Python's csv module; xml: xml.etree; tar: tarfile; rest: docutils; scriptsizec:
`cc -fsyntax-only` on the input as the body of main()).

speed: the five evaluation specs unchanged (evaluation/{csv,rest,scriptsizec,tar,xml}).
For each seed: Fandango's start-up (`fandango fuzz -n 1`, wall time), then
`fandango fuzz -n N --random-seed S -d DIR` (wall time of the whole process; a run cut by
--fandango-timeout counts the inputs written so far over the time limit) and
`thicket generate -n N --seed S --unique -o DIR` (wall time; `--unique` as Fandango's
outputs are distinct: its population holds no duplicates), then the same with `--stats` once
for thicket's own figure, which leaves out its start-up (the timed runs leave --stats
out: it counts k-paths, which Fandango is not asked for). The timed runs write into
--scratch, a RAM disk by default (see --help), both tools alike. Both sides' outputs are judged by
`fandango parse --validate`: only valid inputs count. Reported per spec: valid inputs per
second (whole process, and without start-up), mean size in bytes and share of distinct
inputs among the valid ones, and the ratio thicket/fandango with its median and minimum
over seeds. Defaults: -n 100 (tar 30: Fandango makes about one tar input per 1.5 s and
parses one per second), seeds 1,2,3: about 6 minutes of Fandango on 2 busy cores, plus the
judging of thicket's inputs (a few more minutes).

Output (--out, default target/fandango-eval): validity.json + validity.md, or speed.json +
speed.md, beside the raw inputs and logs of every run (validity/SPEC/..., speed/SPEC/seed-S/...).
Progress goes to stderr. Every subprocess runs under a time limit; a failure or a time-out
becomes a table row, not a crash. Fandango runs with PYTHONHASHSEED=0, so given the seeds
both sides generate the same inputs on every run (timings aside).

thicket runs the specs' Python in Fandango's interpreter (the one with faker and dateutil)
unless $THICKET_PYTHON names another. validity --fandango-from validity.json takes Fandango's
half of each row from an earlier run instead of running `fandango fuzz` again.

THICKET=path or --thicket path selects the thicket binary (default: target/release/thicket
under CARGO_TARGET_DIR or the repository; build it with `cargo build --release -p
thicket-cli`). --no-thicket runs the Fandango half alone. thicket is given the spec's folder
as `-I DIR` once its `lint --help` and `generate --help` list that option.
"""

import argparse
import csv
import hashlib
import io
import json
import os
import queue
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FANDANGO_VERSION = "1.3.1"
# faker and dateutil: some specs import them; docutils: the rest spec's second judge.
VENV_PACKAGES = [f"fandango-fuzzer=={FANDANGO_VERSION}", "faker", "python-dateutil", "docutils"]
SPEC_FOLDERS = ["docs", "evaluation", "tutorial", "demo"]
EVAL_SPECS = [
    "evaluation/csv/csv.fan",
    "evaluation/rest/rest.fan",
    "evaluation/scriptsizec/scriptsizec.fan",
    "evaluation/tar/tar.fan",
    "evaluation/xml/xml.fan",
]
# The second, independent judge of each evaluation spec's inputs.
JUDGE_OF = {
    "evaluation/csv/csv.fan": "csv",
    "evaluation/rest/rest.fan": "rest",
    "evaluation/scriptsizec/scriptsizec.fan": "c",
    "evaluation/tar/tar.fan": "tar",
    "evaluation/xml/xml.fan": "xml",
}
# Default inputs per speed run: Fandango needs about 1.7 s per tar input and its parser
# about 0.9 s per tar file, so tar gets fewer to keep the default run near 15 minutes.
SPEED_COUNT = {"evaluation/tar/tar.fan": 30}
SPEED_COUNT_DEFAULT = 100

# `<Party:name>` / `<Sender:Receiver:name>`: a message of a protocol spec.
PARTY_RE = re.compile(r"<[A-Za-z_]\w*:[A-Za-z_]\w*(?::[A-Za-z_]\w*)?>")
INCLUDE_RE = re.compile(r"""^\s*include\(\s*(['"])(.+?)\1\s*\)""", re.M)
STATS_RE = re.compile(
    r"(\d+) inputs(?: \(\d+ draws\))? in ([\d.]+) s: ([\d.]+) inputs/s.*?mean size ([\d.]+) bytes; "
    r"([\d.]+)% distinct")


def log(msg):
    print(f"fandango_compare: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- subprocesses


class Result:
    """A finished (or killed) subprocess: exit code (None if it was killed at its time
    limit), wall time in seconds, CPU time in seconds (user and system, of the process
    and every descendant it waited for) and its output (stdout and stderr together)."""

    def __init__(self, rc, timed_out, wall, output, cpu=None):
        self.rc = rc
        self.timed_out = timed_out
        self.wall = wall
        self.output = output
        self.cpu = cpu

    def ok(self):
        return self.rc == 0 and not self.timed_out


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def children_cpu():
    """CPU seconds (user + system) of this script's finished, waited-for descendants."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(cmd, timeout, cwd=None, env=None):
    """Runs cmd in its own process group; at the time limit the whole group is killed.
    Its CPU time is the growth of children_cpu() across the run, so runs must not
    overlap (this script runs one command at a time)."""
    cpu_before = children_cpu()
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as e:
        return Result(None, False, 0.0, f"cannot run {cmd[0]}: {e}")
    try:
        out, _ = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        kill_group(proc)
        try:
            out, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            out = b""
        timed_out = True
    wall = time.monotonic() - start
    text = out.decode("utf-8", errors="replace") if out else ""
    cpu = children_cpu() - cpu_before
    return Result(None if timed_out else proc.returncode, timed_out, wall, text, cpu)


def first_error_line(text, limit=200):
    """The most telling line of a failed run's output: the last exception line of a
    traceback, else the first line that says error, else the last non-empty line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    exc = [ln for ln in lines if re.match(r"^[\w.]*(Error|Exception|Exit)\b.*:", ln)
           and not ln.startswith("fandango:")]
    if exc:
        return shorten(strip_module(exc[-1]), limit)
    for ln in lines:
        if re.search(r"\berror\b", ln, re.I):
            return shorten(ln, limit)
    return shorten(lines[-1], limit) if lines else "(no output)"


def strip_module(line):
    return re.sub(r"^(?:[a-z_]\w*\.)+(?=[A-Z])", "", line)


def shorten(text, limit=200):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def fandango_env():
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = "0"
    env.pop("PYTHONSTARTUP", None)
    return env


def default_scratch():
    """A folder on the RAM disk /dev/shm if that is writable, else None (then under --out)."""
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK):
        return os.path.join(shm, f"thicket-fandango-eval-{os.getuid()}")
    return None


def fresh_dir(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    os.makedirs(path)
    return path


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def list_files(directory):
    if not os.path.isdir(directory):
        return []
    return sorted(os.path.join(directory, f) for f in os.listdir(directory)
                  if os.path.isfile(os.path.join(directory, f)))


# ---------------------------------------------------------------- setup


def setup_fandango(args):
    """The fandango executable: --fandango, or the venv (created on first use)."""
    if args.fandango:
        exe = os.path.abspath(args.fandango)
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            sys.exit(f"fandango_compare: --fandango {args.fandango}: not an executable file")
    else:
        venv = os.path.abspath(args.venv)
        exe = os.path.join(venv, "bin", "fandango")
        # The packages installed are noted in the venv, so that a changed list reinstalls.
        marker = os.path.join(venv, "fandango-compare-packages.txt")
        wanted = " ".join(VENV_PACKAGES)
        if not os.path.isfile(exe) or not os.path.isfile(marker) or open(marker).read() != wanted:
            if not os.path.isdir(venv):
                log(f"creating {venv}")
                r = run([sys.executable, "-m", "venv", venv], timeout=300)
                if not r.ok():
                    sys.exit("fandango_compare: python -m venv failed: "
                             + first_error_line(r.output))
            log(f"installing {wanted} into {venv}")
            r = run([os.path.join(venv, "bin", "pip"), "install", "--quiet"] + VENV_PACKAGES,
                    timeout=3600)
            if not r.ok() or not os.path.isfile(exe):
                sys.exit("fandango_compare: pip install failed: " + first_error_line(r.output))
            with open(marker, "w") as f:
                f.write(wanted)
    r = run([exe, "--version"], timeout=300, env=fandango_env())
    version = r.output.strip().splitlines()[-1] if r.output.strip() else "?"
    if not r.ok():
        sys.exit(f"fandango_compare: {exe} --version failed: {first_error_line(r.output)}")
    if FANDANGO_VERSION not in version:
        log(f"warning: {exe} is {version!r}, not Fandango {FANDANGO_VERSION}")
    return exe, version


def judge_python(fandango_exe):
    """A Python for the second judges: one that has docutils if any does (the venv's,
    beside the fandango executable, else this one)."""
    candidates = [os.path.join(os.path.dirname(fandango_exe), name)
                  for name in ("python3", "python")] + [sys.executable]
    candidates = [c for c in candidates if os.path.isfile(c)]
    for py in candidates:
        if run([py, "-c", "import docutils"], timeout=120).ok():
            return py, True
    return sys.executable, False


def find_thicket(args):
    if args.no_thicket:
        return None
    path = args.thicket or os.environ.get("THICKET")
    if not path:
        target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(REPO, "target")
        path = os.path.join(target, "release", "thicket")
    path = os.path.abspath(path)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        log(f"warning: no thicket binary at {path} (build it with `cargo build --release "
            "-p thicket-cli` or give --thicket); thicket's columns stay empty")
        return None
    return path


def thicket_takes_include(thicket):
    """Whether this thicket's lint and generate take `-I DIR` (include folders)."""
    takes = True
    for sub in ("lint", "generate"):
        r = run([thicket, sub, "--help"], timeout=60)
        takes = takes and bool(re.search(r"(^|\s)-I\b|--include", r.output))
    return takes


# ---------------------------------------------------------------- specs


def discover_specs(repo):
    specs = []
    for folder in SPEC_FOLDERS:
        for root, dirs, files in os.walk(os.path.join(repo, folder)):
            dirs.sort()
            specs += [os.path.relpath(os.path.join(root, f), repo)
                      for f in files if f.endswith(".fan")]
    return sorted(specs)


def party_names(repo, spec, include_dirs=(), seen=None):
    """The party nonterminals of a spec and of the files it includes (first few)."""
    seen = set() if seen is None else seen
    path = os.path.realpath(os.path.join(repo, spec))
    if path in seen or not os.path.isfile(path):
        return []
    seen.add(path)
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    code = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#"))
    found = PARTY_RE.findall(code)
    for _, name in INCLUDE_RE.findall(text):
        for d in (os.path.dirname(path),) + tuple(include_dirs):
            candidate = os.path.join(d, name)
            if os.path.isfile(candidate):
                found += party_names(repo, os.path.relpath(candidate, repo), include_dirs, seen)
                break
    return found


def spec_cwd(repo, spec):
    """Where the tools run for a spec: its top folder (docs/, tutorial/, ...), as
    tutorial/README.md asks, so that a spec's Python can import the modules there."""
    top = os.path.join(repo, spec.split("/")[0])
    return top if os.path.isdir(top) and "/" in spec else repo


def spec_slug(spec):
    return spec.replace("/", "__").removesuffix(".fan")


# ---------------------------------------------------------------- judges


def fandango_validate(fandango, repo, spec, files, per_file_timeout, startup_timeout):
    """Judges each file with `fandango parse --validate`, many files per process.

    Returns ({file: None if accepted, else the reason}, None), or (None, reason) if
    Fandango could not judge at all (say, it cannot read the spec). With -v Fandango logs
    `Parsing 'FILE'` before each file and the traceback of each rejection, so one process
    judges a whole batch file by file. A file that takes longer than per_file_timeout is
    rejected as a time-out and a new process takes the files after it. If Fandango's own
    error count disagrees with the log, the batch's files are judged one by one."""
    verdicts = {}
    todo = list(files)
    while todo:
        judged, current, failure, errors = parse_batch(fandango, repo, spec, todo,
                                                       per_file_timeout, startup_timeout)
        if failure == "startup":
            if not verdicts:
                return None, errors
            for f in todo:
                verdicts[f] = f"judge failed: {errors}"
            break
        verdicts.update(judged)
        if failure == "timeout":
            verdicts[current] = f"fandango parse took over {per_file_timeout:g} s"
            todo = todo[todo.index(current) + 1:]
            continue
        rejected = sum(1 for f in judged if judged[f] is not None)
        if errors != rejected or len(judged) != len(todo):
            for f in todo:
                verdicts[f] = parse_alone(fandango, repo, spec, f, per_file_timeout,
                                          startup_timeout)
        break
    return verdicts, None


def parse_alone(fandango, repo, spec, file, per_file_timeout, startup_timeout):
    judged, _, failure, errors = parse_batch(fandango, repo, spec, [file], per_file_timeout,
                                             startup_timeout)
    if failure == "timeout":
        return f"fandango parse took over {per_file_timeout:g} s"
    if file in judged and (errors == 0) == (judged[file] is None):
        return judged[file]
    return f"judge failed: {errors}" if failure else "judge failed: unclear verdict"


def parse_batch(fandango, repo, spec, files, per_file_timeout, startup_timeout):
    """Runs one `fandango parse` process on files, reading its log as it comes.

    Returns (verdicts of the files it finished, the file it was on when it was stopped,
    failure: None | "timeout" | "startup", Fandango's error count (0 if it exited 0,
    -1 if it ended without one) or, on a start-up failure, the reason)."""
    path = os.path.join(repo, spec)
    cmd = [fandango, "-v", "parse", "-f", path, "-I", os.path.dirname(path),
           "--validate"] + files
    reprs = {repr(f): f for f in files}
    try:
        proc = subprocess.Popen(cmd, cwd=spec_cwd(repo, spec), env=fandango_env(),
                                stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    except OSError as e:
        return {}, None, "startup", f"cannot run fandango: {e}"
    lines = queue.Queue()

    def reader():
        for raw in proc.stdout:
            lines.put(raw.decode("utf-8", errors="replace").rstrip("\n"))
        lines.put(None)

    threading.Thread(target=reader, daemon=True).start()
    blocks, current, head = {}, None, []  # head: the lines before the first file
    deadline = time.monotonic() + startup_timeout
    failure = None
    while True:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            kill_group(proc)
            failure = "timeout" if current is not None else "startup"
            break
        if line is None:
            break
        m = re.match(r"^fandango:\w+: Parsing (.+)$", line)
        if m and m.group(1) in reprs:
            current = reprs[m.group(1)]
            blocks[current] = []
            deadline = time.monotonic() + per_file_timeout
        elif current is None:
            head.append(line)
        else:
            blocks[current].append(line)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        kill_group(proc)
    if failure == "startup" or current is None:
        reason = (f"fandango parse read no file within {startup_timeout:g} s"
                  if failure else first_error_line("\n".join(head)))
        return {}, None, "startup", reason
    verdicts = {}
    for f, block in blocks.items():
        if failure == "timeout" and f == current:
            continue
        reason = rejection(block)
        verdicts[f] = reason and reason.replace(repr(f), repr(os.path.basename(f)))
    errors = 0 if proc.returncode == 0 else -1
    for ln in blocks[current]:
        m = re.search(r"(\d+) error\(s\) during parsing", ln)
        if m:
            errors = int(m.group(1))
    return verdicts, current, failure, errors


def rejection(block):
    """The reason in a file's log block, or None: each traceback in it is a rejection,
    except the one that closes the run with Fandango's error count."""
    segments, segment = [], None
    for ln in block:
        if "Traceback (most recent call last)" in ln:
            segment = []
            segments.append(segment)
        elif segment is not None:
            segment.append(ln)
    for seg in segments:
        if any("error(s) during parsing" in ln for ln in seg):
            continue
        exc = [ln for ln in seg if re.match(r"^[\w.]*(Error|Exception)\b", ln)]
        return shorten(strip_module(exc[-1]) if exc else (seg[-1] if seg else "rejected"))
    return None


def second_judge(kind, files, python, has_docutils, timeout):
    """Verdicts of the independent judge: {file: None or reason}, or None if there is
    none for this kind (rest without docutils)."""
    if kind is None or not files or (kind == "rest" and not has_docutils):
        return None
    cmd = [python, os.path.abspath(__file__), "judge", kind]
    r = run(cmd + files, timeout=timeout + 2 * len(files))
    verdicts = {}
    for line in r.output.splitlines():
        try:
            record = json.loads(line)
            verdicts[record["file"]] = record["reason"]
        except (ValueError, KeyError, TypeError):
            continue
    for f in files:
        if f not in verdicts:
            alone = run(cmd + [f], timeout=timeout)
            try:
                verdicts[f] = json.loads(alone.output.splitlines()[-1])["reason"]
            except (ValueError, KeyError, IndexError, TypeError):
                verdicts[f] = ("judge timed out" if alone.timed_out
                               else "judge failed: " + first_error_line(alone.output))
    return verdicts


def judge_file(kind, path):
    """None if the input is valid for the independent judge, else why not."""
    with open(path, "rb") as f:
        data = f.read()
    if kind == "tar":
        import tarfile
        try:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
                members = archive.getmembers()
                if not members:
                    return "no member"
                for m in members:
                    if m.isfile() and len(archive.extractfile(m).read()) != m.size:
                        return f"{m.name!r}: short content"
                last = members[-1]
                end = last.offset_data + (last.size + 511) // 512 * 512
        except Exception as e:  # tarfile raises several kinds on bad archives
            return shorten(f"{type(e).__name__}: {e}")
        # tarfile stops silently at a bad header after the first: all that follows the
        # last member must be the end-of-archive zero blocks.
        if data[end:].strip(b"\0"):
            return f"bytes after the last member (offset {end}) are not an end-of-archive"
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"not UTF-8: {e}"
    if kind == "csv":
        try:
            list(csv.reader(io.StringIO(text, newline=""), delimiter=";", strict=True))
        except csv.Error as e:
            return shorten(f"csv.Error: {e}")
        return None
    if kind == "xml":
        import xml.etree.ElementTree as ElementTree
        try:
            ElementTree.fromstring(text)
        except ElementTree.ParseError as e:
            return shorten(f"ParseError: {e}")
        return None
    if kind == "rest":
        from docutils.core import publish_doctree
        warnings = io.StringIO()
        try:
            publish_doctree(text, settings_overrides={
                "warning_stream": warnings, "report_level": 2, "halt_level": 5,
                "file_insertion_enabled": False, "raw_enabled": False})
        except Exception as e:  # docutils may raise on malformed markup
            return shorten(f"{type(e).__name__}: {e}")
        message = warnings.getvalue().strip()
        return shorten(message.splitlines()[0]) if message else None
    if kind == "c":
        # The spec's statements, as the body of main (C's block scoping is stricter than
        # the spec's "declared before use", so this judge may reject a valid input).
        program = "int main(void) {\n" + text + "\n}\n"
        try:
            r = subprocess.run(["cc", "-fsyntax-only", "-std=c11", "-w", "-x", "c", "-"],
                               input=program.encode(), capture_output=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"cc: {e}"
        if r.returncode != 0:
            errors = [ln for ln in r.stderr.decode(errors="replace").splitlines()
                      if "error" in ln]
            return shorten("cc: " + (errors[0] if errors else f"exit {r.returncode}"))
        return None
    return f"no judge {kind!r}"


def judge_main(argv):
    kind, files = argv[0], argv[1:]
    for path in files:
        try:
            reason = judge_file(kind, path)
        except Exception as e:  # one bad file must not stop the others
            reason = shorten(f"{type(e).__name__}: {e}")
        print(json.dumps({"file": path, "reason": reason}), flush=True)


def tally(verdicts):
    """(accepted, judged, first rejection as 'file: reason')."""
    if verdicts is None:
        return None, None, None
    first = next(((f, r) for f, r in sorted(verdicts.items()) if r is not None), None)
    accepted = sum(1 for r in verdicts.values() if r is None)
    return accepted, len(verdicts), (f"{os.path.basename(first[0])}: {first[1]}" if first else None)


# ---------------------------------------------------------------- runs


def fandango_fuzz(fandango, repo, spec, count, seed, out_dir, timeout):
    fresh_dir(out_dir)
    path = os.path.join(repo, spec)
    cmd = [fandango, "fuzz", "-f", path, "-n", str(count), "--random-seed", str(seed),
           "-d", out_dir, "-I", os.path.dirname(path), "--progress-bar", "off"]
    r = run(cmd, timeout=timeout, cwd=spec_cwd(repo, spec), env=fandango_env())
    return r, list_files(out_dir), cmd


# The interpreter thicket runs a spec's Python in: Fandango's own (set by main), so that
# both sides run the same Python; $THICKET_PYTHON, if set, wins.
THICKET_PYTHON = None


def thicket_env():
    env = dict(os.environ)
    if THICKET_PYTHON and "THICKET_PYTHON" not in env:
        env["THICKET_PYTHON"] = THICKET_PYTHON
    return env


def thicket_generate(thicket, include, repo, spec, count, seed, out_dir, timeout, stats=False,
                     unique=False):
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    cmd = [thicket, "generate", os.path.join(repo, spec), "-n", str(count), "--seed",
           str(seed), "-o", out_dir]
    if include:
        cmd += ["-I", os.path.join(repo, os.path.dirname(spec))]
    if stats:
        cmd.append("--stats")
    if unique:
        cmd.append("--unique")
    r = run(cmd, timeout=timeout, cwd=spec_cwd(repo, spec), env=thicket_env())
    return r, list_files(out_dir), cmd


def thicket_lint(thicket, include, repo, spec, timeout):
    cmd = [thicket, "lint", os.path.join(repo, spec)]
    if include:
        cmd += ["-I", os.path.join(repo, os.path.dirname(spec))]
    return run(cmd, timeout=timeout, cwd=spec_cwd(repo, spec)), cmd


def save_log(path, cmd, r):
    with open(path, "w", encoding="utf-8") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.write(f"# exit {r.rc}, timed out {r.timed_out}, {r.wall:.3f} s\n")
        f.write(r.output)


def read_inputs(files):
    contents = []
    for path in files:
        with open(path, "rb") as f:
            contents.append(f.read())
    return contents


# ---------------------------------------------------------------- validity


def validity(args, ctx):
    specs = args.specs or discover_specs(ctx["repo"])
    rows = []
    for i, spec in enumerate(specs, 1):
        log(f"[{i}/{len(specs)}] {spec}")
        try:
            rows.append(validity_row(args, ctx, spec))
        except Exception as e:  # a bug in one row must not lose the others
            rows.append({"spec": spec, "error": shorten(f"{type(e).__name__}: {e}")})
            log(f"  internal error: {rows[-1]['error']}")
        write_json(os.path.join(args.out, "validity.json"), {"context": public(ctx), "rows": rows})
    with open(os.path.join(args.out, "validity.md"), "w", encoding="utf-8") as f:
        f.write(validity_markdown(rows, ctx, args))
    log(f"wrote {args.out}/validity.md and validity.json")


def validity_row(args, ctx, spec):
    repo, fandango, thicket = ctx["repo"], ctx["fandango"], ctx["thicket"]
    row = {"spec": spec}
    if not os.path.isfile(os.path.join(repo, spec)):
        row["error"] = "no such spec"
        return row
    parties = party_names(repo, spec)
    if parties:
        row["protocol"] = sorted(set(parties))[:3]
        log("  protocol spec (parties), skipped")
        return row
    work = fresh_dir(os.path.join(args.out, "validity", spec_slug(spec)))
    n, seed = args.count, args.seed

    # (a) Fandango generates (or, with --fandango-from, what an earlier run recorded).
    earlier = args.fandango_rows.get(spec)
    if earlier is not None and "fandango_generates" in earlier:
        for key in ("fandango_generated", "fandango_seconds", "fandango_generates",
                    "fandango_error", "fandango_self_accepted",
                    "fandango_self_first_rejection", "fandango_self_error"):
            if key in earlier:
                row[key] = earlier[key]
        log(f"  fandango: {row['fandango_generated']}/{n} (from --fandango-from)")
        return thicket_half(args, ctx, spec, row, work)
    r, files, cmd = fandango_fuzz(fandango, repo, spec, n, seed,
                                  os.path.join(timed, "fandango"), args.fandango_timeout)
    save_log(os.path.join(work, "fandango-fuzz.log"), cmd, r)
    row["fandango_generated"] = len(files)
    row["fandango_seconds"] = round(r.wall, 2)
    row["fandango_generates"] = r.ok() and len(files) == n
    if not r.ok():
        row["fandango_error"] = ("timed out" if r.timed_out
                                 else f"exit {r.rc}: {first_error_line(r.output)}")
    log(f"  fandango: {len(files)}/{n} in {r.wall:.1f} s"
        + (f" ({row['fandango_error']})" if "fandango_error" in row else ""))
    if files and not args.no_self_check:
        verdicts, failure = fandango_validate(fandango, repo, spec, files,
                                              args.parse_timeout, args.startup_timeout)
        if verdicts is None:
            row["fandango_self_error"] = failure
        else:
            acc, judged, first = tally(verdicts)
            row["fandango_self_accepted"] = acc
            row["fandango_self_first_rejection"] = first
        log(f"  fandango parse of Fandango's own: {row.get('fandango_self_accepted')}"
            f"/{len(files)}")

    return thicket_half(args, ctx, spec, row, work)


def thicket_half(args, ctx, spec, row, work):
    """(b)-(d) of a validity row: thicket lints and generates, Fandango judges."""
    repo, fandango, thicket = ctx["repo"], ctx["fandango"], ctx["thicket"]
    n, seed = args.count, args.seed
    if thicket is None:
        return row
    # (b) thicket lint.
    r, cmd = thicket_lint(thicket, ctx["thicket_include"], repo, spec, args.thicket_timeout)
    save_log(os.path.join(work, "thicket-lint.log"), cmd, r)
    row["thicket_lint"] = r.ok()
    if not r.ok():
        row["thicket_lint_error"] = ("timed out" if r.timed_out
                                     else f"exit {r.rc}: {first_error_line(r.output)}")
    # (c) thicket generate.
    r, files, cmd = thicket_generate(thicket, ctx["thicket_include"], repo, spec, n, seed,
                                     os.path.join(work, "thicket"), args.thicket_timeout)
    save_log(os.path.join(work, "thicket-generate.log"), cmd, r)
    row["thicket_generated"] = len(files)
    row["thicket_generate"] = r.ok() and len(files) == n
    if not r.ok():
        row["thicket_error"] = ("timed out" if r.timed_out
                                else f"exit {r.rc}: {first_error_line(r.output)}")
    log(f"  thicket: lint {'ok' if row['thicket_lint'] else 'FAILED'}, generated "
        f"{len(files)}/{n}" + (f" ({row['thicket_error']})" if "thicket_error" in row else ""))
    # (d) Fandango judges thicket's inputs; the second judge too.
    if files:
        verdicts, failure = fandango_validate(fandango, repo, spec, files,
                                              args.parse_timeout, args.startup_timeout)
        if verdicts is None:
            row["judge_error"] = failure
        else:
            acc, judged, first = tally(verdicts)
            row["accepted"] = acc
            row["first_rejection"] = first
            write_json(os.path.join(work, "verdicts.json"),
                       {os.path.basename(f): v for f, v in sorted(verdicts.items())})
        second = second_judge(JUDGE_OF.get(spec), files, ctx["judge_python"],
                              ctx["has_docutils"], args.parse_timeout)
        if second is not None:
            acc2, _, first2 = tally(second)
            row["second_judge"] = JUDGE_OF[spec]
            row["second_accepted"] = acc2
            row["second_first_rejection"] = first2
        log(f"  fandango accepts {row.get('accepted')}/{len(files)} of thicket's"
            + (f"; {row['second_judge']} judge {row['second_accepted']}/{len(files)}"
               if "second_judge" in row else ""))
    return row


def validity_markdown(rows, ctx, args):
    out = [f"{ctx['fandango_version']} (spec checkout {ctx['fandango_commit']}), "
           f"{ctx['thicket_version']}; {args.count} inputs per spec, seed {args.seed}. "
           "\"accepted\": thicket's inputs that `fandango parse --validate` accepts.",
           "", "| spec | fandango generates | fandango accepts its own | thicket lint "
           "| thicket generate | accepted | 2nd judge | first rejection |",
           "|---|---|---|---|---|---|---|---|"]
    protocol = []
    for row in rows:
        if "protocol" in row:
            protocol.append(row["spec"])
            continue
        if "error" in row:
            out.append(f"| {row['spec']} | error: {cell(row['error'])} | | | | | | |")
            continue
        fd = (f"yes ({row['fandango_seconds']} s)" if row.get("fandango_generates")
              else f"no: {row.get('fandango_generated', 0)} inputs, "
                   f"{row.get('fandango_error', 'fewer than asked')}")
        own = (f"{row['fandango_self_accepted']}/{row['fandango_generated']}"
               if "fandango_self_accepted" in row else row.get("fandango_self_error", ""))
        lint = ("" if "thicket_lint" not in row else "yes" if row["thicket_lint"]
                else f"no: {row.get('thicket_lint_error', '')}")
        gen = ("" if "thicket_generate" not in row
               else "yes" if row["thicket_generate"]
               else f"no: {row.get('thicket_generated', 0)} inputs"
                    + (f", {row['thicket_error']}" if "thicket_error" in row else ""))
        acc = (f"{row['accepted']}/{row['thicket_generated']}" if "accepted" in row
               else row.get("judge_error", ""))
        second = (f"{row['second_judge']}: {row['second_accepted']}/{row['thicket_generated']}"
                  if "second_judge" in row else "")
        first = (f"fandango: {row['first_rejection']}" if row.get("first_rejection")
                 else f"{row['second_judge']}: {row['second_first_rejection']}"
                 if row.get("second_first_rejection") else "")
        out.append("| " + " | ".join(cell(x) for x in
                                     (row["spec"], fd, own, lint, gen, acc, second, first)) + " |")
    if protocol:
        out += ["", "Protocol specs (parties), skipped: " + ", ".join(protocol) + "."]
    return "\n".join(out) + "\n"


def cell(text):
    return shorten(str(text), 160).replace("|", "\\|")


# ---------------------------------------------------------------- speed


def speed(args, ctx):
    specs = args.specs or EVAL_SPECS
    results = []
    for i, spec in enumerate(specs, 1):
        count = args.count or SPEED_COUNT.get(spec, SPEED_COUNT_DEFAULT)
        log(f"[{i}/{len(specs)}] {spec}: -n {count}, seeds {args.seeds}")
        runs = []
        for seed in args.seeds:
            try:
                runs.append(speed_run(args, ctx, spec, count, seed))
            except Exception as e:  # keep the other seeds and specs
                runs.append({"seed": seed, "error": shorten(f"{type(e).__name__}: {e}")})
                log(f"  internal error: {runs[-1]['error']}")
            results.append({"spec": spec, "count": count, **runs[-1]})
            write_json(os.path.join(args.out, "speed.json"),
                       {"context": public(ctx), "runs": results,
                        "summary": speed_summary(results)})
    summary = speed_summary(results)
    write_json(os.path.join(args.out, "speed.json"),
               {"context": public(ctx), "runs": results, "summary": summary})
    with open(os.path.join(args.out, "speed.md"), "w", encoding="utf-8") as f:
        f.write(speed_markdown(summary, results, ctx, args))
    log(f"wrote {args.out}/speed.md and speed.json")


def side_figures(files, verdicts, wall, startup, cpu=None):
    """valid/s over the whole process and without start-up, valid inputs per CPU second
    of the whole process (its descendants included); size and distinctness."""
    contents = read_inputs(files)
    valid = [c for f, c in zip(files, contents) if verdicts is not None and verdicts.get(f) is None]
    figures = {
        "generated": len(files),
        "valid": len(valid) if verdicts is not None else None,
        "wall_s": round(wall, 3),
        "valid_per_s": rate(len(valid), wall) if verdicts is not None else None,
        "cpu_s": round(cpu, 3) if cpu is not None else None,
        "valid_per_cpu_s": rate(len(valid), cpu) if verdicts is not None and cpu else None,
        "mean_size": round(sum(map(len, valid)) / len(valid), 1) if valid else None,
        "distinct": round(len(set(valid)) / len(valid), 3) if valid else None,
        "mean_size_all": round(sum(map(len, contents)) / len(contents), 1) if contents else None,
        "distinct_all": round(len(set(contents)) / len(contents), 3) if contents else None,
        "digest": hashlib.sha256(b"".join(hashlib.sha256(c).digest() for c in contents))
                  .hexdigest()[:16],
    }
    # Without start-up: the inputs over the time beyond the `-n 1` run, if that time is
    # large enough to measure (for easy specs Fandango's -n 1 costs nearly as much as -n N).
    if startup is not None and verdicts is not None and wall - startup >= 0.2 * wall:
        figures["valid_per_s_without_startup"] = rate(len(valid), wall - startup)
    return figures


def rate(count, seconds):
    return round(count / seconds, 3) if seconds > 0 else None


def speed_run(args, ctx, spec, count, seed):
    repo, fandango, thicket = ctx["repo"], ctx["fandango"], ctx["thicket"]
    work = fresh_dir(os.path.join(args.out, "speed", spec_slug(spec), f"seed-{seed}"))
    # The timed runs write where --scratch says (a RAM disk by default), their outputs
    # copied into `work` afterwards.
    timed = fresh_dir(os.path.join(args.scratch, spec_slug(spec), f"seed-{seed}"))
    record = {"seed": seed, "scratch": args.scratch}

    # Fandango's start-up: one input (run first, so its spec cache is warm for the real run).
    r, files, cmd = fandango_fuzz(fandango, repo, spec, 1, seed,
                                  os.path.join(timed, "fandango-startup"), args.fandango_timeout)
    save_log(os.path.join(work, "fandango-startup.log"), cmd, r)
    startup = r.wall if r.ok() and files else None
    record["fandango_startup_s"] = round(r.wall, 3) if startup is not None else None

    record["load_1min_fandango"] = round(os.getloadavg()[0], 2)
    r, files, cmd = fandango_fuzz(fandango, repo, spec, count, seed,
                                  os.path.join(timed, "fandango"), args.fandango_timeout)
    save_log(os.path.join(work, "fandango.log"), cmd, r)
    log(f"  seed {seed}: fandango {len(files)}/{count} in {r.wall:.1f} s"
        + (" (time limit)" if r.timed_out else "") + f", start-up {record['fandango_startup_s']} s")
    verdicts = None
    if files:
        verdicts, failure = fandango_validate(fandango, repo, spec, files,
                                              args.parse_timeout, args.startup_timeout)
        if verdicts is None:
            record["fandango_judge_error"] = failure
    fd = side_figures(files, verdicts, r.wall, startup, r.cpu)
    fd["timed_out"] = r.timed_out
    if not r.ok() and not r.timed_out:
        fd["error"] = f"exit {r.rc}: {first_error_line(r.output)}"
    if verdicts:
        fd["first_rejection"] = tally(verdicts)[2]
    fd["second_judge_accepted"] = tally(second_judge(
        JUDGE_OF.get(spec), files, ctx["judge_python"], ctx["has_docutils"],
        args.parse_timeout))[0]
    record["fandango"] = fd
    log(f"  seed {seed}: fandango valid {fd['valid']}/{len(files)}, {fd['valid_per_s']} valid/s")

    if thicket is not None:
        # Each run makes the same inputs; the run of median wall time counts. The timed
        # runs are the plain command, as `fandango fuzz` is: --stats counts k-paths, work
        # Fandango is not asked for. One more run with --stats gives thicket's own figure.
        runs = []
        for _ in range(max(1, args.thicket_runs)):
            record.setdefault("load_1min", []).append(round(os.getloadavg()[0], 2))
            r, files, cmd = thicket_generate(thicket, ctx["thicket_include"], repo, spec, count,
                                             seed, os.path.join(timed, "thicket"),
                                             args.thicket_timeout, unique=True)
            runs.append((r.wall, r, files, cmd))
        runs.sort(key=lambda run: run[0])
        _, r, files, cmd = runs[len(runs) // 2]
        record["thicket_walls_s"] = [round(run[0], 3) for run in runs]
        save_log(os.path.join(work, "thicket.log"), cmd, r)
        stats_run, stats_files, stats_cmd = thicket_generate(
            thicket, ctx["thicket_include"], repo, spec, count, seed,
            os.path.join(timed, "thicket-stats"), args.thicket_timeout, stats=True, unique=True)
        save_log(os.path.join(work, "thicket-stats.log"), stats_cmd, stats_run)
        if [read_file(f) for f in stats_files] != [read_file(f) for f in files]:
            record["thicket_stats_run_differs"] = True
        verdicts = None
        if files:
            verdicts, failure = fandango_validate(fandango, repo, spec, files,
                                                  args.parse_timeout, args.startup_timeout)
            if verdicts is None:
                record["thicket_judge_error"] = failure
        th = side_figures(files, verdicts, r.wall, None, r.cpu)
        th["timed_out"] = r.timed_out
        if not r.ok() and not r.timed_out:
            th["error"] = f"exit {r.rc}: {first_error_line(r.output)}"
        m = STATS_RE.search(stats_run.output)
        if m:
            th["stats_line"] = m.group(0)
            th["stats_seconds"] = float(m.group(2))
            th["stats_inputs_per_s"] = float(m.group(3))
            if verdicts is not None and files:
                # thicket's own rate (its clock leaves out start-up and reading the spec),
                # counting only the share Fandango accepts.
                th["valid_per_s_without_startup"] = round(
                    th["stats_inputs_per_s"] * th["valid"] / len(files), 3)
        if verdicts:
            th["first_rejection"] = tally(verdicts)[2]
        th["second_judge_accepted"] = tally(second_judge(
            JUDGE_OF.get(spec), files, ctx["judge_python"], ctx["has_docutils"],
            args.parse_timeout))[0]
        record["thicket"] = th
        log(f"  seed {seed}: thicket valid {th['valid']}/{len(files)} in {r.wall:.3f} s, "
            f"{th['valid_per_s']} valid/s (own figure: {th.get('stats_inputs_per_s')} inputs/s)")
        for key in ("valid_per_s", "valid_per_s_without_startup", "valid_per_cpu_s"):
            a, b = th.get(key), fd.get(key)
            record[f"ratio_{key}"] = round(a / b, 2) if a is not None and b else None
    shutil.copytree(timed, work, dirs_exist_ok=True)
    shutil.rmtree(timed)
    return record


def speed_summary(results):
    summary = []
    for spec in dict.fromkeys(r["spec"] for r in results):
        runs = [r for r in results if r["spec"] == spec and "error" not in r]
        entry = {"spec": spec, "seeds": [r["seed"] for r in runs],
                 "count": runs[0]["count"] if runs else None}
        for side in ("fandango", "thicket"):
            for key in ("valid_per_s", "valid_per_s_without_startup", "valid_per_cpu_s",
                        "mean_size", "distinct",
                        "valid", "generated", "second_judge_accepted"):
                values = [r[side][key] for r in runs if side in r and r[side].get(key) is not None]
                entry[f"{side}_{key}"] = median(values)
        entry["fandango_startup_s"] = median(
            [r["fandango_startup_s"] for r in runs if r.get("fandango_startup_s") is not None])
        entry["fandango_timed_out"] = sum(1 for r in runs if r.get("fandango", {}).get("timed_out"))
        for key in ("ratio_valid_per_s", "ratio_valid_per_s_without_startup",
                    "ratio_valid_per_cpu_s"):
            values = [r[key] for r in runs if r.get(key) is not None]
            entry[f"{key}_median"] = median(values)
            entry[f"{key}_min"] = min(values) if values else None
        summary.append(entry)
    return summary


def median(values):
    return round(statistics.median(values), 3) if values else None


def speed_markdown(summary, results, ctx, args):
    def f(x, fmt="{:g}"):
        return "–" if x is None else fmt.format(x)

    out = [f"{ctx['fandango_version']} (spec checkout {ctx['fandango_commit']}), "
           f"{ctx['thicket_version']}; seeds {', '.join(map(str, args.seeds))}; "
           "medians over seeds. valid/s counts only inputs `fandango parse --validate` "
           "accepts; \"process\" is the wall time of the whole command (thicket's: the "
           f"median of {args.thicket_runs} runs, without --stats), \"w/o start-up\" "
           "subtracts Fandango's `-n 1` run and takes thicket's own --stats time (one "
           "more run); \"CPU\" "
           "divides by the whole command's CPU time (user and system, with the processes "
           "it waited for, such as thicket's Python runner), which a busy machine's "
           "waiting for a core does not inflate.", "",
           "| spec | N | Fandango valid/s (process) | Fandango valid/s (w/o start-up) "
           "| Fandango start-up (s) | Fandango valid | Fandango mean size (B) | Fandango distinct "
           "| thicket valid/s (process) | thicket valid/s (w/o start-up) | thicket valid "
           "| thicket mean size (B) | thicket distinct | ratio (process) median / min "
           "| ratio (w/o start-up) median / min | Fandango / thicket valid per CPU s "
           "| ratio (CPU) median / min | 2nd judge accepts: Fandango's / thicket's |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for e in summary:
        timed = f" ({e['fandango_timed_out']} cut at time limit)" if e["fandango_timed_out"] else ""
        out.append("| " + " | ".join([
            e["spec"], f(e["count"]),
            f(e["fandango_valid_per_s"]) + timed, f(e["fandango_valid_per_s_without_startup"]),
            f(e["fandango_startup_s"]),
            f"{f(e['fandango_valid'])}/{f(e['fandango_generated'])}",
            f(e["fandango_mean_size"]), f(e["fandango_distinct"], "{:.0%}"),
            f(e["thicket_valid_per_s"]), f(e["thicket_valid_per_s_without_startup"]),
            f"{f(e['thicket_valid'])}/{f(e['thicket_generated'])}",
            f(e["thicket_mean_size"]), f(e["thicket_distinct"], "{:.0%}"),
            f"{f(e['ratio_valid_per_s_median'])} / {f(e['ratio_valid_per_s_min'])}",
            f"{f(e['ratio_valid_per_s_without_startup_median'])} / "
            f"{f(e['ratio_valid_per_s_without_startup_min'])}",
            f"{f(e['fandango_valid_per_cpu_s'])} / {f(e['thicket_valid_per_cpu_s'])}",
            f"{f(e['ratio_valid_per_cpu_s_median'])} / {f(e['ratio_valid_per_cpu_s_min'])}",
            f"{JUDGE_OF.get(e['spec'], '–')}: {f(e['fandango_second_judge_accepted'])}"
            f"/{f(e['fandango_generated'])} / {f(e['thicket_second_judge_accepted'])}"
            f"/{f(e['thicket_generated'])}",
        ]) + " |")
    notes = []
    for r in results:
        if "error" in r:
            notes.append(f"{r['spec']} seed {r['seed']}: {r['error']}")
        for side in ("fandango", "thicket"):
            figures = r.get(side, {})
            for key in ("error", "first_rejection"):
                if figures.get(key):
                    notes.append(f"{r['spec']} seed {r['seed']}, {side} "
                                 f"{'failed' if key == 'error' else 'first rejection'}: "
                                 f"{figures[key]}")
            if r.get(f"{side}_judge_error"):
                notes.append(f"{r['spec']} seed {r['seed']}, judging {side}'s inputs failed: "
                             f"{r[side + '_judge_error']}")
    if any(e["fandango_valid_per_s"] and e["fandango_valid_per_s_without_startup"] is None
           for e in summary):
        notes.append("Fandango w/o start-up is left out (–) where its run took less than "
                     "1.25 times its `-n 1` start-up run: too close to measure.")
    if notes:
        out += [""] + [f"- {n}" for n in notes]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- main


def write_json(path, value):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def public(ctx):
    return {k: v for k, v in ctx.items() if isinstance(v, (str, bool, int, type(None)))}


def seed_list(text):
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected seeds like 1,2,3") from None


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("specs", nargs="*", metavar="SPEC",
                        help="specs to run, relative to the checkout (default: all, or the "
                             "five evaluation specs for speed)")
    common.add_argument("--fandango-repo", required=True, metavar="DIR",
                        help="Fandango source checkout (git clone "
                             "https://github.com/fandango-fuzzer/fandango)")
    common.add_argument("--fandango", metavar="PATH",
                        help="an existing `fandango` executable (default: install "
                             f"fandango-fuzzer=={FANDANGO_VERSION} into --venv)")
    common.add_argument("--venv", default=os.path.join(REPO, "eval", ".venv-fandango"),
                        metavar="DIR", help="virtual environment for Fandango "
                                            "(default: eval/.venv-fandango)")
    common.add_argument("--thicket", metavar="PATH",
                        help="thicket binary (default: $THICKET, else target/release/thicket)")
    common.add_argument("--no-thicket", action="store_true",
                        help="run the Fandango half only")
    common.add_argument("--out", default=os.path.join(REPO, "target", "fandango-eval"),
                        metavar="DIR", help="raw data and tables (default: target/fandango-eval)")
    common.add_argument("--fandango-timeout", type=float, default=300, metavar="S",
                        help="time limit of one `fandango fuzz` run (default: 300)")
    common.add_argument("--thicket-timeout", type=float, default=120, metavar="S",
                        help="time limit of one thicket run (default: 120)")
    common.add_argument("--parse-timeout", type=float, default=60, metavar="S",
                        help="time limit for `fandango parse` on one file (default: 60)")
    common.add_argument("--startup-timeout", type=float, default=180, metavar="S",
                        help="time limit for `fandango parse` to read the spec (default: 180)")
    v = sub.add_parser("validity", parents=[common],
                       help="which specs thicket reads and how many of its inputs Fandango "
                            "accepts")
    v.add_argument("-n", "--count", type=int, default=100, help="inputs per spec (default: 100)")
    v.add_argument("--seed", type=int, default=1, help="seed of both tools (default: 1)")
    v.add_argument("--no-self-check", action="store_true",
                   help="do not judge Fandango's own outputs with `fandango parse`")
    v.add_argument("--fandango-from", metavar="JSON",
                   help="take Fandango's half of each spec's row (does it generate, does it "
                        "accept its own) from this validity.json of an earlier run instead "
                        "of running `fandango fuzz` again")
    s = sub.add_parser("speed", parents=[common],
                       help="valid inputs per second, thicket against Fandango")
    s.add_argument("-n", "--count", type=int, default=None,
                   help=f"inputs per run (default: {SPEED_COUNT_DEFAULT}, tar "
                        f"{SPEED_COUNT['evaluation/tar/tar.fan']})")
    s.add_argument("--seeds", type=seed_list, default=[1, 2, 3],
                   metavar="S,S,...", help="seeds, one repetition each (default: 1,2,3)")
    s.add_argument("--thicket-runs", type=int, default=5, metavar="K",
                   help="thicket runs per seed, the one of median wall time counted: a run "
                        "of 100 inputs takes tens of milliseconds, so a busy machine's "
                        "scheduling delays swamp a single run (same inputs every run; "
                        "default: 5)")
    s.add_argument("--scratch", metavar="DIR", default=default_scratch(),
                   help="where the timed runs write their inputs, copied into --out "
                        "afterwards (default: a folder in /dev/shm, a RAM disk, where it is "
                        "writable, else under --out). On ext4, a file created right after "
                        "many were deleted nearby waits while the kernel skips recently "
                        "deleted inodes (perf: 40%% of a 100-input csv run of thicket, whose "
                        "runs replace each other's files); a RAM disk spares both tools "
                        "that, as AFL++'s docs advise for fuzzing output")
    args = parser.parse_args(argv)
    args.fandango_rows = {}
    if getattr(args, "fandango_from", None):
        with open(args.fandango_from, encoding="utf-8") as f:
            args.fandango_rows = {row["spec"]: row for row in json.load(f)["rows"]}
    args.fandango_repo = os.path.abspath(args.fandango_repo)
    args.out = os.path.abspath(args.out)
    if args.mode == "speed" and args.scratch is None:
        args.scratch = os.path.join(args.out, "speed-scratch")
    return args


def main(argv):
    if argv[:1] == ["judge"]:
        return judge_main(argv[1:])
    args = parse_args(argv)
    if not os.path.isdir(os.path.join(args.fandango_repo, "evaluation")):
        sys.exit(f"fandango_compare: {args.fandango_repo} is not a Fandango checkout "
                 "(git clone https://github.com/fandango-fuzzer/fandango)")
    os.makedirs(args.out, exist_ok=True)
    fandango, version = setup_fandango(args)
    global THICKET_PYTHON
    beside = os.path.join(os.path.dirname(fandango), "python3")
    if os.path.isfile(beside):
        THICKET_PYTHON = beside
        log(f"thicket's Python: {beside} (Fandango's)")
    thicket = find_thicket(args)
    commit = run(["git", "-C", args.fandango_repo, "rev-parse", "--short", "HEAD"], timeout=60)
    py, has_docutils = judge_python(fandango)
    ctx = {
        "repo": args.fandango_repo,
        "fandango": fandango,
        "fandango_version": version,
        "fandango_commit": commit.output.strip() if commit.ok() else "unknown",
        "thicket": thicket,
        "thicket_version": (run([thicket, "--version"], timeout=60).output.strip()
                            if thicket else "thicket not run"),
        "thicket_include": thicket_takes_include(thicket) if thicket else False,
        "judge_python": py,
        "has_docutils": has_docutils,
    }
    if has_docutils:
        r = run([py, "-c", "import docutils; print(docutils.__version__)"], timeout=120)
        ctx["docutils_version"] = r.output.strip()
    else:
        log("warning: no Python with docutils found; the rest spec has no second judge")
    log(f"{version} at {fandango}; specs from {args.fandango_repo} ({ctx['fandango_commit']}); "
        f"thicket: {thicket or 'not run'}")
    (validity if args.mode == "validity" else speed)(args, ctx)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
