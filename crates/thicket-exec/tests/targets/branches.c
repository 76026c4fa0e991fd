/* A small JSON-ish scanner whose branches depend on the input: every kind of token,
   nesting depth and escape takes its own path. Exits 1 on malformed input. */
#include <stdio.h>
#include <string.h>

static char buf[65536];

int main(int argc, char **argv) {
  FILE *f = argc > 1 ? fopen(argv[1], "rb") : stdin;
  if (!f) return 2;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  int depth = 0, max_depth = 0, strings = 0, numbers = 0, words = 0;
  for (size_t i = 0; i < n; i++) {
    char c = buf[i];
    if (c == '{' || c == '[') {
      depth++;
      if (depth > max_depth) max_depth = depth;
      if (depth > 3) puts("deep");
    } else if (c == '}' || c == ']') {
      if (depth == 0) return 1;
      depth--;
    } else if (c == '"') {
      strings++;
      for (i++; i < n && buf[i] != '"'; i++) {
        if (buf[i] == '\\') {
          i++;
          if (i < n && buf[i] == 'u') i += 4;
        }
      }
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      numbers++;
      while (i + 1 < n && strchr("0123456789.eE+-", buf[i + 1])) i++;
    } else if (c == 't' || c == 'f' || c == 'n') {
      words++;
      while (i + 1 < n && buf[i + 1] >= 'a' && buf[i + 1] <= 'z') i++;
    } else if (c == ',' || c == ':' || c == ' ' || c == '\n' || c == '\t' || c == '\r') {
    } else {
      return 1;
    }
  }
  if (depth != 0) return 1;
  printf("%d %d %d %d %d\n", max_depth, strings, numbers, words, depth);
  return 0;
}
