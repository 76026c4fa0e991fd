/* Crashes (SIGSEGV) on the number 7 nested three or more brackets deep, as in
   [[[7]]] or {"a":[{"b":7}]}; every other input exits 0. A planted bug at depth for
   minimisation tests: the smallest crashing JSON text is 7 bytes. */
#include <stdio.h>
#include <string.h>

static char buf[1 << 20];

int main(int argc, char **argv) {
  FILE *f = argc > 1 ? fopen(argv[1], "rb") : stdin;
  if (!f) return 2;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  int depth = 0;
  for (size_t i = 0; i < n; i++) {
    char c = buf[i];
    if (c == '{' || c == '[') {
      depth++;
    } else if (c == '}' || c == ']') {
      depth--;
    } else if (c == '"') {
      for (i++; i < n && buf[i] != '"'; i++) {
        if (buf[i] == '\\') i++;
      }
    } else if (c >= '0' && c <= '9') {
      size_t start = i;
      while (i + 1 < n && strchr("0123456789.eE+-", buf[i + 1])) i++;
      if (depth >= 3 && i == start && c == '7') {
        volatile int *null = 0;
        *null = 7;
      }
    }
  }
  return 0;
}
