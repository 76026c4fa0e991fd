# thicket's Python runner: calls one Python function on many inputs, in one interpreter,
# measuring line and branch coverage of each call with coverage.py.
#
# Started by thicket-exec (python.rs) as `python3 -c <this file> TARGET MODE INCLUDE...`
# with the protocol on fd 3 (requests) and fd 4 (replies); stdin is /dev/null and the
# target's stdout and stderr go to a file that thicket reads. The runner moves the two
# pipes to high descriptors before loading the target and leaves /dev/null on 3 and 4,
# so a target that closes or reuses them cannot cut the protocol.
#
# TARGET is `module:function` (`json:loads`) or `path/to/file.py:function`. MODE is
# `str` (the input decoded as UTF-8; invalid bytes become U+FFFD, as a caller holding
# text could never pass lone surrogates) or `bytes`. INCLUDE are coverage.py `include`
# file patterns; none: the target function's own package (its top-level package's
# folder, or its module file; for `file.py:function`, the file's folder).
#
# Protocol: every message is a 4-byte little-endian length and that many bytes.
# runner -> thicket first: {"ready": ..., "python": ..., "coverage": ..., "include": [...]}
# or {"error": ...}. thicket -> runner then: a JSON list of the files thicket already
# knows (analysed by an earlier runner), then inputs. Per input, runner -> thicket:
# {"ok": bool, "exc": class, "frame": "file:line in function", "message": str,
#  "arcs": {path: [[from, to], ...]}, "pending": n} with coverage.py's arcs (negative
# numbers are entries and exits of code objects); if `pending` > 0 a second message
# follows, {"new_files": {path: {...}}}, the analysis of files seen for the first time
# (see `analyse`): that set-up work is not part of the input's time. A call that ends
# the process with os._exit sends {"exit": code, "frame": ...} first.
#
# Speed: coverage.py's public way to read one call's data (erase, start, stop,
# get_data) costs about 10 ms per call, nearly all in its SQLite store. The runner
# therefore reads the collector's in-memory data (what `Collector.flush_data` reads) and
# clears it itself, about 0.1 ms per call; if a coverage.py version lacks those
# internals it falls back to the public API.
import ast
import fcntl
import importlib
import importlib.util
import json
import os
import struct
import sys
import traceback


def _move(fd):
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, fd)
    os.close(null)
    return high


REQ = os.fdopen(_move(3), "rb", buffering=0)
REP = os.fdopen(_move(4), "wb", buffering=0)
LOST = 86  # exit code: the protocol pipe is gone


def send(obj):
    data = json.dumps(obj).encode("utf-8", "surrogateescape")
    try:
        REP.write(struct.pack("<I", len(data)) + data)
    except OSError as e:
        sys.stderr.write(f"thicket runner: cannot reply to thicket ({e}); did the target close its pipes?\n")
        sys.stderr.flush()
        os._exit(LOST)


def read_exact(n):
    buf = b""
    while len(buf) < n:
        try:
            chunk = REQ.read(n - len(buf))
        except OSError:
            chunk = b""
        if not chunk:
            os._exit(0)
        buf += chunk
    return buf


def read_message():
    (n,) = struct.unpack("<I", read_exact(4))
    return read_exact(n)


_real_exit = os._exit
PID = os.getpid()


def _exit_hook(code):
    """os._exit called by the target: say where before ending the process (not in a
    child the target forked: only the runner speaks on the pipe)."""
    if os.getpid() != PID:
        _real_exit(code)
    try:
        f = sys._getframe(1)
        send({"exit": int(code), "frame": f"{f.f_code.co_filename}:{f.f_lineno} in {f.f_code.co_name}"})
    finally:
        _real_exit(code)


def load(target):
    where, _, name = target.rpartition(":")
    if not where or not name:
        raise ValueError(f"target {target!r} is not `module:function` or `file.py:function`")
    if where.endswith(".py") or os.sep in where:
        path = os.path.abspath(where)
        if not os.path.exists(path):
            raise FileNotFoundError(f"no such Python file: {where}")
        sys.path.insert(0, os.path.dirname(path))
        spec = importlib.util.spec_from_file_location("thicket_target", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["thicket_target"] = module
        spec.loader.exec_module(module)
        home = [os.path.join(os.path.dirname(path), "*")]
    else:
        module = importlib.import_module(where)
        top = sys.modules.get(where.split(".")[0], module)
        top_file = getattr(top, "__file__", None)
        if getattr(top, "__path__", None) and top_file:
            home = [os.path.join(os.path.dirname(os.path.abspath(top_file)), "*")]
        elif top_file:
            home = [os.path.abspath(top_file)]
        else:
            home = []
    fn = module
    for part in name.split("."):
        fn = getattr(fn, part)
    if not callable(fn):
        raise TypeError(f"{target} is not callable")
    return fn, home


def definition_lines(source):
    """Lines that run only when a module (or class) body runs: module-level and
    class-body statements, not function bodies."""
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
            out.update(d.lineno for d in node.decorator_list)
        elif isinstance(node, ast.stmt):
            out.add(node.lineno)
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(node, field, None) or ():
                todo.append(child)
    return out


def function_ranges(source):
    """Every function (and method, lambda excluded) of a file: [qualified name, line of
    `def`, last line], so that a line executed belongs to the innermost function whose
    range holds it (after its `def` line, which runs in the enclosing code)."""
    out = []
    todo = [(node, "") for node in ast.parse(source).body]
    while todo:
        node, prefix = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = prefix + node.name
            out.append([name, node.lineno, getattr(node, "end_lineno", node.lineno) or node.lineno])
            todo.extend((child, name + ".<locals>.") for child in ast.iter_child_nodes(node))
        elif isinstance(node, ast.ClassDef):
            todo.extend((child, prefix + node.name + ".") for child in ast.iter_child_nodes(node))
        else:
            todo.extend((child, prefix) for child in ast.iter_child_nodes(node))
    return out


def analyse(path):
    """What thicket needs to count a file as coverage.py does: its statements, the
    first line of the statement each line belongs to (where it differs), the lines with
    more than one exit (with their number of exits), and the statements that run only
    at import (module and class bodies); and its functions' line ranges (to name the
    functions a run entered)."""
    try:
        from coverage.parser import PythonParser

        parser = PythonParser(filename=path)
        parser.parse_source()
        exits = parser.exit_counts()
        multi = sorted([line, n] for line, n in exits.items() if n > 1)
        try:
            text = open(path, "rb").read()
            nlines = text.count(b"\n") + 1
            first = {}
            for line in range(1, nlines + 1):
                f = parser.first_line(line)
                if f != line:
                    first[str(line)] = f
            deftime = sorted(definition_lines(text) & set(parser.statements))
            functions = function_ranges(text)
        except Exception:  # noqa: BLE001 - fall back to raw lines
            first, deftime, functions = {}, [], []
        return {
            "statements": sorted(parser.statements),
            "multi": multi,
            "first": first,
            "deftime": deftime,
            "functions": functions,
        }
    except Exception:  # not Python source, or a coverage.py without this API
        return {}


def packed_layout(collector):
    """How the C tracer packs an arc into an int: (bits per line number, bit of the
    first sign). coverage.py 7.0-7.3 pack 20-bit lines with signs at bits 40 and 41,
    later versions 28-bit lines with signs at 56 and 57; which one is read off
    coverage.py's own unpacking code (`Collector.flush_data`)."""
    try:
        import inspect

        if "<< 40" in inspect.getsource(type(collector).flush_data):
            return 20, 40
    except Exception:  # noqa: BLE001 - source unavailable: the current layout
        pass
    return 28, 56


class ArcReader:
    """One call's arcs, from the collector's memory if possible (see the top)."""

    def __init__(self, cov):
        self.cov = cov
        self.fast = False
        try:
            cov.start()
            cov.stop()
            collector = cov._collector
            self.data = collector.data
            # coverage.py 7.4 moved the flag into the tracer core; 7.0-7.3 keep it on
            # the collector.
            core = getattr(collector, "core", collector)
            self.packed = bool(core.packed_arcs)
            self.bits, self.sign = packed_layout(collector)
            self.fast = isinstance(self.data, dict)
        except Exception:  # a coverage.py without these internals
            self.fast = False

    def clear(self):
        if self.fast:
            # Emptied in place, as coverage.py's own `_clear_data` does: before 7.4 the
            # tracer keeps each file's set, and a removed key would orphan it.
            for items in self.data.values():
                items.clear()
        else:
            self.cov.erase()

    def arcs(self):
        out = {}
        if not self.fast:
            measured = self.cov.get_data()
            for path in measured.measured_files():
                out[path] = [list(a) for a in measured.arcs(path) or []]
            return out
        for path, items in self.data.items():
            if not items:
                continue
            if not self.packed:
                out[path] = [list(a) for a in items]
                continue
            arcs = []
            mask, bits, sign = (1 << self.bits) - 1, self.bits, self.sign
            for p in items:
                l1 = p & mask
                l2 = (p >> bits) & mask
                if p & (1 << sign):
                    l1 = -l1
                if p & (1 << (sign + 1)):
                    l2 = -l2
                arcs.append([l1, l2])
            out[path] = arcs
        return out


# ---- token-level path conditions (thicket fuzz --strategy whitebox, issue 21) ----
# With THICKET_TOKENIZER=module:callable (`esprima.scanner:Scanner.lex`) the runner
# replaces that callable by a wrapper: each token it returns gets, as its value (the
# `value` attribute or dict entry), a str subclass that records every equality test on
# it (`==`, `!=`, and so `in` over a list or tuple, which tests each element) with its
# outcome. Tokens are numbered by their start offset (`start` attribute or entry, else
# `range[0]`), first come first numbered, so a token scanned again (lookahead,
# backtracking) keeps its number; without a start offset, by call order. Not seen:
# `is` tests (esprima compares kinds with `is`), tests on a token's kind or on values
# that are not str (numbers), membership in a set or dict that misses (no comparison
# runs), and comparisons made on copies converted to plain str.
TOKEN_LIMIT = 20000  # recorded comparisons per call
_token_log = None


class _TokenText(str):
    """A token's text that records the equality tests made on it."""

    def __eq__(self, other):
        result = str.__eq__(self, other)
        if result is not NotImplemented and _token_log is not None:
            _token_log.record(self, other, result)
        return result

    def __ne__(self, other):
        result = str.__eq__(self, other)
        if result is NotImplemented:
            return result
        if _token_log is not None:
            _token_log.record(self, other, result)
        return not result

    __hash__ = str.__hash__


class _TokenLog:
    def __init__(self):
        self.index = {}
        self.tokens = []
        self.conds = []

    def wrap(self, token):
        is_dict = isinstance(token, dict)
        get = token.get if is_dict else (lambda k, d=None: getattr(token, k, d))
        start = get("start")
        if not isinstance(start, int):
            span = get("range")
            start = span[0] if isinstance(span, (list, tuple)) and span else None
        end = get("end")
        key = start if isinstance(start, int) else ("call", len(self.index))
        index = self.index.get(key)
        value = get("value")
        if index is None:
            index = self.index[key] = len(self.index)
            self.tokens.append([index, start if isinstance(start, int) else -1,
                                end if isinstance(end, int) else -1,
                                value if isinstance(value, str) else repr(value)])
        if isinstance(value, str) and not isinstance(value, _TokenText):
            text = _TokenText(value)
            text._thicket_index = index
            try:
                if is_dict:
                    token["value"] = text
                else:
                    token.value = text
            except Exception:  # noqa: BLE001 - a token that cannot be changed is not traced
                pass

    def record(self, text, other, result):
        if len(self.conds) < TOKEN_LIMIT and isinstance(other, str):
            self.conds.append([text._thicket_index, str.__str__(other), bool(result)])


def token_hook_install():
    """Wraps the tokenizer named by THICKET_TOKENIZER; an error message or None."""
    spec = os.environ.get("THICKET_TOKENIZER")
    if not spec:
        return None
    import inspect

    where, _, name = spec.rpartition(":")
    if not where or not name:
        return f"tokenizer {spec!r} is not `module:callable`"
    try:
        owner = importlib.import_module(where)
        parts = name.split(".")
        for part in parts[:-1]:
            owner = getattr(owner, part)
        raw = inspect.getattr_static(owner, parts[-1])
    except BaseException as e:  # noqa: BLE001 - reported to thicket
        return f"cannot load the tokenizer {spec}: {type(e).__name__}: {e}"
    kind = type(raw) if isinstance(raw, (staticmethod, classmethod)) else None
    original = raw.__func__ if kind else raw
    if not callable(original):
        return f"the tokenizer {spec} is not callable"

    def hooked(*args, **kwargs):
        token = original(*args, **kwargs)
        if _token_log is not None and token is not None:
            _token_log.wrap(token)
        return token

    setattr(owner, parts[-1], kind(hooked) if kind else hooked)
    return None


def token_log_reset():
    global _token_log
    if os.environ.get("THICKET_TOKENIZER"):
        _token_log = _TokenLog()


def token_log_report(reply):
    global _token_log
    if _token_log is not None:
        reply["tokens"] = _token_log.tokens
        reply["conds"] = _token_log.conds
        _token_log = None
# ---- end of token-level path conditions ----


def innermost_target_frame(tb, skip):
    """The innermost frame outside coverage.py and this runner (a RecursionError can end
    inside the tracer)."""
    frames = traceback.extract_tb(tb)
    for frame in reversed(frames):
        name = frame.filename
        if name.startswith("<string>") or any(name.startswith(s) for s in skip):
            continue
        return frame
    return frames[-1] if frames else None


def main():
    target, mode = sys.argv[1], sys.argv[2]
    include = sys.argv[3:] or None
    try:
        import coverage
    except ModuleNotFoundError as e:
        if e.name == "coverage":
            send({"error": "the Python package `coverage` is missing: pip install coverage"})
        else:
            send({"error": f"coverage.py cannot be imported: {e}"})
        return
    except (ImportError, MemoryError) as e:
        # Present but not loadable: a memory limit too low for its C tracer, a broken
        # install; saying "missing" would send the user to pip for nothing.
        send({"error": f"coverage.py cannot be imported: {type(e).__name__}: {e}"})
        return
    os._exit = _exit_hook
    try:
        fn, home = load(target)
    except BaseException as e:  # noqa: BLE001 - any failure to load is reported
        send({"error": f"cannot load {target}: {type(e).__name__}: {e}"})
        return
    hook_error = token_hook_install()
    if hook_error:
        send({"error": hook_error})
        return
    include = include or home or None
    cov = coverage.Coverage(branch=True, data_file=None, config_file=False, include=include)
    skip = [os.path.dirname(os.path.abspath(coverage.__file__)) + os.sep]
    send({
        "ready": True,
        "python": sys.version.split()[0],
        "coverage": coverage.__version__,
        "include": include or [],
    })
    known = set(json.loads(read_message().decode("utf-8", "surrogateescape")))
    reader = ArcReader(cov)
    as_str = mode == "str"
    while True:
        data = read_message()
        arg = data.decode("utf-8", "replace") if as_str else data
        reply = {"ok": True}
        reader.clear()
        token_log_reset()
        cov.start()
        try:
            fn(arg)
        except BaseException as e:  # noqa: BLE001 - every exception is a finding
            if os.getpid() != PID:  # a child the target forked: it must not reply
                _real_exit(1)
            cov.stop()
            frame = innermost_target_frame(e.__traceback__, skip)
            cls = type(e)
            qual = cls.__qualname__
            if cls.__module__ not in ("builtins", "__main__"):
                qual = f"{cls.__module__}.{qual}"
            reply = {
                "ok": False,
                "exc": qual,
                "frame": f"{frame.filename}:{frame.lineno} in {frame.name}" if frame else "",
                "message": str(e)[:2000],
            }
        else:
            if os.getpid() != PID:
                _real_exit(0)
            cov.stop()
        token_log_report(reply)
        arcs = reader.arcs()
        fresh = [path for path in arcs if path not in known]
        reply["arcs"] = arcs
        reply["pending"] = len(fresh)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a target may close or replace them
                pass
        send(reply)
        if fresh:
            send({"new_files": {path: analyse(path) for path in fresh}})
            known.update(fresh)


main()
