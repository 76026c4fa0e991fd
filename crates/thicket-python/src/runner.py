# thicket's Python host: runs a Fandango spec's Python code in one namespace and
# evaluates Python expressions over derivation trees for thicket (crate thicket-python,
# whose lib.rs documents the protocol and the decisions behind it).
#
# Started as `python3 -u -c <this file>` with requests on fd 3 and replies on fd 4; the
# runner moves both pipes to high descriptors and leaves /dev/null on 3 and 4, so spec
# code that closes or reuses them cannot cut the protocol. Spec code's stdout and
# stderr are whatever thicket gave the process (never the protocol pipes).
#
# Every message is a 4-byte little-endian length and that many bytes. The first request
# is JSON, {"blocks": [[file, first_line, source], ...], "seed": n, "paths": [...]}: the
# runner seeds `random`, runs the blocks in order in one global namespace and answers
# JSON, {"ok": true, "python": version} or {"error": ..., "file", "line", "column",
# "text"}. Every later request is binary (see `evaluate`) and so is its reply.
import builtins
import fcntl
import gc
import json
import keyword
import linecache
import os
import random
import re
import signal
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


def read_exact(n):
    parts = []
    while n > 0:
        try:
            chunk = REQ.read(n)
        except InterruptedError:
            continue
        except OSError:
            chunk = b""
        if not chunk:
            # thicket closed the pipe (it ended or dropped this process): end quietly.
            os._exit(0)
        parts.append(chunk)
        n -= len(chunk)
    return parts[0] if len(parts) == 1 else b"".join(parts)


_LEN = struct.Struct("<I")


def read_message():
    (n,) = _LEN.unpack(read_exact(4))
    return read_exact(n)


def send(data):
    try:
        REP.write(_LEN.pack(len(data)) + data)
    except OSError:
        os._exit(0)


# ---- tree values: what Fandango's DerivationTree.value() returns -------------------
#
# A value is text (str), bytes, trailing bits (a bit string not yet a whole byte), or
# empty. Joining text with bytes gives bytes (the text encoded as UTF-8); bits pack into
# bytes, first bit most significant, when something that is not a bit follows (they
# must then make whole bytes). Bytes read as text are decoded as Latin-1, so that every
# byte string has a text form.

STRING, BYTES, BITS, EMPTY = "string", "bytes", "trailing_bits", "empty"
TO_BYTES_ENCODING = "utf-8"
TO_STRING_ENCODING = "latin-1"


def _bits_to_int(bits):
    n = 0
    for b in bits:
        n = (n << 1) | b
    return n


def _bytes_to_int(raw, encoding=TO_STRING_ENCODING):
    try:
        return int(raw.decode(encoding))
    except ValueError as e:
        raise FandangoConversionError(f"int conversion failed, value: {raw!r}, error: {e}") from e


class TreeValue:
    """The value of a derivation tree: text, bytes or bits (see above)."""

    __slots__ = ("_value", "_trailing_bits")

    def __init__(self, value=None, *, trailing_bits=(), allow_empty=True):
        if isinstance(value, int) and not isinstance(value, bool):
            if value not in (0, 1):
                raise ValueError(f"a bit is 0 or 1, not {value}")
            trailing_bits = (value,)
            value = None
        self._value = value
        self._trailing_bits = tuple(trailing_bits)

    @classmethod
    def empty(cls):
        return cls(None)

    @property
    def type_(self):
        if self._value is None:
            return BITS if self._trailing_bits else EMPTY
        if isinstance(self._value, str) and not self._trailing_bits:
            return STRING
        return BYTES

    def is_type(self, type_):
        return self.type_ == getattr(type_, "value", type_)

    @property
    def trailing_bits(self):
        return self._trailing_bits if self._value is None else None

    def _packed(self, encoding):
        """The value with its trailing bits packed into bytes."""
        bits = self._trailing_bits
        if not bits:
            return self._value
        if len(bits) % 8:
            raise FandangoConversionError(f"{len(bits)} trailing bits do not make whole bytes")
        packed = _bits_to_int(bits).to_bytes(len(bits) // 8, "big")
        if self._value is None:
            return packed
        if isinstance(self._value, str):
            return self._value.encode(encoding) + packed
        return self._value + packed

    def append(self, other, str_to_bytes_encoding=TO_BYTES_ENCODING):
        if self._value is None and not self._trailing_bits:
            return TreeValue(other._value, trailing_bits=other._trailing_bits)
        if other._value is None:
            return TreeValue(self._value, trailing_bits=self._trailing_bits + other._trailing_bits)
        mine = self._packed(str_to_bytes_encoding)
        theirs = other._value
        if isinstance(mine, str) and isinstance(theirs, str):
            joined = mine + theirs
        else:
            if isinstance(mine, str):
                mine = mine.encode(str_to_bytes_encoding)
            if isinstance(theirs, str):
                theirs = theirs.encode(str_to_bytes_encoding)
            joined = mine + theirs
        return TreeValue(joined, trailing_bits=other._trailing_bits)

    def to_string(self, bytes_to_str_encoding=TO_STRING_ENCODING):
        if self._value is None and not self._trailing_bits:
            return ""
        v = self._packed(bytes_to_str_encoding)
        return v if isinstance(v, str) else v.decode(bytes_to_str_encoding)

    def to_bytes(self, str_to_bytes_encoding=TO_BYTES_ENCODING):
        if self._value is None and not self._trailing_bits:
            return b""
        v = self._packed(str_to_bytes_encoding)
        return v.encode(str_to_bytes_encoding) if isinstance(v, str) else v

    def to_bits(self, str_to_bytes_encoding=TO_BYTES_ENCODING):
        v = self._value
        if isinstance(v, str):
            v = v.encode(str_to_bytes_encoding)
        head = "".join(f"{b:08b}" for b in v) if v else ""
        return head + "".join(str(b) for b in self._trailing_bits)

    def to_int(self, str_to_bytes_encoding=TO_BYTES_ENCODING, bytes_to_str_encoding=TO_STRING_ENCODING):
        if self._value is None:
            return _bits_to_int(self._trailing_bits)
        v = self._packed(str_to_bytes_encoding)
        if isinstance(v, str):
            return int(v)
        return _bytes_to_int(v, bytes_to_str_encoding)

    def count_bytes(self):
        return len(self.to_bytes())

    def can_compare_with(self, right):
        if isinstance(right, TreeValue):
            return self.type_ == right.type_
        t = self.type_
        return (
            (isinstance(right, int) and t == BITS)
            or (isinstance(right, str) and t == STRING)
            or (isinstance(right, bytes) and t == BYTES)
        )

    def parseable_from(self, other):
        t = self.type_
        if isinstance(other, int):
            if t == STRING:
                s = str(self)
                return s.isdigit() or (s.startswith("-") and s[1:].isdigit())
            return t == BITS
        if isinstance(other, str):
            return t == STRING
        if isinstance(other, bytes):
            return t in (BYTES, BITS)
        if isinstance(other, TreeValue):
            return self == other
        return False

    def __str__(self):
        return self.to_string()

    def __bytes__(self):
        return self.to_bytes()

    def __int__(self):
        return self.to_int()

    def __eq__(self, other):
        if isinstance(other, TreeValue):
            return self._value == other._value and self._trailing_bits == other._trailing_bits
        if isinstance(other, int):
            return self.to_int() == other
        if isinstance(other, str):
            return self.to_string() == other
        if isinstance(other, bytes):
            return self.to_bytes() == other
        raise TypeError(f"cannot compare a tree value with {type(other).__name__}")

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash((self._value, self._trailing_bits))

    def __repr__(self):
        if self._trailing_bits:
            return "".join(str(b) for b in self._trailing_bits)
        return repr(self._value)

    def _inner_value(self):
        """The plain Python value: str, bytes, int (bits only) or "" (empty)."""
        t = self.type_
        if t == STRING:
            return self._value
        if t == BYTES:
            return self.to_bytes()
        if t == BITS:
            return self.to_int()
        return ""


def _inner(v):
    if isinstance(v, DerivationTree):
        return v.value()._inner_value()
    if isinstance(v, TreeValue):
        return v._inner_value()
    return v


# Methods of str, bytes and int that trees and their values offer too, as Fandango does.
# For the first group, which of the three types the value becomes is the only type
# that has the method, else the type of the first argument (`t.startswith("a")` reads
# t as text, `t.startswith(b"a")` as bytes, `t < 5` as an int). For the second group it
# is the only type that has the method, else the value's own type.
BY_ARGUMENT = [
    "__add__", "__contains__", "__divmod__", "__floordiv__", "__ge__", "__gt__",
    "__le__", "__lshift__", "__lt__", "__mod__", "__radd__", "__rand__",
    "__rdivmod__", "__rfloordiv__", "__rlshift__", "__rmod__", "__rrshift__",
    "__rshift__", "__rsub__", "__rtruediv__", "__rxor__", "__sub__", "__truediv__",
    "__xor__", "count", "endswith", "find", "index", "partition", "removeprefix",
    "removesuffix", "rfind", "rindex", "rpartition", "startswith",
]
BY_VALUE = [
    "__and__", "__abs__", "__ceil__", "__float__", "__floor__", "__index__",
    "__invert__", "__mul__", "__neg__", "__or__", "__pos__", "__pow__", "__rmul__",
    "__round__", "__ror__", "__rpow__", "__trunc__", "as_integer_ratio", "bit_count",
    "bit_length", "capitalize", "casefold", "center", "conjugate", "expandtabs",
    "format", "format_map", "hex", "isalnum", "isalpha", "isascii", "isdecimal",
    "isdigit", "isidentifier", "islower", "isnumeric", "isprintable", "isspace",
    "istitle", "isupper", "lower", "lstrip", "ljust", "split", "strip", "rjust",
    "rsplit", "rstrip", "splitlines", "swapcase", "title", "upper", "zfill",
]


def _only_type(name):
    having = [t for t in (int, str, bytes) if hasattr(t, name)]
    return having[0] if len(having) == 1 else None


def _as(base, value):
    if base is str:
        return value.to_string()
    if base is bytes:
        return value.to_bytes()
    if base is float:
        return float(value.to_string())
    return value.to_int()


def _by_argument(name):
    only = _only_type(name)

    def method(self, *args, **kwargs):
        base = only
        if base is None:
            if args:
                first = _inner(args[0])
                args = (first,) + args[1:]
            elif len(kwargs) == 1:
                ((key, first),) = kwargs.items()
                first = _inner(first)
                kwargs = {key: first}
            else:
                raise TypeError(f"{name}() needs an argument to tell whether the tree is text, bytes or a number")
            base = type(first)
            if issubclass(base, bool) or issubclass(base, int):
                base = int
            elif issubclass(base, str):
                base = str
            elif issubclass(base, (bytes, bytearray)):
                base = bytes
            elif issubclass(base, float):
                base = float
            else:
                raise TypeError(f"{name}() with a {type(first).__name__} argument: convert the tree with str(), bytes() or int() first")
        return getattr(_as(base, self), name)(*args, **kwargs)

    method.__name__ = name
    return method


def _by_value(name):
    only = _only_type(name)

    def method(self, *args, **kwargs):
        base = _as(only, self) if only is not None else self._inner_value()
        return getattr(base, name)(*args, **kwargs)

    method.__name__ = name
    return method


for _name in BY_ARGUMENT:
    setattr(TreeValue, _name, _by_argument(_name))
for _name in BY_VALUE:
    setattr(TreeValue, _name, _by_value(_name))


# ---- symbols ------------------------------------------------------------------------


class Symbol:
    """A grammar symbol: a nonterminal `<name>`, a terminal (its value) or a slice."""

    __slots__ = ("_value",)
    is_terminal = False
    is_non_terminal = False
    is_slice = False
    is_regex = False

    def value(self):
        return self._value

    def __eq__(self, other):
        return type(self) is type(other) and self._value == other._value

    def __ne__(self, other):
        return not self.__eq__(other)

    def __str__(self):
        return self.format_as_spec()

    def __repr__(self):
        return f"{type(self).__name__}({self.format_as_spec()})"


class NonTerminal(Symbol):
    __slots__ = ()
    is_non_terminal = True

    def __init__(self, name):
        if not isinstance(name, str):
            raise TypeError(f"a nonterminal's name is a str, not {type(name).__name__}")
        self._value = name

    def name(self):
        return self._value

    def format_as_spec(self):
        return self._value

    def __hash__(self):
        return hash((self._value, "NonTerminal"))


class Terminal(Symbol):
    __slots__ = ()
    is_terminal = True

    def __init__(self, value):
        self._value = value if isinstance(value, TreeValue) else TreeValue(value)

    def format_as_spec(self):
        return repr(self._value)

    def count_bytes(self):
        return self._value.count_bytes()

    def __len__(self):
        return self.count_bytes()

    def __hash__(self):
        return hash((self._value, "Terminal"))


class Slice(Symbol):
    __slots__ = ()
    is_slice = True

    def __init__(self):
        self._value = ""

    def format_as_spec(self):
        return ""

    def __hash__(self):
        return hash("Slice")


# ---- derivation trees -----------------------------------------------------------------


class _Flag(int):
    """A truth value that can also be called: Fandango's trees have `is_terminal` as a
    property, its documentation writes `is_terminal()`; both work."""

    __slots__ = ()

    def __call__(self):
        return bool(self)

    def __repr__(self):
        return "True" if self else "False"

    __str__ = __repr__


_TRUE, _FALSE = _Flag(1), _Flag(0)


class _Children(list):
    """A list of children that can also be called (`t.children` and `t.children()`)."""

    __slots__ = ()

    def __call__(self):
        return self


def _tree_hash(symbol, child_hashes):
    return hash((symbol, child_hashes))


class DerivationTree:
    """A node of a derivation tree, as Fandango's DerivationTree behaves in constraints
    and generators: a symbol, children (the symbols of the chosen alternative in order:
    groups, repetitions and options flattened into their rule), a parent; terminals
    are leaves holding their value. Two trees are equal when their symbols and
    terminal values are; a tree equals a str, bytes or int when its value does."""

    __slots__ = ("_sym", "_kids", "_par")
    read_only = False
    sender = None
    recipient = None

    def __init__(self, symbol, children=None, *, parent=None, sources=None, **_ignored):
        if not isinstance(symbol, Symbol):
            raise TypeError(f"Expected Symbol, got {type(symbol).__name__}")
        self._sym = symbol
        self._kids = list(children or [])
        self._par = parent
        for child in self._kids:
            if not isinstance(child, _Node):
                child._par = self

    # -- structure --

    @property
    def symbol(self):
        return self._sym

    @property
    def _children(self):
        return self._kids

    @property
    def children(self):
        return _Children(self._children)

    @property
    def parent(self):
        return self._par

    @property
    def sources(self):
        return []

    @property
    def origin_repetitions(self):
        return []

    @property
    def nonterminal(self):
        if not self.symbol.is_non_terminal:
            raise TypeError(f"Symbol {self.symbol} is not a nonterminal")
        return self.symbol

    @property
    def terminal(self):
        if not self.symbol.is_terminal:
            raise TypeError(f"Symbol {self.symbol} is not a terminal")
        return self.symbol

    @property
    def is_terminal(self):
        return _TRUE if self.symbol.is_terminal else _FALSE

    @property
    def is_non_terminal(self):
        return _TRUE if self.symbol.is_non_terminal else _FALSE

    is_nonterminal = is_non_terminal

    def __call__(self):
        # `t.parent()` as Fandango's documentation writes it (`parent` is a property).
        return self

    def __len__(self):
        return len(self._children)

    def __iter__(self):
        return iter(self._children)

    def __getitem__(self, item):
        if isinstance(item, list) and len(item) == 1:
            item = item[0]
        got = self._children[item]
        return SliceTree(got) if isinstance(got, list) else got

    def get_root(self, stop_at_argument_begin=False):
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    def get_path(self):
        path = []
        node = self
        while node is not None:
            path.append(node)
            node = node.parent
        path.reverse()
        return path

    def flatten(self):
        out = []
        stack = [self]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(reversed(node._children))
        return out

    def descendants(self):
        return self.flatten()[1:]

    def children_values(self):
        return [c.value() for c in self._children]

    def descendant_values(self):
        return [d.value() for d in self.descendants()]

    def size(self):
        return len(self.flatten())

    def count_terminals(self):
        return sum(1 for d in self.flatten() if d.symbol.is_terminal)

    def get_index(self, target):
        for i, node in enumerate(self.flatten()):
            if node == target:
                return i
        return -1

    def _matches(self, symbol):
        return self.symbol.is_non_terminal and self.symbol == symbol

    def find_subtrees(self, symbol):
        if isinstance(symbol, str):
            symbol = NonTerminal(symbol)
        queue = [self]
        i = 0
        while i < len(queue):
            node = queue[i]
            i += 1
            if node._matches(symbol):
                yield node
            queue.extend(node._children)

    def find_all_trees(self, symbol):
        return list(self.find_subtrees(symbol))

    def find_direct_trees(self, symbol):
        if isinstance(symbol, str):
            symbol = NonTerminal(symbol)
        return [c for c in self._children if c.symbol == symbol]

    def find_all_nodes(self, symbol, exclude_read_only=True):
        if isinstance(symbol, str):
            symbol = NonTerminal(symbol)
        return [n for n in self.flatten() if n._matches(symbol)]

    def get_non_terminal_symbols(self, exclude_read_only=True):
        return {n.symbol for n in self.flatten() if n.symbol.is_non_terminal}

    # -- values --

    def value(self):
        if self.symbol.is_terminal:
            return self.symbol.value()
        v = TreeValue.empty()
        for child in self._children:
            v = v.append(child.value())
        return v

    def __str__(self):
        return self.value().to_string()

    def __bytes__(self):
        return self.value().to_bytes()

    def __int__(self):
        return self.value().to_int()

    def to_string(self, *, encoding=TO_STRING_ENCODING):
        return self.value().to_string(encoding)

    def to_bytes(self, encoding=TO_BYTES_ENCODING):
        return self.value().to_bytes(encoding)

    def to_bits(self, *, encoding=TO_BYTES_ENCODING):
        return self.value().to_bits(encoding)

    def to_int(self, encoding=TO_BYTES_ENCODING):
        return self.value().to_int(encoding)

    def to_value(self):
        v = self.value()
        t = v.type_
        if t == EMPTY:
            return ""
        if t == BITS:
            return "0b" + v.to_bits()
        if t == STRING:
            return str(v)
        return str(bytes(v))

    def _contains_type(self, type_):
        return any(d.symbol.is_terminal and d.symbol.value().type_ == type_ for d in self.flatten())

    def contains_bits(self):
        return self._contains_type(BITS)

    def contains_bytes(self):
        return self._contains_type(BYTES)

    def should_be_serialized_to_bytes(self):
        return self.contains_bits() or self.contains_bytes()

    def parseable_from(self, other):
        if isinstance(other, DerivationTree):
            return self.value().parseable_from(other.value())
        return self.value().parseable_from(other)

    # -- comparisons --

    def __hash__(self):
        return _tree_hash(self.symbol, tuple(hash(c) for c in self._children))

    def __eq__(self, other):
        if isinstance(other, DerivationTree):
            return hash(self) == hash(other)
        return self.value() == other

    def __ne__(self, other):
        return not self.__eq__(other)

    # -- renderings --

    def to_tree(self, indent=0, start_indent=0):
        s = "  " * start_indent + "Tree(" + self.symbol.format_as_spec()
        kids = self._children
        if len(kids) == 1:
            s += ", " + kids[0].to_tree(indent, start_indent=0)
        elif kids:
            for child in kids:
                s += ",\n" + child.to_tree(indent + 1, start_indent=indent + 1)
            s += "\n" + "  " * indent
        return s + ")"

    def to_repr(self, indent=0, start_indent=0):
        s = "  " * start_indent + "DerivationTree(" + self.symbol.format_as_spec()
        kids = self._children
        if len(kids) == 1:
            s += ", [" + kids[0].to_repr(indent, start_indent=0) + "])"
        elif kids:
            s += ",\n" + "  " * indent + "  [\n"
            for child in kids:
                s += child.to_repr(indent + 2, start_indent=indent + 2) + ",\n"
            s += "  " * indent + "  ]\n" + "  " * indent + ")"
        else:
            s += ")"
        return s

    def __repr__(self):
        return self.to_repr()

    def to_grammar(self, include_position=True, include_value=True):
        lines = []
        stack = [(self, 0)]
        while stack:
            node, depth = stack.pop()
            if not node.symbol.is_non_terminal:
                continue
            parts = [c.symbol.format_as_spec() for c in node._children]
            line = "  " * depth + node.symbol.format_as_spec() + " ::= " + " ".join(parts)
            if include_value and len(node._children) >= 2:
                line += "  # " + node.to_value()
            lines.append(line)
            stack.extend((c, depth + 1) for c in reversed(node._children))
        return "\n".join(lines)


for _name in BY_ARGUMENT + BY_VALUE:
    setattr(
        DerivationTree,
        _name,
        (lambda name: lambda self, *a, **k: getattr(self.value(), name)(*a, **k))(_name),
    )


class SliceTree(DerivationTree):
    """Several children of a tree taken together (`t[1:3]`)."""

    __slots__ = ()

    def __init__(self, children, read_only=False):
        self._sym = Slice()
        self._kids = list(children)
        self._par = None


HAS_TERMINAL, HAS_BYTES, HAS_BITS = 1, 2, 4
TEXT_LEAF, BYTES_LEAF, BIT_LEAF = -1, -2, -3


# Whether the call being evaluated asked for the parent of a tree's root, or for its
# root: what it read may lie above the tree thicket sent (see `evaluate`).
_LOOKED_ABOVE = [False]

# While a joint judgement's value side runs (`_watched`): the tree data, first node and
# subtree end of the tree the value will be written into; None otherwise, and from
# the first read inside that tree on.
_WATCH = [None]
# Whether the watched value side read inside its target.
_TOUCHED = [False]
# Whether the last joint judgement's value side was watched, read nothing inside its
# target and gave a str (see MODE_JUDGE).
_TARGET_FREE = [False]


def _note_read(w, d, i, stop):
    """Notes that nodes `i` to `stop` of tree `d` were read (their text, or the
    children of `i` for stop = i + 1), while `w` is watched."""
    if w[0] is d and i < w[2] and stop > w[1]:
        _TOUCHED[0] = True
        _WATCH[0] = None


def _watched(target, thunk):
    """`thunk()`, the value side of a joint judgement that writes into `target`, noting
    whether it read anything inside `target`: nodes inside a tree are reached only
    through its children or its text, and those reads are noted (`_note_read`). Only a
    rule node of text is watched: a leaf's symbol is its value, and a str compared
    with bytes or bits is not their text."""
    if type(target) is not _RuleNode or target._d.mask[target._i] & (HAS_BYTES | HAS_BITS):
        return thunk()
    d, i = target._d, target._i
    _TOUCHED[0] = False
    _WATCH[0] = (d, i, d.end[i])
    try:
        value = thunk()
    finally:
        _WATCH[0] = None
    _TARGET_FREE[0] = not _TOUCHED[0] and type(value) is str
    return value


class _Node(DerivationTree):
    """A node of a tree thicket sent: read from the tree's arrays on demand (most
    expressions look at a handful of nodes of a tree). Made only as one of its two
    subclasses, `_RuleNode` and `_LeafNode`, which say what kind of node it is."""

    __slots__ = ("_d", "_i")

    def __init__(self, data, index):
        self._d = data
        self._i = index

    @property
    def symbol(self):
        d, i = self._d, self._i
        s = d.sym[i]
        return d.nonterminals[s] if s >= 0 else Terminal(d.leaf_value(i))

    @property
    def _children(self):
        # `kids` and `node` inlined: specs walk whole trees through this (a
        # checksum over a header), a call per node.
        d = self._d
        nodes, end = d.nodes, d.end
        out = []
        i = self._i
        w = _WATCH[0]
        # `_note_read(w, d, i, i + 1)` inlined, for the same reason.
        if w is not None and w[0] is d and w[1] <= i < w[2]:
            _TOUCHED[0] = True
            _WATCH[0] = None
        j, stop = i + 1, end[i]
        while j < stop:
            n = nodes[j]
            if n is None:
                n = nodes[j] = (_LeafNode if d.sym[j] < 0 else _RuleNode)(d, j)
            out.append(n)
            j = end[j]
        return out

    @property
    def parent(self):
        p = self._d.parent[self._i]
        if p < 0:
            # Above the tree thicket sent, which may be a part of a larger one.
            _LOOKED_ABOVE[0] = True
            return None
        return self._d.node(p)

    def _matches(self, symbol):
        s = self._d.sym[self._i]
        return s >= 0 and self._d.nonterminals[s] == symbol

    def __len__(self):
        w = _WATCH[0]
        if w is not None:
            _note_read(w, self._d, self._i, self._i + 1)
        n = 0
        for _ in self._d.kids(self._i):
            n += 1
        return n

    def get_root(self, stop_at_argument_begin=False):
        _LOOKED_ABOVE[0] = True
        return self._d.node(0)

    def _read(self):
        w = _WATCH[0]
        if w is not None:
            _note_read(w, self._d, self._i, self._d.end[self._i])

    def flatten(self):
        self._read()
        d = self._d
        return [d.node(j) for j in range(self._i, d.end[self._i])]

    def value(self):
        self._read()
        return self._d.value(self._i)

    def __str__(self):
        d, i = self._d, self._i
        w = _WATCH[0]
        # `_note_read(w, d, i, d.end[i])` inlined: a walk over a tree reads every leaf.
        if w is not None and w[0] is d and i < w[2] and d.end[i] > w[1]:
            _TOUCHED[0] = True
            _WATCH[0] = None
        if d.sym[i] == TEXT_LEAF:
            return d.text[d.start[i] : d.stop[i]].decode()
        return d.string(i)

    def __bytes__(self):
        self._read()
        return self._d.bytes(self._i)

    def __int__(self):
        self._read()
        return self._d.integer(self._i)

    def __hash__(self):
        self._read()
        return self._d.hash(self._i)

    def __eq__(self, other):
        self._read()
        if isinstance(other, DerivationTree):
            return hash(self) == hash(other)
        # The fast paths of the value's own comparison (see TreeValue.__eq__).
        if isinstance(other, str):
            return self._d.string(self._i) == other
        if isinstance(other, bytes):
            return self._d.bytes(self._i) == other
        if isinstance(other, int):
            return self._d.integer(self._i) == other
        return self.value() == other

    def __ne__(self, other):
        return not self.__eq__(other)

    def _contains_type(self, type_):
        self._read()
        m = self._d.mask[self._i]
        if type_ == BITS:
            return bool(m & HAS_BITS)
        if type_ == BYTES:
            return bool(m & HAS_BYTES)
        return DerivationTree._contains_type(self, type_)


class _RuleNode(_Node):
    """A rule node of a tree thicket sent. What kind of node it is is a class
    attribute, not a property: a spec walking a whole tree asks it of every node."""

    __slots__ = ()
    is_terminal = _FALSE
    is_non_terminal = is_nonterminal = _TRUE


class _LeafNode(_Node):
    """A terminal node of a tree thicket sent (see `_RuleNode`)."""

    __slots__ = ()
    is_terminal = _TRUE
    is_non_terminal = is_nonterminal = _FALSE


class _TreeData:
    """One tree thicket sent, in preorder arrays (see `read_tree`)."""

    __slots__ = ("text", "nonterminals", "sym", "end", "start", "stop", "parent", "mask", "nodes", "hashes")

    def node(self, i):
        n = self.nodes[i]
        if n is None:
            n = self.nodes[i] = (_LeafNode if self.sym[i] < 0 else _RuleNode)(self, i)
        return n

    def kids(self, i):
        end = self.end
        j = i + 1
        stop = end[i]
        while j < stop:
            yield j
            j = end[j]

    def leaf_value(self, i):
        s = self.sym[i]
        raw = self.text[self.start[i] : self.stop[i]]
        if s == TEXT_LEAF:
            return TreeValue(raw.decode())
        if s == BYTES_LEAF:
            return TreeValue(raw)
        return TreeValue(1 if raw in (b"1", b"\x01") else 0)

    def value(self, i):
        m = self.mask[i]
        if not m & HAS_BITS:
            raw = self.text[self.start[i] : self.stop[i]]
            if m & HAS_BYTES:
                return TreeValue(raw)
            if m & HAS_TERMINAL:
                return TreeValue(raw.decode())
            return TreeValue.empty()
        v = TreeValue.empty()
        sym = self.sym
        for j in range(i, self.end[i]):
            if sym[j] < 0:
                v = v.append(self.leaf_value(j))
        return v

    def string(self, i):
        m = self.mask[i]
        if m & HAS_BITS:
            return self.value(i).to_string()
        raw = self.text[self.start[i] : self.stop[i]]
        return raw.decode(TO_STRING_ENCODING) if m & HAS_BYTES else raw.decode()

    def bytes(self, i):
        if self.mask[i] & HAS_BITS:
            return self.value(i).to_bytes()
        return self.text[self.start[i] : self.stop[i]]

    def integer(self, i):
        m = self.mask[i]
        if m & HAS_BITS:
            return self.value(i).to_int()
        if not m & HAS_TERMINAL:
            return 0
        raw = self.text[self.start[i] : self.stop[i]]
        return _bytes_to_int(raw) if m & HAS_BYTES else int(raw.decode())

    def hash(self, i):
        h = self.hashes
        if h is None:
            h = self.hashes = [None] * len(self.sym)
        v = h[i]
        if v is not None:
            return v
        # Children come after their parent in preorder: hash the subtree backwards.
        sym, nts = self.sym, self.nonterminals
        for j in range(self.end[i] - 1, i - 1, -1):
            if h[j] is not None:
                continue
            s = sym[j]
            if s < 0:
                h[j] = _tree_hash(Terminal(self.leaf_value(j)), ())
            else:
                h[j] = _tree_hash(nts[s], tuple(h[k] for k in self.kids(j)))
        return h[i]


def read_tree(msg, pos):
    """A tree in the request at `pos`: node count, text length, name count, the text,
    the names (u16 length + UTF-8 each), then per node in preorder: symbol (i32: a
    name's index, or TEXT_LEAF, BYTES_LEAF, BIT_LEAF), end of its subtree (u32), start
    and end of its text (u32 each), parent (i32, -1 for the root), and a mask of what
    its leaves hold (u8)."""
    n, tlen, nnames = struct.unpack_from("<IIH", msg, pos)
    pos += 10
    d = _TreeData()
    d.text = msg[pos : pos + tlen]
    pos += tlen
    names = []
    for _ in range(nnames):
        (length,) = struct.unpack_from("<H", msg, pos)
        pos += 2
        names.append(msg[pos : pos + length].decode())
        pos += length
    d.nonterminals = [NonTerminal(name) for name in names]
    words = f"<{n}i"
    size = 4 * n
    d.sym = struct.unpack_from(words, msg, pos)
    pos += size
    d.end = struct.unpack_from(f"<{n}I", msg, pos)
    pos += size
    d.start = struct.unpack_from(f"<{n}I", msg, pos)
    pos += size
    d.stop = struct.unpack_from(f"<{n}I", msg, pos)
    pos += size
    d.parent = struct.unpack_from(words, msg, pos)
    pos += size
    d.mask = msg[pos : pos + n]
    pos += n
    d.nodes = [None] * n
    d.hashes = None
    return d, pos


# ---- Fandango's helpers: names specs use without defining them -------------------------


def is_before(tree, before_tree, after_tree):
    """Whether `before_tree` comes before `after_tree` in `tree` (preorder; nodes
    found by equality, as Fandango does)."""
    before = tree.get_index(before_tree)
    after = tree.get_index(after_tree)
    return before >= 0 and after >= 0 and before < after


def is_after(tree, after_tree, before_tree):
    return is_before(tree, before_tree, after_tree)


def get_index_within(tree, scope, index_counter_symbols):
    counted = [NonTerminal(s) for s in index_counter_symbols]
    index = 0
    for node in scope.flatten():
        if node == tree:
            return index
        if node.symbol in counted:
            index += 1
    return -1


class FandangoError(ValueError):
    pass


class FandangoValueError(FandangoError):
    pass


class FandangoConversionError(FandangoValueError):
    pass


# Names of Fandango's protocol support (parties, network I/O), which thicket does not
# provide: a NameError on one of them says so.
PROTOCOL_NAMES = {
    "FandangoParty", "NetworkParty", "ConnectionMode", "Protocol", "IpType", "StdOut",
    "StdIn", "Out", "In", "TimerControl", "TimerEvent", "FandangoIO", "ProcessManager",
    "set_program_command", "ProtocolImplementation", "UdpTcpProtocolImplementation",
    "EnvContext", "split_party_spec",
}


class _Lazy:
    """A name of the spec's namespace whose object is made when spec code first uses
    it (an attribute, a call, a base class, an `isinstance`), which then binds the name
    to the object itself. Most specs use none of Fandango's I/O names, and importing
    their modules (logging, socket, subprocess, uuid, ...) was a third of the CPU time
    of starting a Python process."""

    __slots__ = ("_namespace", "_name", "_make")

    def __init__(self, namespace, name, make):
        object.__setattr__(self, "_namespace", namespace)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_make", make)

    def _get(self):
        value = self._make()
        if self._namespace.get(self._name) is self:
            self._namespace[self._name] = value
        return value

    def __getattr__(self, attr):
        return getattr(self._get(), attr)

    def __setattr__(self, attr, value):
        setattr(self._get(), attr, value)

    def __call__(self, *args, **kwargs):
        return self._get()(*args, **kwargs)

    def __instancecheck__(self, obj):
        return isinstance(obj, self._get())

    def __subclasscheck__(self, cls):
        return issubclass(cls, self._get())

    def __mro_entries__(self, bases):
        return (self._get(),)

    def __getitem__(self, item):
        return self._get()[item]

    def __eq__(self, other):
        return self._get() == other

    def __hash__(self):
        return hash(self._get())

    def __repr__(self):
        return repr(self._get())


def _module(name):
    return lambda: __import__(name)


def spec_namespace(first_file):
    """The global namespace of spec code: what Fandango puts there (its predicates and
    the names its I/O module exports: modules such as `re`, `os`, `sys`, `time`). The
    modules not imported already are imported on first use (`_Lazy`)."""
    import abc
    import enum
    import io
    import time
    from contextvars import ContextVar

    namespace = {
        "__name__": "__main__",
        "__file__": first_file,
        "__package__": None,
        "__spec__": None,
        "__builtins__": builtins,
        "DerivationTree": DerivationTree,
        "NonTerminal": NonTerminal,
        "__thicket_watched": _watched,
        "is_before": is_before,
        "is_after": is_after,
        "get_index_within": get_index_within,
        "FandangoError": FandangoError,
        "FandangoValueError": FandangoValueError,
        "enum": enum,
        "io": io,
        "os": os,
        "re": re,
        "sys": sys,
        "time": time,
        "ContextVar": ContextVar,
        "ABC": abc.ABC,
        "abstractmethod": abc.abstractmethod,
    }
    lazy = {
        "LOGGER": lambda: __import__("logging").getLogger("fandango"),
        "logging": _module("logging"),
        "select": _module("select"),
        "socket": _module("socket"),
        "subprocess": _module("subprocess"),
        "threading": _module("threading"),
        "IO": lambda: __import__("typing").IO,
        "Hashable": lambda: __import__("typing").Hashable,
        "Optional": lambda: __import__("typing").Optional,
        "EnvKey": lambda: __import__("typing").Hashable,
        "UUID": lambda: __import__("uuid").UUID,
    }
    for name, make in lazy.items():
        namespace[name] = _Lazy(namespace, name, make)
    return namespace


# ---- errors -----------------------------------------------------------------------------

SPEC_FILES = set()


def describe(exc):
    """(what, where) of an exception: `Type: message`, and the innermost frame in spec
    code as `file:line in function: source line` ("" if none)."""
    what = type(exc).__name__
    text = str(exc)
    if text:
        what += ": " + text
    if isinstance(exc, NameError) and getattr(exc, "name", None) in PROTOCOL_NAMES:
        what += " (Fandango's protocol parties and network I/O are not supported by thicket)"
    where = ""
    try:
        frames = traceback.extract_tb(exc.__traceback__)
    except Exception:  # noqa: BLE001 - the location is a courtesy
        frames = []
    for frame in reversed(frames):
        if frame.filename in SPEC_FILES:
            where = f"{frame.filename}:{frame.lineno} in {frame.name}"
            if frame.line:
                where += ": " + frame.line.strip()
            break
    return what, where


def register_source(blocks):
    """Makes the spec files' code blocks known to linecache (for tracebacks), each at
    its own lines."""
    files = {}
    for file, first, source in blocks:
        lines = files.setdefault(file, [])
        block = source.splitlines(True)
        need = first - 1 + len(block)
        if len(lines) < need:
            lines.extend(["\n"] * (need - len(lines)))
        lines[first - 1 : first - 1 + len(block)] = block
    for file, lines in files.items():
        SPEC_FILES.add(file)
        linecache.cache[file] = (sum(map(len, lines)), None, lines, file)


def run_blocks(blocks, namespace):
    """Runs the code blocks in order; None, or an error report for thicket."""
    for file, first, source in blocks:
        try:
            # Leading newlines put every line at its line number in the .fan file.
            code = compile("\n" * (first - 1) + source, file, "exec")
        except SyntaxError as e:
            return {
                "error": f"{type(e).__name__}: {e.msg}",
                "file": e.filename or file,
                "line": e.lineno or first,
                "column": e.offset or 0,
                "text": (e.text or "").strip(),
            }
        try:
            exec(code, namespace)
        except BaseException as e:  # noqa: BLE001 - reported to thicket
            what, where = describe(e)
            report = {"error": what, "file": file, "line": first, "column": 0, "text": ""}
            for frame in reversed(traceback.extract_tb(e.__traceback__)):
                if frame.filename in SPEC_FILES:
                    report.update(file=frame.filename, line=frame.lineno, text=(frame.line or "").strip())
                    break
            return report
    return None


# ---- evaluation ---------------------------------------------------------------------------

MODE_BOOL, MODE_VALUE, MODE_GENERATE, MODE_JUDGE = 0, 1, 2, 3
R_FALSE, R_TRUE, R_NONE, R_INT, R_FLOAT, R_STR, R_BYTES, R_TREE = range(8)
R_RAISED, R_NOT_BOOL, R_BAD_VALUE, R_BAD_EXPR, R_TIMEOUT = 16, 17, 18, 19, 20
# MODE_JUDGE: the expression gives a pair (verdict, value); a false verdict is
# R_FALSE_WITH followed by the value's encoding (anything else as in MODE_BOOL), or
# R_FALSE_WITH_FREE where the value side was watched and read nothing inside the tree
# it is written into (`_watched`).
R_FALSE_WITH, R_FALSE_WITH_FREE = 21, 22

# The time limit of one call, in seconds (0: none). A call that exceeds it is
# interrupted by SIGALRM where it is (so thicket can say where it was stuck); thicket
# kills the process anyway after a little more time, for code that never returns to
# the interpreter (a C extension looping).
CALL_TIMEOUT = 0.0
_ARMED = [False]


class _TimedOut(BaseException):
    """Raised into a call that ran out of time (a BaseException, so that spec code's
    `except Exception` does not swallow it)."""


def _on_alarm(signum, frame):
    if _ARMED[0]:
        _ARMED[0] = False
        raise _TimedOut()


def call(fn, args):
    """(0, value), (1, exception) or (2, the time-out exception)."""
    try:
        try:
            if CALL_TIMEOUT > 0:
                _ARMED[0] = True
                signal.setitimer(signal.ITIMER_REAL, CALL_TIMEOUT)
            return 0, fn(*args)
        finally:
            if CALL_TIMEOUT > 0:
                _ARMED[0] = False
                signal.setitimer(signal.ITIMER_REAL, 0)
    except _TimedOut as e:
        return 2, e
    except BaseException as e:  # noqa: BLE001 - reported to thicket
        return 1, e

EXPRS = {}
TREES = {}
_U32 = struct.Struct("<I")


def _short_repr(value):
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001
        text = "?"
    return text if len(text) <= 80 else text[:77] + "..."


def define(source, params):
    """Compiles an expression into a function of its parameters (a lambda, so that
    comprehensions inside it see the parameters), or an error report."""
    for p in params:
        if not p.isidentifier() or keyword.iskeyword(p):
            return (f"parameter name {p!r} is not a Python identifier",)
    text = "lambda " + ", ".join(params) + ": (\n" + source + "\n)"
    try:
        return eval(compile(text, "<expression>", "eval"), NAMESPACE)
    except SyntaxError as e:
        line = (e.lineno or 2) - 1
        return (f"SyntaxError: {e.msg} (line {line}, column {e.offset or 0} of the expression)",)
    except BaseException as e:  # noqa: BLE001
        return (describe(e)[0],)


def _error(out, kind, text):
    data = text.encode("utf-8", "replace")
    out.append(kind)
    out += _U32.pack(len(data))
    out += data


def _is_match(value):
    return isinstance(value, re.Match)


def encode_bool(out, value):
    if value is True:
        out.append(R_TRUE)
    elif value is False or value is None:
        out.append(R_FALSE)
    elif type(value) is _Flag:
        out.append(R_TRUE if value else R_FALSE)
    elif isinstance(value, re.Match):
        out.append(R_TRUE)
    elif type(value).__name__ == "bool_" and type(value).__module__ == "numpy":
        out.append(R_TRUE if bool(value) else R_FALSE)
    else:
        # A tree is named as specs know it, not by the runner's own node classes.
        kind = "DerivationTree" if isinstance(value, DerivationTree) else type(value).__name__
        _error(out, R_NOT_BOOL, f"{kind} {_short_repr(value)}")


def _encode_blob(out, kind, data):
    out.append(kind)
    out += _U32.pack(len(data))
    out += data


def encode_value(out, value):
    if value is None:
        out.append(R_NONE)
    elif value is True or value is False or type(value) is _Flag:
        out.append(R_TRUE if value else R_FALSE)
    elif isinstance(value, int):
        try:
            data = int(value).to_bytes(16, "little", signed=True)
        except OverflowError:
            _error(out, R_BAD_VALUE, f"int {_short_repr(value)}, which does not fit in 128 bits")
            return
        out.append(R_INT)
        out += data
    elif isinstance(value, float):
        out.append(R_FLOAT)
        out += struct.pack("<d", value)
    elif isinstance(value, str):
        _encode_blob(out, R_STR, value.encode("utf-8", "surrogateescape"))
    elif isinstance(value, (bytes, bytearray, memoryview)):
        _encode_blob(out, R_BYTES, bytes(value))
    elif isinstance(value, DerivationTree):
        _encode_blob(out, R_TREE, bytes(value))
    elif isinstance(value, TreeValue):
        t = value.type_
        if t == BITS:
            encode_value(out, value.to_int())
        elif t == BYTES:
            _encode_blob(out, R_BYTES, value.to_bytes())
        else:
            _encode_blob(out, R_STR, value.to_string().encode("utf-8", "surrogateescape"))
    elif type(value).__module__ == "numpy" and hasattr(value, "item"):
        encode_value(out, value.item())
    else:
        _error(out, R_BAD_VALUE, f"{type(value).__name__} {_short_repr(value)}")


def seed_everything(seed):
    random.seed(seed)
    faker = sys.modules.get("faker")
    if faker is not None:
        try:
            faker.Faker.seed(seed)
        except Exception:  # noqa: BLE001 - an unusual faker version: its own randomness
            pass


def evaluate(msg):
    """One request: op (1), mode, flags (1: the expression's definition follows),
    number of trees, expression id (u32), seed (u64); [definition: source (u32 length
    + UTF-8), parameter count (u16), each u16 length + UTF-8]; per tree: slot (u32),
    whether it follows (u8) [and the tree, see `read_tree`]; binding count (u32), per
    binding its argument count (u16) and arguments: 0 tree k (u8) node (u32); 1 tree k
    (u8), count (u32), nodes (u32 each); 2 an int (i64). The reply: one result per
    binding (see the R_ codes), then a byte per binding: 1 if its call asked for the
    parent of a tree's root or for the root (`_LOOKED_ABOVE`), else 0. thicket may send
    only the part of a tree that holds the arguments; a call that never looked above it
    read nothing else, so its result holds for any tree with that part."""
    mode, flags, ntrees = msg[1], msg[2], msg[3]
    expr_id, seed = struct.unpack_from("<IQ", msg, 4)
    pos = 16
    if flags & 1:
        (length,) = _U32.unpack_from(msg, pos)
        pos += 4
        source = msg[pos : pos + length].decode()
        pos += length
        (count,) = struct.unpack_from("<H", msg, pos)
        pos += 2
        params = []
        for _ in range(count):
            (length,) = struct.unpack_from("<H", msg, pos)
            pos += 2
            params.append(msg[pos : pos + length].decode())
            pos += length
        EXPRS[expr_id] = define(source, params)
    trees = []
    for _ in range(ntrees):
        (slot,) = _U32.unpack_from(msg, pos)
        included = msg[pos + 4]
        pos += 5
        if included:
            data, pos = read_tree(msg, pos)
            old = TREES.get(slot)
            if old is not None:
                # Nodes and their tree refer to each other: break the cycle so that
                # the tree is freed now rather than by the cyclic collector.
                old.nodes = [None] * len(old.nodes)
            TREES[slot] = data
        trees.append(TREES.get(slot))
    (nbindings,) = _U32.unpack_from(msg, pos)
    pos += 4
    fn = EXPRS.get(expr_id)
    out = bytearray()
    above = bytearray(nbindings)
    for b in range(nbindings):
        (nargs,) = struct.unpack_from("<H", msg, pos)
        pos += 2
        args = []
        bad = None
        for _ in range(nargs):
            tag = msg[pos]
            if tag == 0:
                k = msg[pos + 1]
                (node,) = _U32.unpack_from(msg, pos + 2)
                pos += 6
                data = trees[k]
                if data is None or node >= len(data.sym):
                    bad = "a tree argument refers to a tree the process does not have"
                else:
                    args.append(data.node(node))
            elif tag == 1:
                k = msg[pos + 1]
                (count,) = _U32.unpack_from(msg, pos + 2)
                pos += 6
                nodes = struct.unpack_from(f"<{count}I", msg, pos)
                pos += 4 * count
                data = trees[k]
                if data is None or any(n >= len(data.sym) for n in nodes):
                    bad = "a tree argument refers to a tree the process does not have"
                else:
                    args.append([data.node(n) for n in nodes])
            else:
                (value,) = struct.unpack_from("<q", msg, pos + 1)
                pos += 9
                args.append(value)
        if bad is not None:
            _error(out, R_BAD_EXPR, bad)
            continue
        if fn is None:
            _error(out, R_BAD_EXPR, "the expression is unknown to the process")
            continue
        if type(fn) is tuple:
            _error(out, R_BAD_EXPR, fn[0])
            continue
        if mode == MODE_GENERATE:
            seed_everything(seed)
        _LOOKED_ABOVE[0] = False
        _TARGET_FREE[0] = False
        outcome, value = call(fn, args)
        if _LOOKED_ABOVE[0]:
            above[b] = 1
        if outcome != 0:
            what, where = describe(value)
            if outcome == 2:
                _error(out, R_TIMEOUT, where)
            else:
                _error(out, R_RAISED, what + ("\0" + where if where else ""))
            continue
        if mode == MODE_BOOL:
            encode_bool(out, value)
        elif mode == MODE_JUDGE:
            if type(value) is not tuple or len(value) != 2:
                _error(out, R_BAD_EXPR, "a joint judgement gave no (verdict, value) pair")
                continue
            verdict, value = value
            at = len(out)
            encode_bool(out, verdict)
            if out[at] == R_FALSE and len(out) == at + 1:
                out[at] = R_FALSE_WITH_FREE if _TARGET_FREE[0] else R_FALSE_WITH
                try:
                    encode_value(out, value)
                except BaseException as e:  # noqa: BLE001 - a value that cannot be read
                    del out[at + 1 :]
                    _error(out, R_RAISED, describe(e)[0])
        else:
            try:
                encode_value(out, value)
            except BaseException as e:  # noqa: BLE001 - a value that cannot be read
                _error(out, R_RAISED, describe(e)[0])
    out += above
    return bytes(out)


def evaluate_batch(msg):
    """Several requests at once: op (2), their count (u32), then each as a u32 length
    and a request of op 1 (see `evaluate`); the reply holds each one's reply, each
    after its u32 length. One round trip for calls that do not depend on each other
    (the generators of one tree)."""
    (count,) = _U32.unpack_from(msg, 1)
    pos = 5
    out = bytearray()
    for _ in range(count):
        (length,) = _U32.unpack_from(msg, pos)
        pos += 4
        reply = evaluate(msg[pos : pos + length])
        pos += length
        out += _U32.pack(len(reply))
        out += reply
    return bytes(out)


NAMESPACE = {}


def main():
    global NAMESPACE, CALL_TIMEOUT
    init = json.loads(read_message())
    CALL_TIMEOUT = float(init.get("timeout", 0))
    if CALL_TIMEOUT > 0:
        signal.signal(signal.SIGALRM, _on_alarm)
    blocks = [(f, int(line), src) for f, line, src in init["blocks"]]
    for path in init.get("paths", []):
        if path not in sys.path:
            sys.path.append(path)
    register_source(blocks)
    NAMESPACE = spec_namespace(blocks[0][0] if blocks else "<spec>")
    seed_everything(int(init.get("seed", 0)))
    report = run_blocks(blocks, NAMESPACE)
    if report is not None:
        send(json.dumps(report).encode())
        return
    # A tree walk makes a node object per node, so the cyclic collector ran every 700
    # of them, over everything the spec's code and its imports made too: a tenth of
    # tar's time. What is there now stays (frozen), and a collection waits for more
    # new objects. The runner breaks its own cycles (a tree replaced in its slot).
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    send(json.dumps({"ok": True, "python": sys.version.split()[0], "executable": sys.executable or ""}).encode())
    while True:
        msg = read_message()
        if msg[0] == 1:
            reply = evaluate(msg)
        elif msg[0] == 2:
            reply = evaluate_batch(msg)
        else:
            reply = bytes([R_BAD_EXPR]) + b"\0\0\0\0"
        send(reply)


main()
