"""Hypothesis strategies for a spec's inputs.

``from_spec(spec)`` draws inputs of a spec's language whose every choice (which
alternative, how many repetitions, which character) comes from Hypothesis's own data.
Hypothesis therefore shrinks a failing input by shrinking its choices, and the options
are offered simplest first (choice 0 is an alternative of least length, the fewest
repetitions, the first character of a class), so the example Hypothesis reports is a
small input that is still in the language. Under the spec's constraints each drawn
input is repaired by thicket's solver (its randomness drawn from Hypothesis too); an
input the solver cannot make valid is rejected, as ``assume(False)`` would.

::

    from hypothesis import given
    import thicket
    from thicket.hypothesis import from_spec

    spec = thicket.Spec.load("specs/json.fan")

    @given(from_spec(spec))
    def test_parser(data):
        my_parser.parse(data)
"""

from os import PathLike
from typing import Optional, Union

from hypothesis import reject
from hypothesis import strategies as st

from ._thicket import Spec

__all__ = ["from_spec"]

_OUTPUTS = ("bytes", "text", "tree")
_BITS = 2**64 - 1


class _SpecInputs(st.SearchStrategy):
    """Inputs of a spec, every choice drawn from Hypothesis's data.

    Each rule's subtree is a span of the data (labelled by its rule), so that the
    shrinker deletes a subtree's choices whole, or puts a smaller subtree of the same
    rule in its place. Spans are Hypothesis's internal interface (as its own grammar
    strategy, ``hypothesis.extra.lark``, uses them); where a version of Hypothesis lacks
    them, inputs are drawn without them (and shrink less well).
    """

    def __init__(self, maker, output, description):
        super().__init__()
        self._maker = maker
        self._output = output
        self._description = description

    def __repr__(self):
        return self._description

    def do_draw(self, data):
        start = getattr(data, "start_span", None)
        stop = getattr(data, "stop_span", None)
        tree = self._maker.make(
            lambda n: data.draw_integer(0, n - 1),
            lambda: data.draw_integer(0, _BITS),
            start,
            stop,
        )
        if tree is None:
            # The solver could not repair this draw: not an input of the spec.
            reject()
        if self._output == "tree":
            return tree
        if self._output == "text":
            return tree.text
        return bytes(tree)


def from_spec(
    spec: Union[Spec, str, PathLike],
    *,
    output: str = "bytes",
    max_depth: Optional[int] = None,
    max_repetitions: Optional[int] = None,
    target_size: Optional[int] = 0,
    constraints: bool = True,
) -> st.SearchStrategy:
    """A strategy for inputs of ``spec`` (a ``thicket.Spec``, or the path of a spec file).

    ``output`` is ``"bytes"`` (the default), ``"text"`` (``str``, for specs whose inputs
    are UTF-8) or ``"tree"`` (the input's ``thicket.Tree``; ``bytes(tree)`` is the input).
    The limits are those of ``Spec.generate``, except ``target_size``: 0 (the default)
    makes every choice uniformly, so that each choice only decides its own part of the
    input and shrinks independently; a size target steers the choices towards inputs
    of about that size. ``constraints=False`` ignores the spec's constraints. Raises
    ``thicket.GenerateError`` at once if the grammar does not fit the limits or the
    constraints are unsatisfiable.
    """
    if output not in _OUTPUTS:
        raise ValueError(f"output {output!r}: from_spec makes {', '.join(map(repr, _OUTPUTS))}")
    if not isinstance(spec, Spec):
        spec = Spec.load(spec)
    maker = spec.choice_maker(
        max_depth=max_depth,
        max_repetitions=max_repetitions,
        target_size=target_size,
        constraints=constraints,
    )
    return _SpecInputs(maker, output, f"from_spec({spec.name!r}, output={output!r})")
