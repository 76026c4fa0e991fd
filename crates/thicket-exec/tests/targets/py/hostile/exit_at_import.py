"""Ends the interpreter at import."""
import os

os._exit(5)


def target(data):
    pass
