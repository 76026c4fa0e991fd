"""xml.dom.minidom as a target: parse a document (expatbuilder, pure Python, builds the
DOM) and write it out again."""
import xml.dom.minidom


def target(text):
    xml.dom.minidom.parseString(text).toxml()
