"""Python's csv module as a target: dialect sniffing, header detection and DictReader
(the Python parts of csv)."""
import csv
import io


def target(text):
    try:
        dialect = csv.Sniffer().sniff(text)
    except csv.Error:
        dialect = csv.excel
    rows = list(csv.DictReader(io.StringIO(text), dialect=dialect))
    if text:
        try:
            csv.Sniffer().has_header(text)
        except csv.Error:
            pass
    return rows
