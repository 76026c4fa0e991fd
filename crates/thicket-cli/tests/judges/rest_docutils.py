"""Judges reST documents with Docutils, the reference reST parser, as ISLa's rest
subject does (render_rst in isla_formalizations/rest.py), for the bundled-spec tests of
thicket-cli and thicket-solve.

Reads lines `PATH<TAB>TITLES<TAB>ITEMS` on stdin: a document, and how many section titles
and enumerated-list items its derivation tree holds. A document passes when Docutils
reports no warning or error (level 2 and up: short title underlines, duplicate or
unknown link targets, lists ending without a blank line, ...) and reads as many titles
(title or subtitle nodes) and list items as the tree says were written (a title whose
underline Docutils does not accept, or a list whose numbers do not follow on, is read
as a paragraph, silently). Prints one line per failing document; exits 1 if any.
Exits 3 if Docutils is not installed.
"""
import io
import sys

try:
    from docutils.core import publish_doctree
except ImportError:
    print("docutils is not installed (pip install docutils)")
    sys.exit(3)


def nodes(doc):
    # Node.findall since Docutils 0.18; traverse before.
    return doc.findall() if hasattr(doc, "findall") else doc.traverse()


def judge(text, titles, items):
    messages = io.StringIO()
    doc = publish_doctree(
        text,
        settings_overrides={
            "input_encoding": "unicode",
            "report_level": 2,
            "halt_level": 5,
            "warning_stream": messages,
        },
    )
    problems = []
    if messages.getvalue().strip():
        problems.append(messages.getvalue().strip().replace("\n", " | "))
    read_titles = sum(1 for n in nodes(doc) if n.tagname in ("title", "subtitle"))
    if read_titles != titles:
        problems.append(f"{read_titles} titles read, {titles} written")
    read_items = sum(
        1
        for n in nodes(doc)
        if n.tagname == "list_item" and n.parent.tagname == "enumerated_list"
    )
    if read_items != items:
        problems.append(f"{read_items} list items read, {items} written")
    return problems


failed = 0
for line in sys.stdin:
    path, titles, items = line.rstrip("\n").split("\t")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    problems = judge(text, int(titles), int(items))
    if problems:
        failed += 1
        print(f"{path}: {'; '.join(problems)}: {text!r}")
sys.exit(1 if failed else 0)
