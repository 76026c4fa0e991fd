"""thicket: grammar-based test generation from Python.

The native core (``thicket._thicket``, built from Rust) does the work; this package
re-exports it. The API and its documentation are in ``__init__.pyi`` beside this file;
``thicket.hypothesis`` has a Hypothesis strategy for a spec's inputs.
"""

from ._thicket import (
    ChoiceMaker,
    Coverage,
    GenerateError,
    Input,
    InputIter,
    ParseError,
    Spec,
    SpecError,
    Tree,
    Violation,
    __version__,
)

__all__ = [
    "ChoiceMaker",
    "Coverage",
    "GenerateError",
    "Input",
    "InputIter",
    "ParseError",
    "Spec",
    "SpecError",
    "Tree",
    "Violation",
    "__version__",
]
