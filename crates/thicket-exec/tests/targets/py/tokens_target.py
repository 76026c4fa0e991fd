"""A tiny tokenizer and parser for `let NAME = NUMBER ;` and `print NAME ;` statements,
whose parser tests token values with `==`, `in` and kinds with `is` (as esprima does),
for the token-level path condition tests."""
import re

KEYWORD, NAME, NUMBER, PUNCT, EOF = object(), object(), object(), object(), object()


class Token:
    def __init__(self, kind, value, start, end):
        self.kind, self.value, self.start, self.end = kind, value, start, end


class Lexer:
    def __init__(self, text):
        self.text, self.pos = text, 0

    def next_token(self):
        m = re.compile(r"\s*").match(self.text, self.pos)
        self.pos = m.end()
        if self.pos >= len(self.text):
            return Token(EOF, "", self.pos, self.pos)
        m = re.compile(r"[a-z]+|[0-9]+|\S").match(self.text, self.pos)
        word = m.group()
        kind = KEYWORD if word in ("let", "print") else NAME if word.isalpha() else NUMBER if word.isdigit() else PUNCT
        self.pos = m.end()
        return Token(kind, word, m.start(), m.end())


def target(text):
    lexer = Lexer(text)
    tok = lexer.next_token()
    while tok.kind is not EOF:
        if tok.value == "let":
            name = lexer.next_token()
            if name.kind is not NAME:
                raise SyntaxError("name expected")
            if lexer.next_token().value != "=":
                raise SyntaxError("= expected")
            lexer.next_token()
        elif tok.value in ("print", "echo"):
            lexer.next_token()
        else:
            raise SyntaxError("statement expected")
        if lexer.next_token().value != ";":
            raise SyntaxError("; expected")
        tok = lexer.next_token()
