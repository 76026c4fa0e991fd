"""A target that misbehaves towards the runner itself: closes its descriptors, ends the
interpreter, recurses without end, leaves processes behind."""
import os
import sys

# Closing the descriptors the runner was started with must not cut the protocol.
for fd in (3, 4):
    try:
        os.close(fd)
    except OSError:
        pass


def recurse(n):
    return recurse(n + 1) + 1


def target(data):
    if data.startswith(b"EXIT"):
        os._exit(3)
    if data.startswith(b"RECURSE"):
        recurse(0)
    if data.startswith(b"CLOSE"):
        os.close(3)
        os.close(4)
    if data.startswith(b"CUT"):
        os.closerange(3, 1024)
    if data.startswith(b"ORPHAN "):
        # A daemon (out of the process group), then a child that returns normally:
        # neither may answer on the runner's pipe.
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execvp("sleep", ["sleep", data[7:].decode()])
            os._exit(0)
        if os.fork() == 0:
            return 0
    return len(data)
