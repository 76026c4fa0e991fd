"""thicket: grammar-based test generation from Python.

Load a spec (a Fandango ``.fan`` file, an ISLa ``.bnf`` grammar, a JSON grammar
dictionary or an ANTLR ``.g4`` grammar), generate inputs from it (satisfying its
constraints; at random or covering its k-paths), parse inputs into derivation trees,
check inputs against the constraints and measure their k-path coverage. The work is done
by the same Rust library as the ``thicket`` command, with the GIL released; Ctrl-C
(``KeyboardInterrupt``) stops a long call. ``thicket.hypothesis.from_spec`` is a
Hypothesis strategy for a spec's inputs::

    import thicket
    spec = thicket.Spec.load("specs/json.fan")
    for inp in spec.generate(5, seed=1):
        print(inp.text)
"""

from os import PathLike
from typing import Any, Callable, Iterable, Iterator, List, Optional, Union

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

class TargetTimeout(BaseException):
    """Raised inside a target ``fuzz`` runs when a call outlives its ``timeout``. A
    ``BaseException``, so that ``except Exception`` in the target does not swallow it; a
    target that catches it anyway gets it again each ``timeout``."""

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
    def select(self, selector: str) -> List["Tree"]:
        """The nodes a Fandango-style selector picks, in preorder, each once.

        ``<a>.<b>`` picks the ``<b>`` children of ``<a>`` nodes, ``<a>..<b>`` their
        ``<b>`` descendants, and steps chain (``<a>.<b>..<c>``). A selector that starts
        with ``<a>`` starts at this node and every node below it (as Fandango's
        ``<a>.<b>`` in a constraint speaks of every ``<a>``); one that starts with
        ``.`` or ``..`` starts below this node (``tree.select(".<b>")`` is this node's
        ``<b>`` children). Raises ``ValueError`` (with the column) for a malformed
        selector."""
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

class Coverage:
    """The k-path coverage of a set of inputs, as ``thicket cover`` reports it: for each
    length ``l`` from 1 to ``k``, how many of the grammar's ``l``-paths (chains of ``l``
    symbols, each inside the rule before it) the inputs' derivation trees contain."""

    @property
    def k(self) -> int:
        """The longest path length measured."""
    @property
    def inputs(self) -> int:
        """How many inputs were measured."""
    def covered(self, k: Optional[int] = None) -> int:
        """The ``k``-paths covered (``k`` defaults to the longest measured)."""
    def total(self, k: Optional[int] = None) -> int:
        """The ``k``-paths of the grammar."""
    def fraction(self, k: Optional[int] = None) -> float:
        """``covered(k) / total(k)`` (0.0 for a grammar without ``k``-paths)."""
    def missing(self, k: Optional[int] = None, limit: int = 50) -> List[str]:
        """Up to ``limit`` ``k``-paths the inputs miss, as ``thicket cover --missing``
        lists them."""

class ChoiceMaker:
    """Makes inputs of a spec whose every choice comes from Python (see
    ``Spec.choice_maker``): what ``thicket.hypothesis`` draws from."""

    def make(
        self,
        choose: Callable[[int], int],
        bits: Callable[[], int],
        start: Optional[Callable[[int], object]] = None,
        stop: Optional[Callable[[], object]] = None,
    ) -> Optional[Tree]:
        """The tree of one input. ``choose(n)`` returns a number in ``range(n)`` for each
        choice, options simplest first (0: an alternative of least length, no further
        repetition, a class's first character); a repetition asks ``choose(2)`` before
        each optional item (1: one more). Under constraints, ``bits()`` (a number in
        ``range(2**64)``) seeds the solver's repairs. ``start(label)`` and ``stop()``,
        if given, bracket each rule's subtree and each rest of a list (spans whose
        ``label`` says which ones can stand for one another). An exception raised by a
        hook ends the input and is raised again. ``None`` if the solver cannot make the
        tree satisfy the constraints."""

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
        """A spec from its text. ``format`` is ``"fan"`` (Fandango), ``"bnf"`` (ISLa),
        ``"json"`` (a grammar dictionary) or ``"g4"`` (a combined ANTLR grammar).
        ``start`` picks another start rule (the spec's constraints, which are about
        whole inputs, then do not apply).

        Raises ``SpecError`` with the diagnostics ``thicket`` prints.
        """
    @staticmethod
    def load(
        path: Union[str, PathLike],
        *,
        start: Optional[str] = None,
        lexer: Optional[Union[str, PathLike]] = None,
    ) -> "Spec":
        """A spec from a file: ``.fan``, ``.bnf``, ``.json`` or an ANTLR ``.g4`` grammar
        (combined, or a parser grammar whose lexer grammar is ``lexer`` or the
        ``tokenVocab`` file beside it; ``start`` defaults to its first parser rule).
        ANTLR inputs are generated and read as ``thicket`` does: separated where the
        lexer would merge tokens, and decided by the exact reading (the lexer, then the
        parser rules) before the byte grammar's tree is built. Raises ``SpecError``."""
    @property
    def name(self) -> str:
        """The name the spec was read under (its path, or ``<text>.fan``)."""
    @property
    def constraints(self) -> List[str]:
        """The spec's constraints in force, as written."""
    def generate(
        self,
        n: Optional[int] = None,
        *,
        seed: Optional[int] = None,
        strategy: str = "random",
        k: Optional[int] = None,
        max_depth: Optional[int] = None,
        max_repetitions: Optional[int] = None,
        target_size: Optional[int] = None,
        constraints: bool = True,
        hidden_probability: Optional[float] = None,
    ) -> List[Input]:
        """Inputs, each satisfying the spec's constraints (unless ``constraints=False``).

        ``strategy="random"`` (the default) makes ``n`` inputs (10 if ``None``) by
        depth-bounded random generation; ``"kpath"`` makes inputs until every k-path
        of the grammar (``k``: 2 if ``None``, at most 8) that fits the depth limit is
        covered, ``n`` a cap if given; ``"kpath-random"`` makes ``n`` inputs (10 if
        ``None``), each steered to a k-path not covered yet, round after round.

        Every choice flows from ``seed`` (drawn from the clock if ``None``): the inputs
        are those ``thicket generate SPEC -n N --seed SEED`` writes with the same
        strategy (``--strategy``, ``-k``) and limits (``--max-depth``,
        ``--max-repetitions``, ``--target-size``; ``constraints=False`` is
        ``--no-constraints``; ``hidden_probability`` is ``--hidden-probability``: how
        often the spec's whitespace rules, or an ANTLR grammar's skipped and hidden
        tokens, give more than nothing, 0.05 if ``None``; random generation only).
        Raises ``GenerateError`` if the grammar does not fit the limits or the
        constraints cannot be satisfied, ``ValueError`` for an unknown strategy, a ``k``
        out of range, or a ``hidden_probability`` outside 0 to 1 or with a k-path
        strategy; ``KeyboardInterrupt`` stops it.
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
        hidden_probability: Optional[float] = None,
    ) -> InputIter:
        """The inputs of ``generate`` as an iterator, made a few at a time; without end
        if ``n`` is ``None``. The first ``k`` inputs are the same as ``generate(k)``'s."""
    def parse(self, data: Union[bytes, bytearray, str]) -> Tree:
        """The derivation tree of ``data`` (``str`` is read as UTF-8). Ambiguous inputs
        get the derivation the parser finds first. A spec with bit fields reads ``data``
        one bit at a time, as Fandango packs bits into bytes (first bit most
        significant); an error's ``offset`` is then the byte, its message the bit. Raises
        ``ParseError``."""
    def cover(self, inputs: Iterable[Union[bytes, bytearray, str, Input, Tree]], k: int = 3) -> Coverage:
        """The k-path coverage of ``inputs`` for paths of length 1 to ``k`` (at most 8),
        as ``thicket cover -k K`` measures it (each input parsed, in parallel). Raises
        ``ParseError`` for the first input not in the language (its ``index`` attribute
        says which, its message too)."""
    def choice_maker(
        self,
        *,
        max_depth: Optional[int] = None,
        max_repetitions: Optional[int] = None,
        target_size: Optional[int] = None,
        constraints: bool = True,
    ) -> ChoiceMaker:
        """A maker of inputs whose choices come from Python, with the limits of
        ``generate`` (``target_size=0``: every choice uniform). For property-based
        testers; ``thicket.hypothesis.from_spec`` is built on it. Raises
        ``GenerateError`` as ``generate`` does."""
    def check(self, data: Union[bytes, bytearray, str]) -> List[Violation]:
        """The constraints ``data`` violates, explained (empty if it is valid); ``data``
        read as ``parse`` reads it. Raises ``ParseError`` if ``data`` is not in the
        language."""
    def is_valid(self, data: Union[bytes, bytearray, str]) -> bool:
        """Whether ``data`` is in the language and satisfies every constraint."""

class Finding:
    """A distinct failure ``fuzz`` found: an uncaught exception (one per exception class
    and innermost frame) or a hang."""

    kind: str
    """``"exception"`` or ``"hang"``."""
    type: Optional[str]
    """The exception's class, qualified by its module unless built in
    (``"json.decoder.JSONDecodeError"``, ``"IndexError"``); ``None`` for a hang."""
    message: str
    """The exception's message (for a hang: the time limit it exceeded)."""
    location: Optional[str]
    """The innermost frame, ``"file:line in function"``; ``None`` for a hang."""
    traceback: Optional[str]
    """The traceback Python prints for ``input``; ``None`` for a hang."""
    exception: Optional[BaseException]
    """The exception ``input`` raised, with its ``__traceback__``."""
    input: bytes
    """The smallest input found that fails the same way (same class, same frame):
    the campaign's minimisation through the input's derivation tree, so it is still
    in the grammar. Hangs are not minimised (each try would cost a timeout)."""
    original: bytes
    """The input as the campaign first found it."""
    count: int
    """How many runs failed this way."""

class FuzzResult:
    """What ``fuzz`` returns."""

    findings: List[Finding]
    """The distinct failures, in the order of their keys (kind, then location)."""
    corpus: List[bytes]
    """The inputs kept for reaching new lines or branches, in the order they were kept."""
    stats: dict
    """The campaign's figures, as ``thicket fuzz`` writes them to ``stats.json``
    (``execs``, ``execs_per_sec``, ``coverage``, ``failures``, ``ops``, ...)."""
    execs: int
    """Executions of the target (minimisation's runs not counted)."""
    execs_per_sec: float
    """Executions per second of the campaign."""
    lines: int
    """Lines of the measured files that the inputs ran."""
    branches: int
    """Branches of the measured files that the inputs took."""
    seed: int
    """The campaign's seed (drawn from the clock if none was given)."""

def fuzz(
    spec: Spec,
    target: Callable[[Any], Any],
    *,
    execs: Optional[int] = None,
    time: Optional[float] = None,
    seed: Optional[int] = None,
    expected: Union[type, Iterable[type], None] = None,
    timeout: float = 1.0,
    include: Optional[List[str]] = None,
    text: bool = True,
    strategy: str = "coverage",
    minimize: bool = True,
    out: Union[str, "PathLike[str]", None] = None,
    max_depth: Optional[int] = None,
    max_repetitions: Optional[int] = None,
    target_size: Optional[int] = None,
    constraints: bool = True,
    valid_only: bool = False,
    havoc: Union[str, float, None] = None,
) -> FuzzResult:
    """Fuzzes ``target`` with inputs of ``spec``, in this interpreter, on the campaign
    loop of ``thicket fuzz``: each round generates an input (satisfying the spec's
    constraints) or mutates a kept one through its derivation tree, calls
    ``target(input)``, keeps the input if it ran lines or took branches no earlier input
    did, and records exceptions as findings::

        result = thicket.fuzz(spec, json.loads, execs=20_000, seed=1,
                              expected=(ValueError,))
        for finding in result.findings:
            print(finding.type, finding.location, finding.input)

    The budget is ``execs`` executions and/or ``time`` seconds (neither: 10,000
    executions). ``seed`` makes a campaign repeatable: with the same seed, spec, target
    and ``execs`` it makes the same inputs (hangs aside, which depend on the clock).
    The target gets ``str`` (``text=True``: the input as UTF-8, invalid bytes replaced)
    or ``bytes``. A spec with bit fields runs each tree as its bits packed into bytes
    (as ``Spec.generate`` makes them), best with ``text=False``.

    Coverage: lines and branches of the files matching ``include`` (``fnmatch``
    patterns of absolute paths), by default the target's own package (the folder of
    its top-level package, or its module's file), as ``thicket fuzz --python`` measures;
    thicket's own files never. It is measured with ``sys.monitoring`` on Python 3.12 and
    newer, with ``sys.settrace`` on older ones, only during the target's calls.

    An uncaught exception is a finding unless it is an instance of ``expected`` (a class
    or a tuple of classes). Findings are told apart by class and innermost frame; each
    is minimised (``minimize=False``: not) and its input run once more for the
    ``exception`` and ``traceback``. A call that runs longer than ``timeout`` seconds
    gets ``TargetTimeout`` raised inside it, from a watchdog thread, at its next Python
    bytecode; a run that times out twice (the second time with twice the limit) is a
    hang. Code blocked in C (``time.sleep``, a C extension's loop) is stopped only when
    it returns to Python.

    ``strategy`` is one of ``thicket fuzz --strategy``'s campaign strategies
    (``"coverage"``, ``"random"``, ``"probabilistic"``, ``"inverse"``, ``"evogfuzz"``,
    ``"fdloop"``; the learning ones start from uniform probabilities). ``valid_only``
    keeps mutants in the grammar (and repairs them to satisfy the constraints);
    ``max_depth``, ``max_repetitions``, ``target_size`` and ``constraints`` are those
    of ``Spec.generate``. ``out``: a folder (new or empty) to keep the campaign's files
    in, in ``thicket fuzz -o``'s layout; by default a temporary one, removed.
    ``havoc`` is ``thicket fuzz --havoc`` (coverage strategy): byte havoc, off the
    grammar, on the smallest kept inputs; ``"auto"`` (the default, also ``None``: once
    2,000 executions keep nothing, a share of rounds growing to half), ``"off"``, or a
    share of rounds from 0 to 1; not with ``valid_only``.

    The campaign runs with the GIL released, taking it for each call of the target;
    Ctrl-C stops it and raises ``KeyboardInterrupt``. Raises ``TypeError`` for a target
    that is not callable or an ``expected`` that is not exception classes,
    ``ValueError`` for a budget or strategy that makes no sense, ``GenerateError`` when
    no input can be made, ``RuntimeError`` when the campaign cannot go on (e.g. ``out``
    already holds a campaign).
    """
