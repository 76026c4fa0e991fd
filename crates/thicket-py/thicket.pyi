"""thicket: grammar-based test generation from Python.

Load a spec (a Fandango ``.fan`` file, an ISLa ``.bnf`` grammar or a JSON grammar
dictionary), generate inputs from it (satisfying its constraints), parse inputs into
derivation trees, and check inputs against the constraints. The work is done by the same
Rust library as the ``thicket`` command, with the GIL released::

    import thicket
    spec = thicket.Spec.load("specs/json.fan")
    for inp in spec.generate(5, seed=1):
        print(inp.text)
"""

from os import PathLike
from typing import Any, Iterator, List, Optional, Union

__version__: str

class SpecError(Exception):
    """A spec (or one of its constraints) that cannot be loaded.

    ``str(error)`` is the rendering the ``thicket`` command prints (every diagnostic, with
    the source excerpt); the attributes locate the first error.
    """

    file: str
    """The file the first error is in (an included file's name if it is there)."""
    line: Optional[int]
    """Its line, from 1 (``None`` if the error has no position, e.g. an unreadable file)."""
    column: Optional[int]
    """Its column, from 1."""
    message: Optional[str]
    """The first error's message, without location."""
    diagnostics: List[dict]
    """Every diagnostic as a dict, as ``thicket lint --format json`` writes them."""

class ParseError(Exception):
    """An input that is not in the spec's language (or too complex to parse)."""

    message: str
    offset: int
    """Byte offset where the input stops fitting the grammar."""
    line: Optional[int]
    """Line of ``offset``, from 1 (``None`` if the parser gave up on complexity)."""
    column: Optional[int]
    """Column of ``offset``, from 1."""
    expected: List[str]
    """What the parser could have read at ``offset`` (terminals, quoted)."""
    rules: List[str]
    """The rules it was in the middle of."""
    found: Optional[bytes]
    """The byte found at ``offset``; ``None`` at the end of the input."""

class GenerateError(Exception):
    """Inputs cannot be made: the limits are too small for the grammar, or the
    constraints are unsatisfiable (or not satisfied within the solver's budget)."""

class Tree:
    """A node of a derivation tree: a rule node (``symbol`` is ``"<name>"``) or a
    terminal (``symbol`` is ``None``). Groups, alternatives and repetitions are
    flattened away, as in Fandango's and ISLa's trees.

    ``bytes(tree)`` is the node's text; ``len(tree)`` and ``tree[i]`` its children.
    """

    @property
    def symbol(self) -> Optional[str]:
        """``"<name>"`` for a rule node, ``None`` for a terminal."""
    @property
    def is_terminal(self) -> bool:
        """Whether the node is a terminal."""
    @property
    def children(self) -> List["Tree"]:
        """The children in input order (empty for a terminal)."""
    @property
    def text(self) -> str:
        """The node's text as UTF-8 (``UnicodeDecodeError`` if it is not)."""
    @property
    def start(self) -> int:
        """Byte offset in the input where the node starts."""
    @property
    def end(self) -> int:
        """Byte offset just after the node."""
    def descendants(self, symbol: Optional[str] = None) -> List["Tree"]:
        """The nodes below this one in preorder; only those of rule ``symbol``
        (``"<name>"`` or ``"name"``) if given: Fandango's ``<a>..<b>``."""
    def __bytes__(self) -> bytes: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> "Tree": ...

class Input:
    """A generated input. ``bytes(inp)`` is the input; ``inp == b"..."`` compares bytes."""

    @property
    def text(self) -> str:
        """The input as UTF-8 (``UnicodeDecodeError`` if it is not)."""
    @property
    def tree(self) -> Tree:
        """The input's derivation tree (the one it was generated as)."""
    @property
    def seed(self) -> int:
        """The seed it was made from."""
    @property
    def index(self) -> int:
        """Its random stream: ``thicket generate --seed SEED`` makes the same input from
        stream ``index``."""
    def __bytes__(self) -> bytes: ...
    def __len__(self) -> int: ...

class InputIter(Iterator[Input]):
    """Inputs made as they are asked for, a small batch at a time."""

    def __iter__(self) -> "InputIter": ...
    def __next__(self) -> Input: ...

class Violation:
    """A constraint an input violates, and why."""

    constraint: str
    """The constraint's text, as written in the spec."""
    location: str
    """Where the spec states it (``file:line:column``)."""
    message: str
    """The explanation ``thicket check`` prints (also ``str(violation)``)."""
    steps: List[dict]
    """The explanation's steps: bindings (``bind``, ``nonterminal``, ``text``,
    ``offset``, ``line``, ``column`` in the input) and the deciding facts (``formula``,
    ``holds``, ``detail``), as ``thicket check --json`` writes them."""

class Spec:
    """A spec, compiled: grammar, constraints, goals and generators."""

    def __init__(self, text: str, format: str = "fan", *, start: Optional[str] = None) -> None:
        """A spec from its text. ``format`` is ``"fan"`` (Fandango), ``"bnf"`` (ISLa) or
        ``"json"`` (a grammar dictionary). ``start`` picks another start rule (the
        spec's constraints, which are about whole inputs, then do not apply).

        Raises ``SpecError`` with the diagnostics ``thicket`` prints.
        """
    @staticmethod
    def load(path: Union[str, PathLike], *, start: Optional[str] = None) -> "Spec":
        """A spec from a file: ``.fan``, ``.bnf``, or ``.json``. Raises ``SpecError``."""
    @property
    def name(self) -> str:
        """The name the spec was read under (its path, or ``<text>.fan``)."""
    @property
    def constraints(self) -> List[str]:
        """The spec's constraints in force, as written."""
    def generate(
        self,
        n: int = 10,
        *,
        seed: Optional[int] = None,
        max_depth: Optional[int] = None,
        max_repetitions: Optional[int] = None,
        target_size: Optional[int] = None,
        constraints: bool = True,
    ) -> List[Input]:
        """``n`` inputs, each satisfying the spec's constraints (unless
        ``constraints=False``).

        Every choice flows from ``seed`` (drawn from the clock if ``None``): the inputs
        are those ``thicket generate SPEC -n N --seed SEED`` writes with the same limits
        (``--max-depth``, ``--max-repetitions``, ``--target-size``; ``constraints=False``
        is ``--no-constraints``). Raises ``GenerateError`` if the grammar does not fit the
        limits or the constraints cannot be satisfied; ``KeyboardInterrupt`` stops it.
        """
    def generate_iter(
        self,
        n: Optional[int] = None,
        *,
        seed: Optional[int] = None,
        max_depth: Optional[int] = None,
        max_repetitions: Optional[int] = None,
        target_size: Optional[int] = None,
        constraints: bool = True,
    ) -> InputIter:
        """The inputs of ``generate`` as an iterator, made a few at a time; without end
        if ``n`` is ``None``. The first ``k`` inputs are the same as ``generate(k)``'s."""
    def parse(self, data: Union[bytes, bytearray, str]) -> Tree:
        """The derivation tree of ``data`` (``str`` is read as UTF-8). Ambiguous inputs
        get the derivation the parser finds first. Raises ``ParseError``."""
    def check(self, data: Union[bytes, bytearray, str]) -> List[Violation]:
        """The constraints ``data`` violates, explained (empty if it is valid). Raises
        ``ParseError`` if ``data`` is not in the language."""
    def is_valid(self, data: Union[bytes, bytearray, str]) -> bool:
        """Whether ``data`` is in the language and satisfies every constraint."""
