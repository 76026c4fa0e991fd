"""A target that misbehaves on request: hangs, dies, prints megabytes."""
import os
import sys


def target(data):
    if b"HANG" in data:
        while True:
            pass
    if b"DIE" in data:
        os._exit(7)
    if b"SPEAK" in data:
        sys.stdout.write("a line of a target that prints megabytes of output\n" * 100000)
        sys.stdout.flush()
    if b"RAISE" in data:
        raise KeyError("raised on request")
