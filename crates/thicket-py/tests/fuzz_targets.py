"""Targets for test_fuzz.py: functions with planted bugs, measured as their own module."""

import json


def nested_list(text):
    """Fails on a JSON array whose first item is an array."""
    value = json.loads(text)
    if isinstance(value, list) and value and isinstance(value[0], list):
        raise IndexError("an array first in an array")
    return value


def deep_key(text):
    """Fails on an object holding an object (another failure than `nested_list`'s)."""
    value = json.loads(text)
    if isinstance(value, dict):
        for item in value.values():
            if isinstance(item, dict):
                raise KeyError("an object in an object")
    return value


def both(text):
    """Both planted bugs, each its own finding."""
    nested_list(text)
    deep_key(text)


def loops_on_objects(text):
    """Never ends on a JSON object, even when told to with an ordinary exception."""
    value = json.loads(text)
    if isinstance(value, dict):
        while True:
            try:
                while True:
                    pass
            except Exception:  # noqa: BLE001 - the planted bug swallows what it can
                pass
    return value


def branches(text):
    """Different lines for different kinds of documents."""
    value = json.loads(text)
    if isinstance(value, list):
        kind = "list"
    elif isinstance(value, dict):
        kind = "dict"
    elif isinstance(value, str):
        kind = "str"
    else:
        kind = "other"
    return kind


def characters(text):
    """Loops over the input many times: a line per kind of character."""
    kinds = set()
    for char in text * 3:
        if char == "[":
            kinds.add("array")
        elif char == "{":
            kinds.add("object")
        elif char == '"':
            kinds.add("string")
        elif char.isdigit():
            kinds.add("digit")
    return kinds
