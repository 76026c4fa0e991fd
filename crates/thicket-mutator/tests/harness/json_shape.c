/* A libFuzzer harness whose branches follow the shape of JSON text: nesting depth,
   token kinds and escapes each take their own path. Never fails. */
#include <stddef.h>
#include <stdint.h>

/* The header a harness may include (it must compile cleanly under -Wall -Werror). */
#include "thicket_mutator.h"

static volatile int sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int depth = 0;
  for (size_t i = 0; i < size; i++) {
    uint8_t c = data[i];
    if (c == '[' || c == '{') {
      depth++;
      if (depth == 2) sink += 2;
      if (depth == 3) sink += 3;
      if (depth == 4) sink += 4;
      if (depth == 5) sink += 5;
    } else if (c == ']' || c == '}') {
      depth--;
    } else if (c == '"') {
      sink += 7;
    } else if (c == '\\' && i + 1 < size && data[i + 1] == 'u') {
      sink += 11;
    } else if (c == 't' || c == 'f' || c == 'n') {
      sink += 13;
    } else if (c == '-' || c == 'e' || c == 'E' || c == '.') {
      sink += 17;
    }
  }
  return 0;
}
