"""Python's urllib.parse as a target: split, parse, query parsing, quoting, joining."""
from urllib.parse import parse_qsl, quote, unquote, urljoin, urlsplit, urlparse


def target(text):
    parts = urlparse(text)
    split = urlsplit(text)
    split.port
    parse_qsl(parts.query, keep_blank_values=True)
    unquote(quote(parts.path))
    urljoin("http://example.com/a/b/c", text)
