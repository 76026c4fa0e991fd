"""An evaluator for the k-path paper's expression grammar (specs/expr.fan): the
running example of CODEINE (Havrikov, Kampmann, Zeller), section 5.

`evaluate(text)` parses and evaluates an expression with x=1, y=2, z=3. The function
`paren_subtraction_in_product` runs only when the right operand of a product (of `*`,
`/` or `%`) is a parenthesised subtraction, `c * (a - b)`: the pattern
`MultExpr (* | / | %) (AddExpr - MultExpr)` of the paper's Fig. 8 (the path
UnaryExpr -> AddExpr -> "-" through the product's right operand). A division or
remainder by zero gives 0, so that every input of the grammar evaluates.
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
        """Returns (value, the additive operators in order)."""
        value, _ = self.mult_expr()
        kinds = []
        # After an operand a sign is binary (`x--y` is x - -y).
        while self.peek() in ("+", "-"):
            op = self.peek()
            self.pos += 1
            right, _ = self.mult_expr()
            kinds.append(op)
            value = value + right if op == "+" else value - right
        return value, kinds

    def mult_expr(self):
        value, sub = self.unary_expr()
        operands = [(value, sub)]
        while self.peek() in ("*", "/", "%"):
            op = self.peek()
            self.pos += 1
            right, rsub = self.unary_expr()
            if rsub:
                paren_subtraction_in_product(op, value, right)
            operands.append((right, rsub))
            value = product(op, value, right)
        # A product is no parenthesised subtraction itself.
        return value, sub if len(operands) == 1 else False

    def unary_expr(self):
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
            value, kinds = self.add_expr()
            self.expect(")")
            # A parenthesised sum whose last operator is a subtraction: (a - b).
            return value, bool(kinds) and kinds[-1] == "-"
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
    if b == 0:  # what is reached should depend on structure, not on arithmetic luck
        return 0
    if op == "/":
        return a // b
    return a % b


def paren_subtraction_in_product(op, left, right):
    """The target of the running example."""
    return (op, left, right)


def evaluate(text):
    parser = Parser(text)
    value, _ = parser.add_expr()
    if parser.pos != len(text):
        raise SyntaxError(f"trailing text at {parser.pos}")
    return value
