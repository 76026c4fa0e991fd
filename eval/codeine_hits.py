"""How many inputs reach a function: `python3 eval/codeine_hits.py FILE.py:ENTRY FUNCTION INPUT...`
(folders stand for their files). Calls ENTRY on each input (as text) and counts the
inputs during which FUNCTION (a module-level function of FILE.py) ran; exceptions of
ENTRY are ignored. Prints `hits total`."""
import importlib.util
import os
import sys


def main():
    target, function, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
    path, _, entry = target.rpartition(":")
    spec = importlib.util.spec_from_file_location("codeine_subject", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    hit = [False]
    original = getattr(module, function)

    def wrapper(*a, **k):
        hit[0] = True
        return original(*a, **k)

    setattr(module, function, wrapper)
    files = []
    for p in paths:
        if os.path.isdir(p):
            files.extend(os.path.join(p, f) for f in sorted(os.listdir(p)) if not f.startswith("."))
        else:
            files.append(p)
    hits = 0
    for f in files:
        hit[0] = False
        try:
            getattr(module, entry)(open(f, "rb").read().decode("utf-8", "replace"))
        except Exception:  # noqa: BLE001 - a failing input may still have reached it
            pass
        hits += hit[0]
    print(hits, len(files))


main()
