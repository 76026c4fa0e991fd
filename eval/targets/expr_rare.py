"""The running example's evaluator (eval/targets/expr_eval.py) with a rare target:
`identifier_minus_in_product` runs only when the right operand of a product (of `*`,
`/` or `%`) is a parenthesised subtraction of two operands whose first is a bare
identifier, `a * (x - b)`. Random inputs of specs/expr.fan (seeds 1-3) reach it in
about 1 % of cases, so a thousand of them hold a handful of covering inputs: what a
tree learned from them says needs checking against the program.
"""

VARIABLES = {"x": 1, "y": 2, "z": 3}


class Parser:
    def __init__(self, text):
        self.text = text
        self.pos = 0

    def peek(self, n=1):
        return self.text[self.pos:self.pos + n]

    def expect(self, s):
        if self.peek(len(s)) != s:
            raise SyntaxError(f"expected {s!r} at {self.pos}")
        self.pos += len(s)

    def add_expr(self):
        """Returns (value, additive operators in order, whether the first operand is a
        bare identifier)."""
        start = self.pos
        value = self.mult_expr()
        bare = self.pos - start == 1 and self.text[start] in VARIABLES
        kinds = []
        while self.peek() in ("+", "-"):
            op = self.peek()
            self.pos += 1
            right = self.mult_expr()
            kinds.append(op)
            value = value + right if op == "+" else value - right
        return value, kinds, bare

    def mult_expr(self):
        value, _ = self.unary_expr()
        while self.peek() in ("*", "/", "%"):
            op = self.peek()
            self.pos += 1
            right, identifier_minus = self.unary_expr()
            if identifier_minus:
                identifier_minus_in_product(op, value, right)
            value = product(op, value, right)
        return value

    def unary_expr(self):
        """Returns (value, whether it is `(identifier - operand)`)."""
        c = self.peek()
        two = self.peek(2)
        if two in ("++", "--"):
            self.pos += 2
            value, _ = self.unary_expr()
            return (value + 1 if two == "++" else value - 1), False
        if c in ("+", "-"):
            self.pos += 1
            value, _ = self.unary_expr()
            return (value if c == "+" else -value), False
        if c == "(":
            self.pos += 1
            value, kinds, bare = self.add_expr()
            self.expect(")")
            return value, bare and kinds == ["-"]
        if c in VARIABLES:
            self.pos += 1
            return VARIABLES[c], False
        if c.isdigit():
            start = self.pos
            while self.peek().isdigit():
                self.pos += 1
            return int(self.text[start:self.pos]), False
        raise SyntaxError(f"unexpected {c!r} at {self.pos}")


def product(op, a, b):
    if op == "*":
        return a * b
    if b == 0:
        return 0
    if op == "/":
        return a // b
    return a % b


def identifier_minus_in_product(op, left, right):
    """The rare target."""
    return (op, left, right)


def evaluate(text):
    parser = Parser(text)
    value, _, _ = parser.add_expr()
    if parser.pos != len(text):
        raise SyntaxError(f"trailing text at {parser.pos}")
    return value
