// Per-location coverage of C functions (tests/sancov.rs): which functions run depends on
// the input's first byte; `deep` only for "(-" inside a product, the running example.
#include <stdio.h>
#include <string.h>

__attribute__((noinline)) static int deep(const char *s) { return (int)strlen(s); }
__attribute__((noinline)) int product(const char *s) {
  return strstr(s, "(-") ? deep(s) : 1;
}
__attribute__((noinline)) int sum(const char *s) { return s[0] == '+'; }

int main(void) {
  char buf[256];
  size_t n = fread(buf, 1, sizeof buf - 1, stdin);
  buf[n] = 0;
  if (buf[0] == '*') return product(buf) > 5;
  if (buf[0] == '+') return sum(buf) == 0;
  return 0;
}
