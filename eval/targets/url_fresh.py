"""Python's urllib.parse as a target whose coverage is a function of the input alone.

The same calls as thicket-exec's test harness (`url_target.py`: split, parse, query
parsing, quoting, joining), with urllib.parse's caches emptied before each input: the
runner is one long-lived process, and `urlsplit` keeps the last results it computed,
`quote` builds its per-character table (`_Quoter.__missing__`) once per character, and
`unquote` its hex table once per process. Without this, whether an input covers those
lines depends on the inputs run before it, which no model of the input can learn.
"""
import urllib.parse
from urllib.parse import parse_qsl, quote, unquote, urljoin, urlsplit, urlparse


def target(text):
    urllib.parse.clear_cache()  # urlsplit's results and quote's per-character tables
    urllib.parse._hextobyte = None  # unquote's hex table, built on first use
    parts = urlparse(text)
    split = urlsplit(text)
    split.port
    parse_qsl(parts.query, keep_blank_values=True)
    unquote(quote(parts.path))
    urljoin("http://example.com/a/b/c", text)
