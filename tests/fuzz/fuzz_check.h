// FUZZ_CHECK: an invariant of a fuzz target. On failure prints the condition
// and aborts, which libFuzzer (and the replay driver's test) reports as a
// crash with the input saved.
#ifndef TRACEHEALTH_TESTS_FUZZ_FUZZ_CHECK_H_
#define TRACEHEALTH_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                               \
  do {                                                                 \
    if (!(cond)) {                                                     \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, \
                   __LINE__, #cond);                                   \
      std::abort();                                                    \
    }                                                                  \
  } while (0)

#endif  // TRACEHEALTH_TESTS_FUZZ_FUZZ_CHECK_H_
