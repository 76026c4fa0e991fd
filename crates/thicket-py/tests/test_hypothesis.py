"""thicket.hypothesis: inputs drawn from Hypothesis's data, and what its shrinking makes
of them."""

import json
import pathlib
import xml.etree.ElementTree as ElementTree

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402

import thicket  # noqa: E402
from thicket.hypothesis import from_spec  # noqa: E402

SPECS = pathlib.Path(__file__).parent / "specs"

# Deterministic runs (the random seed derived from the test), no example database
# between runs, no per-example deadline on a shared machine.
QUIET = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def json_spec():
    return thicket.Spec.load(SPECS / "json.fan")


@pytest.fixture(scope="module")
def xml_spec():
    return thicket.Spec.load(SPECS / "xml.bnf")


class PlantedBug(Exception):
    pass


def negative_in_deep_array(value, depth=0):
    """Whether an array nested three deep (inside two others) holds a negative number."""
    if isinstance(value, list):
        depth += 1
        numbers = [x for x in value if isinstance(x, (int, float)) and not isinstance(x, bool)]
        if depth >= 3 and any(x < 0 for x in numbers):
            return True
        return any(negative_in_deep_array(x, depth) for x in value)
    if isinstance(value, dict):
        return any(negative_in_deep_array(x, depth) for x in value.values())
    return False


def test_the_planted_bug_is_found_and_shrunk_to_a_small_document(json_spec):
    failing = []

    @settings(QUIET, max_examples=5000)
    @given(from_spec(json_spec))
    def parse_document(data):
        if negative_in_deep_array(json.loads(data)):
            failing.append(data)
            raise PlantedBug(data)

    with pytest.raises(PlantedBug):
        parse_document()
    # Hypothesis runs the shrunk example last.
    smallest = failing[-1]
    assert negative_in_deep_array(json.loads(smallest))
    json_spec.parse(smallest)
    assert len(smallest) <= 10, smallest


def test_every_example_is_in_the_language(json_spec):
    seen = set()

    @settings(QUIET, max_examples=200)
    @given(from_spec(json_spec))
    def examples(data):
        assert isinstance(data, bytes)
        json.loads(data)
        json_spec.parse(data)
        seen.add(data)

    examples()
    # Hypothesis's data makes varied documents, not one.
    assert len(seen) > 50


def test_examples_satisfy_the_constraints(xml_spec):
    @settings(QUIET, max_examples=60)
    @given(from_spec(xml_spec, output="text"))
    def documents(text):
        assert isinstance(text, str)
        assert xml_spec.check(text) == []
        ElementTree.fromstring(text)

    documents()


def test_a_failing_example_under_constraints_shrinks_and_stays_valid(xml_spec):
    failing = []

    @settings(QUIET, max_examples=500)
    @given(from_spec(xml_spec))
    def no_attributes(data):
        if b"=" in data:
            failing.append(data)
            raise PlantedBug(data)

    with pytest.raises(PlantedBug):
        no_attributes()
    smallest = failing[-1]
    assert xml_spec.check(smallest) == []
    # An element with one attribute: `<a b="">` and its closing tag, or a bit more.
    assert len(smallest) <= 20, smallest


def test_trees_and_paths(json_spec):
    @settings(QUIET, max_examples=30)
    @given(from_spec(str(SPECS / "json.fan"), output="tree"))
    def trees(tree):
        assert tree.symbol == "<start>"
        assert json_spec.parse(bytes(tree)).text == tree.text

    trees()


def test_shrinking_reaches_the_simplest_input():
    spec = thicket.Spec('<start> ::= <item>+\n<item> ::= "x" | "yy" | <start> "!"\n')
    failing = []

    @settings(QUIET, max_examples=300)
    @given(from_spec(spec, output="text"))
    def has_a_y(text):
        if "y" in text:
            failing.append(text)
            raise PlantedBug(text)

    with pytest.raises(PlantedBug):
        has_a_y()
    assert failing[-1] == "yy"


def test_bad_arguments_are_refused_at_once(json_spec):
    with pytest.raises(ValueError, match="output"):
        from_spec(json_spec, output="json")
    with pytest.raises(thicket.GenerateError, match="depth"):
        from_spec(json_spec, max_depth=1)
    with pytest.raises(thicket.SpecError):
        from_spec(SPECS / "missing.fan")


def test_unsatisfiable_constraints_are_refused_or_rejected():
    spec = thicket.Spec('<start> ::= <d>\n<d> ::= "1" | "2"\nwhere str.len(<d>) = 5\n')
    try:
        strategy = from_spec(spec)
    except thicket.GenerateError:
        return

    @settings(database=None, deadline=None, max_examples=10)
    @given(strategy)
    def never(data):
        pass

    # Every draw is rejected: Hypothesis says it could not find any example.
    with pytest.raises(hypothesis.errors.Unsatisfiable):
        never()
