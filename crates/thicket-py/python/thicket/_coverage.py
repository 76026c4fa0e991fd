"""Line and branch coverage of one call at a time, in this interpreter, for
``thicket.fuzz`` (its executor, in Rust, drives a ``Collector``).

Two backends, chosen by the interpreter:

- Python 3.12 and newer: ``sys.monitoring``. A code object is looked at once, at its
  first start; one of the measured files gets LINE and branch events locally
  (``BRANCH_LEFT`` / ``BRANCH_RIGHT`` on 3.14, ``BRANCH`` before). Each event is a
  callback. Once a call has fired many more events than it reached lines and branches
  (a target that loops), the collector switches for good to firing each once per call:
  a line's event (and on 3.14 a branch direction's) is disabled when it fires
  (``DISABLE``) and every call starts by re-enabling them (``restart_events``, which
  costs re-instrumenting the code that runs, more than a few callbacks: hence not from
  the start). ``BRANCH`` on 3.12 and 3.13 is never disabled: one instruction reports
  both directions.
- Older Pythons: ``sys.settrace`` during the call only, a local tracer on the measured
  code objects that records each line with the line before it in the same frame.

What a call reached is a set of ints, decoded by the executor with the code table
(``Collector.code_info``):

- ``index << 42 | before << 21 | line``: ``line`` of code object ``index`` ran, after
  ``before`` in the same frame (0: first line, or unknown); a branch when ``before`` is
  a line with a conditional jump;
- ``1 << 63 | index << 42 | source << 21 | destination``: a branch of code object
  ``index`` from one instruction to another (halved bytecode offsets).

Lines and offsets beyond 2**21 share ids (code that large is not expected).
"""

import dis
import fnmatch
import os
import sys
import traceback

_MASK = (1 << 21) - 1
_BRANCH = 1 << 63
_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _default_include(target):
    """The target's own package: the folder of its top-level package, or its module's
    file (as ``thicket fuzz --python`` measures); every file if neither is known."""
    function = getattr(target, "__func__", target)
    module_name = getattr(function, "__module__", None)
    if module_name is None:
        module_name = getattr(type(target), "__module__", None)
    module = sys.modules.get(module_name or "")
    if module is None:
        return ["*"]
    top = sys.modules.get(module_name.split(".")[0], module)
    top_file = getattr(top, "__file__", None)
    if getattr(top, "__path__", None) and top_file:
        return [os.path.join(os.path.dirname(os.path.abspath(top_file)), "*")]
    module_file = getattr(module, "__file__", None)
    if module_file:
        return [os.path.abspath(module_file)]
    return ["*"]


def _conditional_jump_lines(code):
    """Lines holding a conditional jump (``if``, ``while``, ``for``, ``and``...): the
    lines whose next line is a branch's direction."""
    lines = set()
    line = None
    for instruction in dis.get_instructions(code):
        start = instruction.starts_line
        # 3.13 reports `starts_line` as a flag and the number in `line_number`.
        if isinstance(start, bool):
            if start:
                line = instruction.line_number
        elif start is not None:
            line = start
        name = instruction.opname
        if line is not None and ("IF" in name or name == "FOR_ITER"):
            lines.add(line)
    return sorted(lines)


def _offset_lines(code):
    """The line of each instruction (by halved bytecode offset; 0 where none)."""
    out = [0] * ((len(code.co_code) + 1) // 2)
    for start, end, line in code.co_lines():
        for offset in range(start // 2, min(end // 2, len(out))):
            out[offset] = line or 0
    return out


class Collector:
    """Collects the lines and branches the measured files run during ``begin`` ...
    ``end`` (see the module docs)."""

    def __init__(self, include):
        self.include = [os.path.abspath(p) if p != "*" and os.sep in p else p for p in include]
        self.codes = {}  # code object -> its index, or -1 when not measured
        self.table = []  # per index: the code object
        self.hits = set()
        self.seen = []  # sys.monitoring: every event of the call, in order
        self.once = False  # sys.monitoring: events disabled once they fire (see _monitor)
        self.previous = None  # a tracer set before the call (a debugger's), put back after
        self.monitoring = sys.version_info >= (3, 12) and hasattr(sys, "monitoring")
        self.tool = None
        if self.monitoring:
            self._monitor()

    # -- which code is measured --

    def _measured(self, filename):
        if not filename or filename.startswith("<"):
            return False
        path = os.path.abspath(filename)
        if path.startswith(_HERE):
            return False
        return any(fnmatch.fnmatch(path, pattern) for pattern in self.include)

    def _register(self, code):
        if self._measured(code.co_filename):
            index = len(self.table)
            self.table.append(code)
        else:
            index = -1
        self.codes[code] = index
        return index

    def code_info(self, index):
        """What the executor needs of code object ``index``: its file, its function's
        qualified name, the lines with a conditional jump, and (sys.monitoring) the line
        of each halved offset."""
        code = self.table[index]
        name = getattr(code, "co_qualname", code.co_name)
        branches = [] if self.monitoring else _conditional_jump_lines(code)
        offsets = _offset_lines(code) if self.monitoring else []
        return (os.path.abspath(code.co_filename), name, branches, offsets)

    # -- sys.monitoring --

    def _monitor(self):
        monitoring = sys.monitoring
        for tool in (monitoring.COVERAGE_ID, 3, 4, 5):
            try:
                monitoring.use_tool_id(tool, "thicket")
            except ValueError:
                continue
            self.tool = tool
            break
        else:
            raise RuntimeError("thicket.fuzz: every sys.monitoring tool id is in use")
        events = monitoring.events
        disable = monitoring.DISABLE
        codes = self.codes
        seen = self.seen
        register = self._register
        local = events.LINE
        left = getattr(events, "BRANCH_LEFT", None)
        if left is not None:
            local |= left | events.BRANCH_RIGHT
        else:
            local |= events.BRANCH

        def start(code, offset):
            if code not in codes and register(code) >= 0:
                monitoring.set_local_events(self.tool, code, local)
            return disable

        def line(code, number):
            seen.append(codes[code] << 42 | number & _MASK)

        def branch(code, source, destination):
            seen.append(_BRANCH | codes[code] << 42 | (source >> 1 & _MASK) << 21 | destination >> 1 & _MASK)

        def line_once(code, number):
            line(code, number)
            return disable

        def branch_once(code, source, destination):
            branch(code, source, destination)
            return disable

        def once():
            """From now on each line (and 3.14 branch direction) reports once per
            call: disabled when it fires, re-enabled before each call."""
            self.once = True
            monitoring.register_callback(self.tool, events.LINE, line_once)
            if left is not None:
                monitoring.register_callback(self.tool, left, branch_once)
                monitoring.register_callback(self.tool, events.BRANCH_RIGHT, branch_once)

        self.switch_to_once = once
        monitoring.register_callback(self.tool, events.PY_START, start)
        monitoring.register_callback(self.tool, events.LINE, line)
        if left is not None:
            monitoring.register_callback(self.tool, left, branch)
            monitoring.register_callback(self.tool, events.BRANCH_RIGHT, branch)
        else:
            monitoring.register_callback(self.tool, events.BRANCH, branch)
        monitoring.set_events(self.tool, events.PY_START)
        # Starts disabled by an earlier collector under the same tool id would hide
        # their code objects from this one.
        monitoring.restart_events()

    # -- sys.settrace --

    def _call(self, frame, event, arg):
        code = frame.f_code
        index = self.codes.get(code)
        if index is None:
            index = self._register(code)
        if index < 0:
            return None
        base = index << 42
        hits = self.hits
        before = 0

        def local(frame, event, arg):
            nonlocal before
            if event == "line":
                number = frame.f_lineno & _MASK
                hits.add(base | before << 21 | number)
                before = number
            return local

        return local

    # -- one call --

    def begin(self):
        """Starts collecting (the executor calls the target next)."""
        self.hits.clear()
        if self.monitoring:
            self.seen.clear()
            if self.once:
                sys.monitoring.restart_events()
        else:
            self.previous = sys.gettrace()
            sys.settrace(self._call)

    def end(self):
        """Stops collecting; returns what the call reached (the set is reused)."""
        if not self.monitoring:
            sys.settrace(self.previous)
            self.previous = None
            return self.hits
        hits = self.hits
        hits.update(self.seen)
        # A call that ran its lines many times over (loops) is cheaper with each event
        # disabled once it fired, and all re-enabled before the next call; a call that
        # runs each line about once is cheaper without (re-enabling costs).
        if not self.once and len(self.seen) > 4 * len(hits) + 256:
            self.switch_to_once()
        return hits

    def close(self):
        """Stops measuring for good (frees the sys.monitoring tool id)."""
        if self.monitoring and self.tool is not None:
            monitoring = sys.monitoring
            monitoring.set_events(self.tool, 0)
            for code in self.table:
                monitoring.set_local_events(self.tool, code, 0)
            events = monitoring.events
            names = ("PY_START", "LINE", "BRANCH", "BRANCH_LEFT", "BRANCH_RIGHT")
            for event in {getattr(events, name) for name in names if hasattr(events, name)}:
                monitoring.register_callback(self.tool, event, None)
            monitoring.free_tool_id(self.tool)
            self.tool = None
        elif not self.monitoring and sys.gettrace() == self._call:
            sys.settrace(self.previous)

    def describe(self):
        """The backend, for the executor's description."""
        return "sys.monitoring" if self.monitoring else "sys.settrace"


def exception_report(error):
    """An exception as the executor reports it: its class (qualified by its module
    unless built in), its innermost frame outside thicket (``file:line in function``),
    its message (at most 2000 characters)."""
    cls = type(error)
    name = cls.__qualname__
    if cls.__module__ not in ("builtins", "__main__"):
        name = f"{cls.__module__}.{name}"
    frame = ""
    for entry in reversed(traceback.extract_tb(error.__traceback__)):
        if not os.path.abspath(entry.filename).startswith(_HERE):
            frame = f"{entry.filename}:{entry.lineno} in {entry.name}"
            break
    try:
        message = str(error)
    except Exception:  # noqa: BLE001 - a broken __str__ is the target's
        message = f"<{name} whose str() failed>"
    return name, frame, message[:2000]


def settle():
    """Runs a little Python code, so that a timeout raised in this thread but not
    delivered yet (the call returned from C code first) is delivered here, where the
    executor expects it."""
    for _ in (0, 1):
        pass


def format_traceback(error):
    """The traceback Python would print for ``error``."""
    return "".join(traceback.format_exception(type(error), error, error.__traceback__))
