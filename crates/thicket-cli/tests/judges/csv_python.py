"""Reads CSV files with Python's csv module (the `excel` dialect, files opened with
newline="" as its documentation asks), for the bundled-spec tests of thicket-cli and
thicket-solve: Python is where many CSV files end up, and it reads some lines otherwise
than the Rust csv crate (an empty line is a record of no fields to Python, nothing to
the csv crate).

Reads one path a line on stdin; prints, for each in order, one line: its records as a
JSON array of arrays of strings, or {"error": MESSAGE} if Python cannot read it.
"""
import csv
import json
import sys

for line in sys.stdin:
    path = line.rstrip("\n")
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
        print(json.dumps(rows))
    except (csv.Error, UnicodeDecodeError) as e:
        print(json.dumps({"error": str(e)}))
