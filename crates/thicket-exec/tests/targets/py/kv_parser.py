"""A small parser of `key=value` lines with its own documented error type, and one bug:
a target whose rejections of invalid input should not bury its real crash."""


class ParseError(ValueError):
    """Raised for text that is not `key=value` lines."""


def parse(text):
    """The pairs of `text`, one `key=value` per line; `#` starts a comment line. A
    value in brackets is a list, `[a,b]`."""
    pairs = {}
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith("#"):
            continue
        if "=" not in line:
            raise ParseError(f"line {number}: no '='")
        key, value = line.split("=", 1)
        if not key:
            raise ParseError(f"line {number}: no key")
        if key in pairs:
            raise ParseError(f"line {number}: {key} again")
        pairs[key] = parse_list(value) if value.startswith("[") else value
    return pairs


def parse_list(value):
    if not value.endswith("]"):
        raise ParseError(f"unclosed list: {value}")
    # The bug: `[]` has no first item.
    first = value[1:-1].split(",")[0]
    return [first[0]] + value[1:-1].split(",")[1:]
