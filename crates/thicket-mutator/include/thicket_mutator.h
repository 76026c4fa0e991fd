/* thicket's grammar mutations for C and C++ fuzzing harnesses.
 *
 * Link target/release/libthicket_mutator.a into a libFuzzer harness and name the hooks
 * so the linker takes them out of the archive (libFuzzer refers to them weakly):
 *
 *   clang -fsanitize=fuzzer harness.c -Wl,-u,LLVMFuzzerCustomMutator \
 *       -Wl,-u,LLVMFuzzerCustomCrossOver target/release/libthicket_mutator.a \
 *       -lpthread -ldl -lm
 *   THICKET_SPEC=specs/json.fan ./a.out corpus/
 *
 * Settings come from the environment at the first call: THICKET_SPEC (required),
 * THICKET_START, THICKET_SEED, THICKET_VALID_ONLY=1, THICKET_MAX_DEPTH. A harness never
 * needs to call these functions itself; they are declared here for reference and for
 * harnesses that want to call them from their own LLVMFuzzerCustomMutator.
 *
 * For AFL++, load target/release/libthicket_mutator.so with AFL_CUSTOM_MUTATOR_LIBRARY
 * instead (the afl_custom_* functions below are what AFL++ calls).
 */
#ifndef THICKET_MUTATOR_H
#define THICKET_MUTATOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libFuzzer: mutates the `size` bytes at `data` in place (room for `max_size`), as a
 * function of the input and `seed`; returns the new size (at most `max_size`). */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed);

/* libFuzzer: writes a child of the two inputs to `out` (a subtree of the first replaced
 * by one of the second); returns its size (at most `max_out_size`). */
size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1,
                                 const uint8_t *data2, size_t size2, uint8_t *out,
                                 size_t max_out_size, unsigned int seed);

/* AFL++ custom mutator API (docs/custom_mutators.md of AFL++). */
void *afl_custom_init(void *afl, unsigned int seed);
size_t afl_custom_fuzz(void *data, const uint8_t *buf, size_t buf_size,
                       const uint8_t **out_buf, const uint8_t *add_buf,
                       size_t add_buf_size, size_t max_size);
const char *afl_custom_describe(void *data, size_t max_description_len);
void afl_custom_deinit(void *data);

#ifdef __cplusplus
}
#endif

#endif
