# thicket's Python runner: calls one Python function on many inputs, in one interpreter,
# measuring line and branch coverage of each call with coverage.py.
#
# Started by thicket-exec (python.rs) as `python3 -c <this file> TARGET MODE INCLUDE...`
# with the protocol on fd 3 (requests) and fd 4 (replies); stdin is /dev/null and the
# target's stdout and stderr go to a file that thicket reads.
#
# TARGET is `module:function` (`json:loads`) or `path/to/file.py:function`. MODE is
# `str` (the input decoded as UTF-8, undecodable bytes as surrogate escapes) or `bytes`.
# INCLUDE are coverage.py `include` file patterns (none: every file but this runner).
#
# Protocol: every message is a 4-byte little-endian length and that many bytes.
# thicket -> runner: an input. runner -> thicket: a JSON object, first
# {"ready": ..., "python": ..., "coverage": ...} or {"error": ...}, then per input
# {"ok": bool, "exc": class, "frame": "file:line in function", "message": str,
#  "arcs": {path: [[from, to], ...]}} with coverage.py's arcs (negative numbers are
# entries and exits of code objects), and for each file seen for the first time
# "new_files": {path: [statements, branches, [lines with more than one exit]]}.
#
# Speed: coverage.py's public way to read one call's data (erase, start, stop,
# get_data) costs about 10 ms per call, nearly all in its SQLite store. The runner
# therefore reads the collector's in-memory data (what `Collector.flush_data` reads) and
# clears it itself, about 0.1 ms per call; if a coverage.py version lacks those
# internals it falls back to the public API.
import importlib
import importlib.util
import json
import os
import struct
import sys
import traceback

REQ = os.fdopen(3, "rb", buffering=0)
REP = os.fdopen(4, "wb", buffering=0)


def send(obj):
    data = json.dumps(obj).encode("utf-8", "surrogateescape")
    REP.write(struct.pack("<I", len(data)) + data)


def read_exact(n):
    buf = b""
    while len(buf) < n:
        chunk = REQ.read(n - len(buf))
        if not chunk:
            sys.exit(0)
        buf += chunk
    return buf


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
    else:
        module = importlib.import_module(where)
    fn = module
    for part in name.split("."):
        fn = getattr(fn, part)
    if not callable(fn):
        raise TypeError(f"{target} is not callable")
    return fn


def branch_info(path, cache):
    """(set of lines with more than one exit, statements, branches) of a file."""
    if path in cache:
        return cache[path]
    info = (None, 0, 0)
    try:
        from coverage.parser import PythonParser

        parser = PythonParser(filename=path)
        parser.parse_source()
        exits = parser.exit_counts()
        multi = {line for line, n in exits.items() if n > 1}
        info = (multi, len(parser.statements), sum(exits[line] for line in multi))
    except Exception:  # not Python source, or a coverage.py without this API
        pass
    cache[path] = info
    return info


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
            self.packed = bool(collector.core.packed_arcs)
            self.fast = isinstance(self.data, dict)
        except Exception:  # a coverage.py without these internals
            self.fast = False

    def clear(self):
        if self.fast:
            self.data.clear()
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
            if not self.packed:
                out[path] = [list(a) for a in items]
                continue
            arcs = []
            for p in items:
                l1 = p & 0xFFFFFFF
                l2 = (p >> 28) & 0xFFFFFFF
                if p & (1 << 56):
                    l1 = -l1
                if p & (1 << 57):
                    l2 = -l2
                arcs.append([l1, l2])
            out[path] = arcs
        return out


def main():
    target, mode = sys.argv[1], sys.argv[2]
    include = sys.argv[3:] or None
    try:
        import coverage
    except ImportError:
        send({"error": "the Python package `coverage` is missing: pip install coverage"})
        return
    try:
        fn = load(target)
    except BaseException as e:  # noqa: BLE001 - any failure to load is reported
        send({"error": f"cannot load {target}: {type(e).__name__}: {e}"})
        return
    me = os.path.abspath(__file__) if "__file__" in globals() else None
    cov = coverage.Coverage(
        branch=True, data_file=None, config_file=False, include=include,
        omit=[me] if me else None,
    )
    send({"ready": True, "python": sys.version.split()[0], "coverage": coverage.__version__})
    cache = {}
    reader = ArcReader(cov)
    as_str = mode == "str"
    while True:
        (n,) = struct.unpack("<I", read_exact(4))
        data = read_exact(n)
        arg = data.decode("utf-8", "surrogateescape") if as_str else data
        reply = {"ok": True}
        reader.clear()
        cov.start()
        try:
            fn(arg)
        except BaseException as e:  # noqa: BLE001 - every exception is a finding
            cov.stop()
            tb = traceback.extract_tb(e.__traceback__)
            frame = tb[-1] if tb else None
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
            cov.stop()
        arcs = reader.arcs()
        fresh = {}
        for path in arcs:
            if path not in cache:
                multi, statements, branches = branch_info(path, cache)
                fresh[path] = [statements, branches, sorted(multi or ())]
        reply["arcs"] = arcs
        if fresh:
            reply["new_files"] = fresh
        sys.stdout.flush()
        sys.stderr.flush()
        send(reply)


main()
