"""thicket.fuzz: a Python callable fuzzed in this interpreter."""

import _thread
import json
import pathlib
import sys
import threading

import pytest

import fuzz_targets
import thicket

SPECS = pathlib.Path(__file__).parent / "specs"
# What json.loads raises on inputs that are not JSON (byte mutations leave the grammar)
# or nest too deeply (mutations stack arrays): not the planted bugs.
QUIET = (ValueError, RecursionError)


@pytest.fixture(scope="module")
def json_spec():
    return thicket.Spec.load(SPECS / "json.fan")


def test_an_exception_is_a_finding_with_a_minimised_input(json_spec):
    result = thicket.fuzz(json_spec, fuzz_targets.nested_list, execs=2000, seed=1, expected=QUIET)
    assert len(result.findings) == 1
    finding = result.findings[0]
    assert finding.kind == "exception"
    assert finding.type == "IndexError"
    assert finding.message == "an array first in an array"
    assert finding.location.startswith(fuzz_targets.__file__)
    assert finding.location.endswith("in nested_list")
    assert "IndexError: an array first in an array" in finding.traceback
    assert isinstance(finding.exception, IndexError)
    assert finding.count >= 1
    # The minimised input is still in the grammar and still fails the same way; it is
    # as small as the grammar allows.
    assert finding.input == b"[[]]"
    assert len(finding.original) >= len(finding.input)
    with pytest.raises(IndexError):
        fuzz_targets.nested_list(finding.input.decode())


def test_findings_are_told_apart_by_class_and_frame(json_spec):
    result = thicket.fuzz(json_spec, fuzz_targets.both, execs=3000, seed=2, expected=QUIET)
    types = sorted(f.type for f in result.findings)
    assert types == ["IndexError", "KeyError"]
    for finding in result.findings:
        with pytest.raises((IndexError, KeyError)):
            fuzz_targets.both(finding.input.decode())


def test_expected_exceptions_are_not_failures(json_spec):
    # Byte mutations leave the grammar: json.loads raises JSONDecodeError.
    found = thicket.fuzz(json_spec, json.loads, execs=1500, seed=3, minimize=False)
    assert "json.decoder.JSONDecodeError" in [f.type for f in found.findings]
    # A subclass of an expected class is expected too (what is left: arrays nested
    # too deeply for json.loads).
    quiet = thicket.fuzz(
        json_spec, json.loads, execs=1500, seed=3, expected=(ValueError,), minimize=False
    )
    assert {f.type for f in quiet.findings} <= {"RecursionError"}
    single = thicket.fuzz(
        json_spec, json.loads, execs=1500, seed=3, expected=ValueError, minimize=False
    )
    assert [f.type for f in single.findings] == [f.type for f in quiet.findings]
    none = thicket.fuzz(json_spec, json.loads, execs=1500, seed=3, expected=QUIET)
    assert none.findings == []


def test_a_hang_is_stopped_by_the_timeout(json_spec):
    result = thicket.fuzz(
        json_spec, fuzz_targets.loops_on_objects, time=3, timeout=0.1, seed=4, expected=QUIET
    )
    hangs = [f for f in result.findings if f.kind == "hang"]
    assert len(hangs) >= 1
    assert hangs[0].type is None and hangs[0].exception is None
    assert json.loads(hangs[0].input).__class__ is dict
    # The interpreter goes on as before: no timeout is left pending.
    assert sum(range(1000)) == 499500
    assert thicket.fuzz(json_spec, fuzz_targets.branches, execs=50, seed=4, expected=QUIET).findings == []


def test_the_same_seed_makes_the_same_campaign(json_spec):
    def campaign():
        result = thicket.fuzz(
            json_spec, fuzz_targets.nested_list, execs=600, seed=7, expected=QUIET
        )
        findings = [(f.type, f.location, f.input, f.original, f.count) for f in result.findings]
        return result.corpus, findings, result.lines, result.branches, result.execs

    first = campaign()
    assert first == campaign()
    assert first[4] == 600
    other = thicket.fuzz(json_spec, fuzz_targets.nested_list, execs=600, seed=8, expected=QUIET)
    assert other.corpus != first[0]


def test_coverage_is_of_the_target_and_feeds_the_corpus(json_spec):
    result = thicket.fuzz(json_spec, fuzz_targets.branches, execs=500, seed=5, expected=QUIET)
    assert result.findings == []
    # Each kind of document runs its own line: the corpus holds inputs of each kind.
    kinds = {fuzz_targets.branches(inp.decode()) for inp in result.corpus}
    assert kinds == {"list", "dict", "str", "other"}
    assert result.lines >= 8 and result.branches >= 4
    files = [f["path"] for f in result.stats["coverage"]["files"]]
    assert files == [fuzz_targets.__file__]
    assert result.stats["execs"] == result.execs == 500
    assert result.execs_per_sec > 0
    backend = "sys.monitoring" if sys.version_info >= (3, 12) else "sys.settrace"
    assert backend in result.stats["executor"]


def test_coverage_of_a_target_that_loops(json_spec):
    # Lines run many times per call (on 3.12+ the collector then fires each line once
    # per call): still every kind of character reaches the corpus.
    result = thicket.fuzz(json_spec, fuzz_targets.characters, execs=500, seed=6)
    kinds = set().union(*(fuzz_targets.characters(inp.decode()) for inp in result.corpus))
    assert kinds == {"array", "object", "string", "digit"}
    again = thicket.fuzz(json_spec, fuzz_targets.characters, execs=500, seed=6)
    assert again.corpus == result.corpus


def test_include_chooses_the_measured_files(json_spec):
    result = thicket.fuzz(
        json_spec,
        fuzz_targets.branches,
        execs=300,
        seed=5,
        expected=QUIET,
        include=[str(pathlib.Path(json.__file__).parent / "*")],
    )
    files = [f["path"] for f in result.stats["coverage"]["files"]]
    assert files and all("/json/" in f for f in files)


def test_bytes_targets_get_bytes(json_spec):
    seen = []

    def target(data):
        seen.append(type(data))

    thicket.fuzz(json_spec, target, execs=20, seed=1, text=False)
    assert set(seen) == {bytes}


def test_the_campaign_folder_is_kept_when_asked(json_spec, tmp_path):
    out = tmp_path / "campaign"
    result = thicket.fuzz(
        json_spec, fuzz_targets.nested_list, execs=300, seed=1, out=out, expected=QUIET
    )
    assert (out / "stats.json").exists()
    assert len(list((out / "queue").iterdir())) == len(result.corpus)
    assert len(list((out / "crashes").iterdir())) == len(result.findings)
    # A folder holding a campaign is not overwritten.
    with pytest.raises(RuntimeError, match="already holds a campaign"):
        thicket.fuzz(json_spec, fuzz_targets.nested_list, execs=10, out=out)


def test_other_strategies_run_the_same_loop(json_spec):
    result = thicket.fuzz(
        json_spec, fuzz_targets.nested_list, execs=300, seed=1, strategy="random", expected=QUIET
    )
    assert result.stats["strategy"] == "random"
    assert [f.type for f in result.findings] == ["IndexError"]


def test_havoc_takes_the_share_asked(json_spec):
    def havoc_rounds(**kwargs):
        result = thicket.fuzz(
            json_spec, fuzz_targets.branches, execs=400, seed=3, expected=QUIET, **kwargs
        )
        return result.stats["ops"].get("havoc", {}).get("runs", 0)

    # Half the rounds once an input is kept; none when off; none yet by the stall rule
    # (no 2,000 executions without a kept input in a campaign of 400).
    assert havoc_rounds(havoc=0.5) > 100
    assert havoc_rounds(havoc="off") == 0
    assert havoc_rounds() == havoc_rounds(havoc="auto") == 0


def test_bad_arguments_are_refused(json_spec):
    with pytest.raises(TypeError, match="callable"):
        thicket.fuzz(json_spec, 42)
    with pytest.raises(TypeError, match="exception classes"):
        thicket.fuzz(json_spec, json.loads, expected=(42,))
    with pytest.raises(ValueError, match="seconds"):
        thicket.fuzz(json_spec, json.loads, time=-1)
    with pytest.raises(ValueError, match="seconds"):
        thicket.fuzz(json_spec, json.loads, timeout=0)
    with pytest.raises(ValueError, match="coverage"):
        thicket.fuzz(json_spec, json.loads, strategy="nope")
    with pytest.raises(ValueError, match="havoc: expected `auto`, `off` or a share"):
        thicket.fuzz(json_spec, json.loads, havoc="half")
    with pytest.raises(ValueError, match="havoc: expected"):
        thicket.fuzz(json_spec, json.loads, havoc=1.5)
    with pytest.raises(TypeError, match="havoc is"):
        thicket.fuzz(json_spec, json.loads, havoc=True)
    with pytest.raises(ValueError, match="exclude each other"):
        thicket.fuzz(json_spec, json.loads, havoc=0.5, valid_only=True)


def test_a_bad_spec_is_an_error():
    with pytest.raises(thicket.SpecError) as error:
        thicket.fuzz(thicket.Spec("<start> ::= <missing>\n", format="bnf"), json.loads)
    assert error.value.line == 1
    # A spec the limits cannot fit.
    spec = thicket.Spec('<start> ::= "[" <start> "]" | "[" <start> <start> "]"\n', format="bnf")
    with pytest.raises((thicket.GenerateError, thicket.SpecError)):
        thicket.fuzz(spec, json.loads, execs=10)


def test_a_tracer_set_before_is_kept(json_spec):
    def tracer(frame, event, arg):
        return None

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        thicket.fuzz(json_spec, fuzz_targets.branches, execs=20, seed=1, expected=QUIET)
        assert sys.gettrace() is tracer
    finally:
        sys.settrace(previous)


def test_ctrl_c_stops_a_campaign(json_spec):
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            thicket.fuzz(json_spec, json.loads, time=120, expected=ValueError)
    finally:
        timer.cancel()
        timer.join()
    # Coverage is measured again by the next campaign (the tracer was released).
    result = thicket.fuzz(json_spec, fuzz_targets.branches, execs=200, seed=5, expected=QUIET)
    assert result.lines > 0
