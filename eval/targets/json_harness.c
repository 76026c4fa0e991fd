/* The harness of eval/fuzz_compare.sh's C subjects: reads the file named by argv[1] and
   parses it with cJSON (-DUSE_CJSON: parse, print, delete) or json-c
   (json_tokener_parse, to_json_string, put). */
#include <stdio.h>
#include <stdlib.h>
#ifdef USE_CJSON
#include "cJSON.h"
#else
#include "json.h"
#endif

int main(int argc, char **argv) {
  FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
  if (!f) return 1;
  static char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
#ifdef USE_CJSON
  cJSON *json = cJSON_Parse(buf);
  if (json) {
    char *text = cJSON_Print(json);
    free(text);
    cJSON_Delete(json);
  }
#else
  struct json_object *obj = json_tokener_parse(buf);
  if (obj) {
    json_object_to_json_string(obj);
    json_object_put(obj);
  }
#endif
  return 0;
}
