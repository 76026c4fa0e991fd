/* Crashes (SIGSEGV) on inputs starting with "CRASH", aborts on "ABORT"; else exits 0.
   Reads the file named by its first argument, or stdin. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char buf[4096];

int main(int argc, char **argv) {
  FILE *f = argc > 1 ? fopen(argv[1], "rb") : stdin;
  if (!f) return 2;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  if (strncmp(buf, "CRASH", 5) == 0) {
    volatile int *p = (int *)0;
    *p = 1;
  }
  if (strncmp(buf, "ABORT", 5) == 0) abort();
  return 0;
}
