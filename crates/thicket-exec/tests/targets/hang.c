/* Loops forever on inputs containing "HANG", prints megabytes on "SPEAK"; else exits 0. */
#include <stdio.h>
#include <string.h>

static char buf[4096];

int main(int argc, char **argv) {
  FILE *f = argc > 1 ? fopen(argv[1], "rb") : stdin;
  if (!f) return 2;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  if (strstr(buf, "HANG")) {
    volatile unsigned long spin = 0;
    for (;;) spin++;
  }
  if (strstr(buf, "SPEAK")) {
    for (int i = 0; i < 100000; i++)
      printf("line %06d of a target that prints megabytes of output\n", i);
    fprintf(stderr, "done speaking\n");
  }
  return 0;
}
