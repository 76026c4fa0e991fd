/* A target that leaves a daemon behind on every run: a setsid() grandchild that sleeps
 * for the number of seconds given in the input (outside the process group a timeout
 * kills, and re-parented away from the forkserver). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  char buf[64] = {0};
  FILE *f = argc > 1 ? fopen(argv[1], "r") : stdin;
  if (!f) return 1;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  if (fork() == 0) {
    setsid();
    if (fork() == 0) {
      execlp("sleep", "sleep", buf, (char *)0);
      _exit(127);
    }
    _exit(0);
  }
  return 0;
}
