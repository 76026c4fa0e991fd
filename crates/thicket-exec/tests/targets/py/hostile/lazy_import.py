"""Imports, on its first call, a module that coverage.py needs long to analyse (a large
source file, written next to this one by the test) but that is quick to import; hangs on
request."""


def target(data):
    import big_module  # noqa: F401 - the lazy import is the point

    if data == b"HANG":
        while True:
            pass
    return big_module.f(len(data))
