"""The Python module's behaviour, judged by Python's own parsers where there is one."""

import _thread
import json
import os
import pathlib
import re
import subprocess
import threading
import xml.etree.ElementTree as ElementTree

import pytest

import thicket

SPECS = pathlib.Path(__file__).parent / "specs"
JSON_SPEC = SPECS / "json.fan"
XML_SPEC = SPECS / "xml.bnf"


@pytest.fixture(scope="module")
def json_spec():
    return thicket.Spec.load(JSON_SPEC)


@pytest.fixture(scope="module")
def xml_spec():
    return thicket.Spec.load(str(XML_SPEC))


# Generation


def test_generated_json_documents_are_json(json_spec):
    inputs = json_spec.generate(200, seed=1)
    assert len(inputs) == 200
    for inp in inputs:
        json.loads(inp.text)
        assert bytes(inp) == inp.text.encode()


def test_generated_xml_satisfies_the_constraints_and_element_tree(xml_spec):
    inputs = xml_spec.generate(20, seed=5)
    assert len(inputs) == 20
    for inp in inputs:
        assert xml_spec.check(bytes(inp)) == []
        # Namespace prefixes are declared, tags match: ElementTree reads them all.
        ElementTree.fromstring(inp.text)


def test_same_seed_same_inputs_other_seed_other_inputs(json_spec):
    first = [bytes(i) for i in json_spec.generate(50, seed=7)]
    again = [bytes(i) for i in json_spec.generate(50, seed=7)]
    other = [bytes(i) for i in json_spec.generate(50, seed=8)]
    assert first == again
    assert first != other


def test_a_longer_run_begins_with_a_shorter_one(json_spec):
    short = [bytes(i) for i in json_spec.generate(10, seed=3)]
    long = [bytes(i) for i in json_spec.generate(3000, seed=3)]
    assert long[:10] == short


def test_the_iterator_streams_the_same_inputs(json_spec, xml_spec):
    listed = [bytes(i) for i in json_spec.generate(100, seed=11)]
    streamed = [bytes(i) for i in json_spec.generate_iter(100, seed=11)]
    assert streamed == listed
    endless = xml_spec.generate_iter(seed=2)
    firsts = [bytes(next(endless)) for _ in range(5)]
    assert firsts == [bytes(i) for i in xml_spec.generate(5, seed=2)]


def test_inputs_are_those_of_the_command_line(json_spec, xml_spec):
    thicket_bin = os.environ.get("THICKET_BIN")
    if not thicket_bin:
        pytest.skip("set THICKET_BIN to the `thicket` binary to compare with it")
    for spec, path in [(json_spec, JSON_SPEC), (xml_spec, XML_SPEC)]:
        out = subprocess.run(
            [thicket_bin, "generate", str(path), "-n", "20", "--seed", "42", "-0"],
            check=True,
            capture_output=True,
        ).stdout
        from_cli = out.split(b"\0")[:-1]
        assert from_cli == [bytes(i) for i in spec.generate(20, seed=42)]


def test_inputs_carry_their_seed_and_tree(json_spec, xml_spec):
    for spec in (json_spec, xml_spec):
        for inp in spec.generate(5, seed=9):
            assert inp.seed == 9
            tree = inp.tree
            assert tree.symbol == "<start>"
            assert bytes(tree) == bytes(inp)


def test_without_constraints_inputs_may_violate_them(xml_spec):
    inputs = xml_spec.generate(100, seed=1, constraints=False)
    assert any(xml_spec.check(bytes(i)) for i in inputs)


def test_unsatisfiable_constraints_raise_generate_error():
    spec = thicket.Spec('<start> ::= <d>\n<d> ::= "1" | "2"\nwhere str.len(<d>) = 5\n')
    with pytest.raises(thicket.GenerateError):
        spec.generate(3, seed=1)


def test_a_depth_the_grammar_cannot_fit_raises_generate_error(json_spec):
    with pytest.raises(thicket.GenerateError, match="depth"):
        json_spec.generate(1, seed=1, max_depth=1)


def test_generation_releases_the_gil(json_spec):
    # Another thread runs while a large call is under way: it could not if the call
    # held the GIL throughout.
    during = []
    running = threading.Event()
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            if running.is_set():
                during.append(1)
            stop.wait(0.0005)

    ticker = threading.Thread(target=tick)
    ticker.start()
    running.set()
    json_spec.generate(50000, seed=1)
    running.clear()
    stop.set()
    ticker.join()
    assert during


# Parsing


def test_parse_gives_a_tree_to_walk(json_spec):
    data = b'{"a": [1, -2]}'
    tree = json_spec.parse(data)
    assert tree.symbol == "<start>"
    assert bytes(tree) == data and tree.text == data.decode()
    assert (tree.start, tree.end) == (0, len(data))
    numbers = [n.text for n in tree.descendants("<number>")]
    assert numbers == ["1", "-2"]
    assert [n.text for n in tree.descendants("number")] == numbers
    leaves = [n for n in tree.descendants() if n.is_terminal]
    assert b"".join(bytes(n) for n in leaves) == data
    assert all(n.symbol is None and n.children == [] for n in leaves)
    assert tree[0].symbol == "<element>" and len(tree) == 1
    assert json_spec.parse('[true]').text == "[true]"


def test_parse_error_says_where_and_what_was_expected(json_spec):
    with pytest.raises(thicket.ParseError) as info:
        json_spec.parse(b'{\n  "a": }')
    error = info.value
    assert (error.line, error.column, error.offset) == (2, 8, 9)
    assert error.found == b"}"
    assert error.expected
    assert "2:8" in str(error) or "line 2" in str(error)


# Checking


def test_check_explains_violations(xml_spec):
    assert xml_spec.check("<a>x</a>") == []
    assert xml_spec.is_valid(b"<a>x</a>")
    violations = xml_spec.check(b"<a>x</b>")
    assert len(violations) == 1
    v = violations[0]
    assert "opid" in v.constraint and "clid" in v.constraint
    assert "xml.bnf:41" in v.location
    bound = {s["bind"]: s for s in v.steps if "bind" in s}
    assert bound["opid"]["text"] == "a" and bound["clid"]["text"] == "b"
    assert (bound["clid"]["line"], bound["clid"]["column"]) == (1, 7)
    assert "violates" in str(v)
    assert not xml_spec.is_valid(b"<a>x</b>")
    assert not xml_spec.is_valid(b"<a")


def test_check_of_an_input_outside_the_language_raises(xml_spec):
    with pytest.raises(thicket.ParseError):
        xml_spec.check(b"<a")


# Specs


def test_spec_errors_carry_file_line_and_column():
    with pytest.raises(thicket.SpecError) as info:
        thicket.Spec('<start> ::= <a>\n<a> ::= "x" <nope>\n')
    error = info.value
    assert error.file == "<text>.fan"
    assert (error.line, error.column) == (2, 13)
    assert "nope" in error.message
    assert "<text>.fan:2:13" in str(error)
    assert error.diagnostics and error.diagnostics[0]["severity"] == "error"


def test_spec_errors_of_a_file_name_the_file(tmp_path):
    path = tmp_path / "bad.fan"
    path.write_text('<start> ::= <a>\n\n<a> ::= "b" <c>\n')
    with pytest.raises(thicket.SpecError) as info:
        thicket.Spec.load(path)
    assert info.value.file == str(path)
    assert (info.value.line, info.value.column) == (3, 13)


def test_a_missing_spec_file_is_a_spec_error(tmp_path):
    with pytest.raises(thicket.SpecError) as info:
        thicket.Spec.load(tmp_path / "missing.fan")
    assert info.value.line is None
    assert "missing.fan" in str(info.value)


def test_specs_in_every_text_format():
    bnf = thicket.Spec('<start> ::= "a" <b>\n<b> ::= "b" | "c"\n', format="bnf")
    assert {bytes(i) for i in bnf.generate(50, seed=1)} == {b"ab", b"ac"}
    grammar = {"<start>": ["x<d>"], "<d>": ["1", "2"]}
    js = thicket.Spec(json.dumps(grammar), format="json")
    assert {i.text for i in js.generate(50, seed=1)} == {"x1", "x2"}
    assert js.parse("x2")[1].symbol == "<d>"
    with pytest.raises(ValueError):
        thicket.Spec("<start> ::= 'a'", format="yaml")


def test_another_start_rule():
    spec = thicket.Spec('<start> ::= <d> <d>\n<d> ::= "1" | "2"\n', start="<d>")
    assert {i.text for i in spec.generate(20, seed=1)} == {"1", "2"}


# k-paths


def test_kpath_generation_covers_every_k_path(json_spec):
    inputs = json_spec.generate(strategy="kpath", k=2, seed=4)
    assert inputs
    for inp in inputs:
        json.loads(inp.text)
        assert inp.tree.symbol == "<start>"
    coverage = json_spec.cover(inputs, k=2)
    assert coverage.covered(2) == coverage.total(2) > 0
    assert coverage.covered(1) == coverage.total(1)
    assert coverage.fraction() == 1.0 and coverage.missing() == []
    # The same inputs as the command line's for the same seed.
    again = json_spec.generate(strategy="kpath", k=2, seed=4)
    assert [bytes(i) for i in again] == [bytes(i) for i in inputs]


def test_kpath_random_makes_n_inputs_and_caps_apply(json_spec, xml_spec):
    assert len(json_spec.generate(7, strategy="kpath-random", k=3, seed=1)) == 7
    assert len(json_spec.generate(3, strategy="kpath", k=3, seed=1)) == 3
    # Under constraints each steered input is repaired into a valid one.
    for inp in xml_spec.generate(5, strategy="kpath-random", seed=2):
        assert xml_spec.check(bytes(inp)) == []


def test_kpath_inputs_are_those_of_the_command_line(json_spec):
    thicket_bin = os.environ.get("THICKET_BIN")
    if not thicket_bin:
        pytest.skip("set THICKET_BIN to the `thicket` binary to compare with it")
    out = subprocess.run(
        [thicket_bin, "generate", str(JSON_SPEC), "--strategy", "kpath", "-k", "2",
         "--seed", "9", "-0"],
        check=True,
        capture_output=True,
    ).stdout
    from_cli = out.split(b"\0")[:-1]
    assert from_cli == [bytes(i) for i in json_spec.generate(strategy="kpath", k=2, seed=9)]


def test_bad_strategies_and_lengths_are_value_errors(json_spec):
    with pytest.raises(ValueError, match="strategy"):
        json_spec.generate(strategy="grammarinator")
    with pytest.raises(ValueError, match="k=9"):
        json_spec.generate(strategy="kpath", k=9)
    with pytest.raises(ValueError, match="k"):
        json_spec.generate(5, k=2)
    with pytest.raises(ValueError, match="k=0"):
        json_spec.cover([b"1"], k=0)


def test_cover_measures_and_lists_missing_paths(json_spec):
    coverage = json_spec.cover([b"1", "true", json_spec.generate(1, seed=1)[0]], k=3)
    assert coverage.inputs == 3 and coverage.k == 3
    assert 0 < coverage.covered(1) <= coverage.total(1)
    assert coverage.covered(3) < coverage.total(3)
    missing = coverage.missing(3, limit=5)
    assert len(missing) == 5 and all("<" in m for m in missing)
    assert "3-paths" in repr(coverage)
    smaller = json_spec.cover([b"1"], k=3)
    assert smaller.covered(3) < coverage.covered(3)


def test_cover_of_an_input_outside_the_language_names_it(json_spec):
    with pytest.raises(thicket.ParseError) as info:
        json_spec.cover([b"1", b"[1,", b"2"], k=2)
    assert info.value.index == 1
    assert "input 1" in str(info.value)
    assert info.value.offset == 3


# Selectors


def test_selectors_pick_children_and_descendants(json_spec):
    tree = json_spec.parse(b'{"a": [1, {"b": -2}], "c": 3}')
    members = tree.select("<object>.<member>")
    assert [m.select(".<string>")[0].text for m in members] == ['"a"', '"b"', '"c"']
    # `<object>` nodes nest: each member once, in input order.
    assert [n.text for n in tree.select("<object>..<number>")] == ["1", "-2", "3"]
    assert [n.text for n in tree.select("<array>..<number>")] == ["1", "-2"]
    assert [n.text for n in tree.select("<start>.<element>..<int>")] == ["1", "2", "3"]
    assert [n.text for n in tree.select("..<number>")] == ["1", "-2", "3"]
    assert tree.select(".<element>")[0].symbol == "<element>"
    assert tree.select("<array>.<number>") == []
    assert tree.select("<nope>") == []
    for bad in ["", "<a", "<a><b>", "a.<b>", "<a>...", "<a>.", "<>"]:
        with pytest.raises(ValueError, match="selector"):
            tree.select(bad)


# Interruption


def interrupted(call):
    """Runs `call` with a Ctrl-C (SIGINT) arriving a moment after it starts; whether it
    ended by `KeyboardInterrupt`."""
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    try:
        call()
    except KeyboardInterrupt:
        return True
    finally:
        timer.cancel()
        timer.join()
    return False


def test_ctrl_c_stops_long_calls(json_spec):
    # Each call would take minutes; they end at the interrupt instead.
    assert interrupted(lambda: json_spec.generate(50_000_000, seed=1))
    assert interrupted(lambda: json_spec.generate(10**8, strategy="kpath-random", seed=1))
    assert interrupted(lambda: json_spec.cover([b"[1, 2, 3]"] * 5_000_000, k=3))
    # The module is still usable afterwards.
    assert len(json_spec.generate(3, seed=1)) == 3


# ANTLR grammars


def test_g4_inputs_are_separated_and_read_by_the_exact_lexer():
    spec = thicket.Spec.load(SPECS / "Items.g4")
    inputs = spec.generate(100, seed=3)
    for inp in inputs:
        tree = spec.parse(bytes(inp))
        # Every item is one token: items side by side were separated.
        tokens = re.findall(rb"[a-z]+|[0-9]+", bytes(inp))
        assert len(tree.select("<items>.<item>")) == len(tokens)
        assert bytes(inp.tree) == bytes(inp)
    assert any(re.search(rb"[a-z] [a-z]", bytes(i)) for i in inputs)
    assert spec.is_valid(b"ab 12 if")
    # Rejected by the exact reading (its lexer), which says where.
    with pytest.raises(thicket.ParseError) as info:
        spec.parse(b"ab !")
    assert info.value.offset == 3


def test_g4_inputs_are_those_of_the_command_line():
    thicket_bin = os.environ.get("THICKET_BIN")
    if not thicket_bin:
        pytest.skip("set THICKET_BIN to the `thicket` binary to compare with it")
    path = SPECS / "Items.g4"
    out = subprocess.run(
        [thicket_bin, "generate", str(path), "-n", "30", "--seed", "5", "-0"],
        check=True,
        capture_output=True,
    ).stdout
    spec = thicket.Spec.load(path)
    assert out.split(b"\0")[:-1] == [bytes(i) for i in spec.generate(30, seed=5)]


def blank_share(inputs):
    text = b"".join(bytes(i) for i in inputs)
    return sum(text.count(c) for c in b" \t\r\n") / len(text)


def test_hidden_probability_raises_whitespace_and_hidden_text(json_spec):
    items = thicket.Spec.load(SPECS / "Items.g4")
    items_default = [bytes(i) for i in items.generate(50, seed=4)]
    for spec in (json_spec, items):
        quiet = spec.generate(300, seed=4)
        loud = spec.generate(300, seed=4, hidden_probability=1.0)
        assert blank_share(loud) > 2 * blank_share(quiet)
        # The iterator draws the same inputs.
        streamed = spec.generate_iter(20, seed=4, hidden_probability=1.0)
        assert [bytes(i) for i in streamed] == [bytes(i) for i in loud[:20]]
    # No blank between tokens: the <ws> rule takes its empty alternative.
    for inp in json_spec.generate(300, seed=4, hidden_probability=0.0):
        outside_strings = re.sub(rb'"(?:[^"\\]|\\.)*"', b"", bytes(inp))
        assert not re.search(rb"\s", outside_strings), bytes(inp)
    # Read once, the ANTLR grammar keeps its default for later calls.
    assert [bytes(i) for i in items.generate(50, seed=4)] == items_default


def test_hidden_probability_is_that_of_the_command_line(json_spec):
    thicket_bin = os.environ.get("THICKET_BIN")
    if not thicket_bin:
        pytest.skip("set THICKET_BIN to the `thicket` binary to compare with it")
    # grammars-v4's TOML grammar: its default size target depends on the probability.
    toml = SPECS.parent.parent.parent / "thicket-antlr/tests/data/toml/TomlParser.g4"
    items = SPECS / "Items.g4"
    cases = [(json_spec, JSON_SPEC), (thicket.Spec.load(items), items)]
    for spec, path in cases + [(thicket.Spec.load(toml), toml)]:
        for p in ("0", "0.5", "1"):
            out = subprocess.run(
                [thicket_bin, "generate", str(path), "-n", "30", "--seed", "6", "-0",
                 "--hidden-probability", p],
                check=True,
                capture_output=True,
            ).stdout
            made = spec.generate(30, seed=6, hidden_probability=float(p))
            assert out.split(b"\0")[:-1] == [bytes(i) for i in made]


def test_hidden_probability_is_checked(json_spec):
    with pytest.raises(ValueError, match="between 0 and 1"):
        json_spec.generate(3, seed=1, hidden_probability=1.5)
    with pytest.raises(ValueError, match="random"):
        json_spec.generate(3, seed=1, strategy="kpath", hidden_probability=0.5)


def test_g4_text_and_its_errors():
    spec = thicket.Spec("grammar G;\nstart : 'a' B ;\nB : 'b' ;\n", format="g4")
    assert {bytes(i) for i in spec.generate(10, seed=1)} == {b"ab"}
    with pytest.raises(thicket.SpecError) as info:
        thicket.Spec("grammar G;\nstart : 'a' ( ;\n", format="g4")
    assert info.value.line == 2
    with pytest.raises(ValueError, match="lexer"):
        thicket.Spec.load(JSON_SPEC, lexer=SPECS / "Items.g4")
