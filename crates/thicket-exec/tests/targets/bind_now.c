/* Exits 0 when its dynamic symbols are bound at its start (LD_BIND_NOW set, not empty),
   5 when they are bound lazily, on the first call of each. */
#include <stdlib.h>

int main(void) {
  const char *now = getenv("LD_BIND_NOW");
  return now && *now ? 0 : 5;
}
