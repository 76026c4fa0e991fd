/* A stand-in for an AFL++ >= 4.20 instrumented target (Debian ships 4.04c): it speaks
   the versioned forkserver handshake (hello 0x41464c01, options map size + shared-memory
   test cases + autodictionary, the map size, the dictionary, hello again), reads each
   input from the __AFL_SHM_FUZZ_ID segment and marks one map entry per distinct input
   byte class. Input "CRASH" kills the child with SIGSEGV. Built with plain cc. */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAP 64

static void put(uint32_t v) { if (write(199, &v, 4) != 4) _exit(1); }
static uint32_t get(void) { uint32_t v; if (read(198, &v, 4) != 4) _exit(0); return v; }

int main(void) {
  char *map_id = getenv("__AFL_SHM_ID"), *fuzz_id = getenv("__AFL_SHM_FUZZ_ID");
  if (!map_id || !fuzz_id) return 3;
  uint8_t *map = shmat(atoi(map_id), 0, 0);
  uint8_t *fuzz = shmat(atoi(fuzz_id), 0, 0);
  if (map == (void *)-1 || fuzz == (void *)-1) return 4;
  uint32_t hello = 0x41464c00 + 1;
  put(hello);
  if (get() != (hello ^ 0xffffffff)) return 5;
  put(0x1 | 0x2 | 0x800);
  put(MAP);
  const char dict[] = "\x04true\x05false";
  put(sizeof dict - 1);
  if (write(199, dict, sizeof dict - 1) != sizeof dict - 1) return 6;
  put(hello);
  for (;;) {
    get();
    pid_t pid = fork();
    if (pid == 0) {
      uint32_t len;
      memcpy(&len, fuzz, 4);
      const uint8_t *in = fuzz + 4;
      map[0]++;
      for (uint32_t i = 0; i < len; i++) map[1 + in[i] % (MAP - 1)]++;
      if (len >= 5 && memcmp(in, "CRASH", 5) == 0) raise(SIGSEGV);
      _exit(0);
    }
    put((uint32_t)pid);
    int status;
    waitpid(pid, &status, 0);
    put((uint32_t)status);
  }
}
