"""Python's tomllib as a target whose coverage is a function of the input alone.

`tomllib.loads`, with tomllib's one cache emptied before each input: the runner is one
long-lived process, and `tomllib._re.cached_tz` builds each time-zone offset once per
process, so without this whether an input covers its lines depends on the inputs run
before it.
"""
import tomllib
from tomllib import _re


def target(text):
    _re.cached_tz.cache_clear()
    tomllib.loads(text)
