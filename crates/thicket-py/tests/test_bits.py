"""Specs with Fandango's bit fields: an input is its tree's bits packed into bytes (the
first bit most significant), and is read back one bit at a time, as `thicket parse`,
`thicket check` and `thicket fuzz` do. The bytes are judged here, bit by bit."""

import pytest

import thicket

# Flags packed into one byte between two literals, with a constraint on a bit field:
# italic, the fixed bits 1 0, a brightness of four bits, a free bit.
FLAGS = """<start> ::= b'F' <flags> b'!'
<flags> ::= <italic> 1 0 <brightness> <bit>
<italic> ::= <bit>
<brightness> ::= <bit>{4}
where <brightness> == 9
"""

# One byte between angle brackets whose two top bits are 1 0.
TAGGED = """<start> ::= b'<' <flags> b'>'
<flags> ::= 1 0 <bit>{6}
"""


@pytest.fixture(scope="module")
def flags():
    return thicket.Spec(FLAGS)


def test_a_packed_input_is_read_bit_by_bit(flags):
    # 1 1 0 1001 0: italic, the fixed 1 0, brightness 9, a free bit.
    tree = flags.parse(b"F\xd2!")
    assert [n.text for n in tree.descendants("<brightness>")] == ["1001"]
    assert [n.text for n in tree.descendants("<italic>")] == ["1"]
    # The fixed bits read 0 0 here: rejected at the flags byte.
    with pytest.raises(thicket.ParseError) as info:
        flags.parse(b"F\x92!")
    assert info.value.offset == 1
    assert "at bit 1 of the byte" in str(info.value)


def test_a_packed_input_is_checked_bit_by_bit(flags):
    assert flags.check(b"F\xd2!") == []
    assert flags.is_valid(b"F\xd2!")
    # Brightness 3: in the language, but the constraint fails, and says on what.
    violations = flags.check(b"F\xc6!")
    assert len(violations) == 1
    assert "<brightness> == 9" in violations[0].constraint
    assert not flags.is_valid(b"F\xc6!")
    assert not flags.is_valid(b"F\x92!")


def test_generated_inputs_are_packed_and_read_back(flags):
    for made in flags.generate(20, seed=1):
        data = bytes(made)
        assert len(data) == 3 and data[:1] == b"F" and data[2:] == b"!"
        assert (data[1] >> 1) & 0b1111 == 9 and (data[1] >> 5) & 0b11 == 0b10
        assert flags.check(data) == []
    coverage = flags.cover([bytes(i) for i in flags.generate(5, seed=2)], k=1)
    assert coverage.covered(1) > 0


def test_a_bit_spec_is_fuzzed_with_packed_inputs():
    spec = thicket.Spec(TAGGED)
    seen = []

    def target(data):
        seen.append(bytes(data))

    result = thicket.fuzz(spec, target, execs=60, seed=1, text=False, valid_only=True)
    assert len(seen) >= 60
    for data in seen + list(result.corpus):
        assert len(data) == 3 and data[:1] == b"<" and data[2:] == b">", data
        assert data[1] >> 6 == 0b10, data


# One or more such bytes.
TAGGED_MANY = """<start> ::= b'<' <flags>+ b'>'
<flags> ::= 1 0 <bit>{6}
"""


def test_mutations_flip_bits_and_findings_are_minimised_through_the_tree():
    spec = thicket.Spec(TAGGED_MANY)
    seen = []

    def target(data):
        seen.append(bytes(data))
        if data[:1] == b"<" and data[-1:] == b">" and any(b & 1 for b in data[1:-1]):
            raise ValueError("a low bit is set")

    result = thicket.fuzz(spec, target, execs=300, seed=2, text=False)
    # Bits take both values in the inputs run.
    framed = [d for d in seen if d[:1] == b"<" and d[-1:] == b">" and len(d) > 2]
    assert {d[1] & 1 for d in framed} == {0, 1}
    assert [f.type for f in result.findings] == ["ValueError"]
    # Minimised through the tree and packed again: one flags byte, in the language.
    found = result.findings[0].input
    assert len(found) == 3 and found[1] & 1 and found[1] >> 6 == 0b10, found
    spec.parse(found)
