// thicket's SanitizerCoverage runtime: names the functions a run of a C program entered,
// for per-location coverage (CODEINE; crates/thicket-exec/src/sancov.rs reads it).
//
// Build the program with function-level guards and link this file, compiled WITHOUT
// coverage instrumentation (it implements the callbacks):
//   cc -c -O1 sancov_rt.c -o sancov_rt.o
//   clang -fsanitize-coverage=func,trace-pc-guard -g -O1 program.c sancov_rt.o -o program
// (a position-independent executable, Debian's default). Then thicket runs it per input
// with THICKET_SANCOV_OUT naming a file: the runtime writes the program's load base (8
// bytes), then, the first time each function is entered, the offset of the call site
// of the guard callback from that base (8 bytes each, written at once, so a crash loses
// nothing). thicket maps the offsets to the program's function symbols (`nm`).
#define _GNU_SOURCE  // dladdr, Dl_info
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

// Lets thicket recognise a program built with this runtime.
__attribute__((used)) const char thicket_sancov_marker[] = "__THICKET_SANCOV_V1";

static int out_fd = -1;
static uintptr_t base;

void __sanitizer_cov_trace_pc_guard_init(uint32_t *start, uint32_t *stop) {
  if (start == stop || *start) {
    return;
  }
  for (uint32_t *g = start; g < stop; g++) {
    *g = 1;
  }
  if (out_fd >= 0) {
    return;
  }
  Dl_info info;
  if (dladdr((void *)&__sanitizer_cov_trace_pc_guard_init, &info) && info.dli_fbase) {
    base = (uintptr_t)info.dli_fbase;
  }
  const char *path = getenv("THICKET_SANCOV_OUT");
  if (path) {
    out_fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (out_fd >= 0) {
      uint64_t b = base;
      if (write(out_fd, &b, sizeof b) != sizeof b) {
        out_fd = -1;
      }
    }
  }
}

void __sanitizer_cov_trace_pc_guard(uint32_t *guard) {
  if (!*guard) {
    return;
  }
  *guard = 0;
  if (out_fd < 0) {
    return;
  }
  uint64_t offset = (uintptr_t)__builtin_return_address(0) - base;
  (void)!write(out_fd, &offset, sizeof offset);
}
