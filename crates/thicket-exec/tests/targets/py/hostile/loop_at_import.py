"""Loops forever at import."""
while True:
    pass


def target(data):
    pass
