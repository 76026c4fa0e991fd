// The CODEINE running example in C: an evaluator for specs/expr.fan (x=1, y=2, z=3,
// division by zero gives 0) reading the expression on stdin. `paren_subtraction_in_product`
// runs only when the right operand of *, / or % is a parenthesised subtraction, as in
// eval/targets/expr_eval.py. Build for per-function coverage (see
// crates/thicket-exec/src/sancov_rt.c):
//   cc -c -O1 crates/thicket-exec/src/sancov_rt.c -o sancov_rt.o
//   clang -fsanitize-coverage=func,trace-pc-guard -O1 eval/targets/expr_eval.c sancov_rt.o -o expr_eval
#include <stdio.h>

static const char *p;

struct value {
  long v;
  int paren_sub;  // a parenthesised sum whose last operator is '-'
};

static struct value add_expr(void);

// A side effect, so that the compiler cannot drop the call as unused.
volatile long reached;

__attribute__((noinline)) long paren_subtraction_in_product(char op, long a, long b) {
  reached += op == '*' ? a * b : a + b;
  return reached;
}

__attribute__((noinline)) static long product(char op, long a, long b) {
  if (op == '*') return a * b;
  if (b == 0) return 0;
  return op == '/' ? a / b : a % b;
}

__attribute__((noinline)) static struct value unary_expr(void) {
  struct value r = {0, 0};
  if ((p[0] == '+' && p[1] == '+') || (p[0] == '-' && p[1] == '-')) {
    char c = p[0];
    p += 2;
    r = unary_expr();
    r.v += c == '+' ? 1 : -1;
    r.paren_sub = 0;
  } else if (*p == '+' || *p == '-') {
    char c = *p++;
    r = unary_expr();
    if (c == '-') r.v = -r.v;
    r.paren_sub = 0;
  } else if (*p == '(') {
    p++;
    r = add_expr();
    if (*p == ')') p++;
  } else if (*p == 'x' || *p == 'y' || *p == 'z') {
    r.v = *p++ - 'x' + 1;
  } else {
    while (*p >= '0' && *p <= '9') r.v = (r.v * 10 + (*p++ - '0')) % 1000003;
  }
  return r;
}

__attribute__((noinline)) static struct value mult_expr(void) {
  struct value r = unary_expr();
  int operands = 1;
  while (*p == '*' || *p == '/' || *p == '%') {
    char op = *p++;
    struct value right = unary_expr();
    if (right.paren_sub) paren_subtraction_in_product(op, r.v, right.v);
    r.v = product(op, r.v, right.v);
    operands++;
  }
  if (operands > 1) r.paren_sub = 0;
  return r;
}

static struct value add_expr(void) {
  struct value r = mult_expr();
  char last = 0;
  while (*p == '+' || *p == '-') {
    last = *p++;
    struct value right = mult_expr();
    r.v = last == '+' ? r.v + right.v : r.v - right.v;
  }
  // Inside parentheses: a subtraction if the last operator was '-' (else keep what a
  // single parenthesised operand said: `((a-b))` is no subtraction at this level).
  r.paren_sub = last == '-';
  return r;
}

int main(void) {
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, stdin);
  buf[n] = 0;
  p = buf;
  struct value r = add_expr();
  return r.v == 12345;
}
