// The lab guest's user-space walk (static):
//
//   lab_chase STRIDE N...
//     for each N, lays N nodes STRIDE bytes apart in one anonymous mapping,
//     each linked to the next in address order (the order the kernel's task
//     list holds threads created one after another), and times passes over
//     them that load two cache lines of each node (its link and a word
//     1,536 bytes further: a task's thread link and its ret_stack), as the
//     fgraph walk does for each thread it visits. Prints
//     "chase n=N stride=STRIDE ns_per_node=X" with the shortest of five
//     timings, each over at least 4 million node visits.
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double Now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: lab_chase STRIDE N...\n");
    return 2;
  }
  const size_t stride = strtoul(argv[1], NULL, 10);
  if (stride < 2048 || stride % 64 != 0) {
    fprintf(stderr, "lab_chase: STRIDE must be a multiple of 64, >= 2048\n");
    return 2;
  }
  for (int a = 2; a < argc; ++a) {
    const size_t n = strtoul(argv[a], NULL, 10);
    if (n < 2) continue;
    char* base = mmap(NULL, n * stride, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
      perror("lab_chase: mmap");
      return 1;
    }
    madvise(base, n * stride, MADV_NOHUGEPAGE);  // as the agent's walk
    for (size_t i = 0; i < n; ++i) {
      char* node = base + i * stride;
      *(char**)node = base + ((i + 1) % n) * stride;
      *(uintptr_t*)(node + 1536) = i;
    }
    size_t visits = n;
    while (visits < 4u * 1000 * 1000) visits += n;
    double best = 1e30;
    uintptr_t sum = 0;
    for (int rep = 0; rep < 5; ++rep) {
      char* p = base;
      const double t0 = Now();
      for (size_t v = 0; v < visits; ++v) {
        sum += *(volatile uintptr_t*)(p + 1536);
        p = *(char* volatile*)p;
      }
      const double t = (Now() - t0) * 1e9 / visits;
      if (t < best) best = t;
    }
    printf("chase n=%zu stride=%zu ns_per_node=%.2f (%lu)\n", n, stride, best,
           (unsigned long)(sum & 1));
    fflush(stdout);
    munmap(base, n * stride);
  }
  return 0;
}
