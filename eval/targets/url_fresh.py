"""Python's urllib.parse as a target whose coverage is a function of the input alone.

thicket-exec's test harness (`url_target.py`: split, parse, query parsing, quoting,
joining), called with urllib.parse's caches emptied before each input: the runner is
one long-lived process, and `urlsplit` keeps the last results it computed, `quote`
builds its per-character table (`_Quoter.__missing__`) once per character, and
`unquote` its hex table once per process. Without this, whether an input covers those
lines depends on the inputs run before it, which no model of the input can learn.
"""
import importlib.util
import os
import urllib.parse

_HARNESS = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "../../crates/thicket-exec/tests/targets/py/url_target.py")
_spec = importlib.util.spec_from_file_location("url_target", _HARNESS)
url_target = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(url_target)


def target(text):
    urllib.parse.clear_cache()  # urlsplit's results and quote's per-character tables
    urllib.parse._hextobyte = None  # unquote's hex table, built on first use
    url_target.target(text)
