"""thicket: grammar-based test generation from Python.

The native core (``thicket._thicket``, built from Rust) does the work; this package
re-exports it (``thicket._coverage``, pure Python, is the coverage collector of
``thicket.fuzz``). The API and its documentation are in ``__init__.pyi`` beside this file;
``thicket.hypothesis`` has a Hypothesis strategy for a spec's inputs.
"""

from ._thicket import (
    ChoiceMaker,
    Coverage,
    Finding,
    FuzzResult,
    GenerateError,
    Input,
    InputIter,
    ParseError,
    Spec,
    SpecError,
    TargetTimeout,
    Tree,
    Violation,
    __version__,
    fuzz,
)

__all__ = [
    "ChoiceMaker",
    "Coverage",
    "Finding",
    "FuzzResult",
    "GenerateError",
    "Input",
    "InputIter",
    "ParseError",
    "Spec",
    "SpecError",
    "TargetTimeout",
    "Tree",
    "Violation",
    "__version__",
    "fuzz",
]
