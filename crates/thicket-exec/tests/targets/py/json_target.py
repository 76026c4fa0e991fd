"""Python's json module as a target: its pure-Python decoder (the C accelerator would
hide the code from coverage)."""
import json.decoder
import json.scanner

_decoder = json.JSONDecoder()
_decoder.parse_string = json.decoder.py_scanstring
_decoder.scan_once = json.scanner.py_make_scanner(_decoder)


def target(text):
    _decoder.decode(text)
