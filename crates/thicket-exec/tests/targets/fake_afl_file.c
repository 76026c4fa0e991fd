/* A stand-in for a classic AFL++ instrumented target reading its input from a file
   (@@), for tests that need no afl-cc: it sends the classic hello (no options, so the
   default 64 KiB map), and per input forks a child that reads the file named by argv[1]
   and marks map entry 1 + its length (0 if it cannot read it). Built with plain cc. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAP 65536

static void put(uint32_t v) { if (write(199, &v, 4) != 4) _exit(1); }
static uint32_t get(void) { uint32_t v; if (read(198, &v, 4) != 4) _exit(0); return v; }

int main(int argc, char **argv) {
  char *map_id = getenv("__AFL_SHM_ID");
  if (!map_id || argc < 2) return 3;
  uint8_t *map = shmat(atoi(map_id), 0, 0);
  if (map == (void *)-1) return 4;
  put(0);
  for (;;) {
    get();
    pid_t pid = fork();
    if (pid == 0) {
      FILE *f = fopen(argv[1], "rb");
      if (!f) { map[0]++; _exit(0); }
      static char buf[MAP];
      size_t n = fread(buf, 1, sizeof buf, f);
      fclose(f);
      if (n < MAP - 1) map[1 + n]++;
      _exit(0);
    }
    put((uint32_t)pid);
    int status;
    waitpid(pid, &status, 0);
    put((uint32_t)status);
  }
}
