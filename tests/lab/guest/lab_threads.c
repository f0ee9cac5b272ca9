// The lab guest's helper (static, no libraries in the initramfs):
//
//   lab_threads hold N READY_FILE
//     starts N idle threads (PTHREAD_STACK_MIN stacks, no guard page, each
//     blocked in pause()), writes "N\n" to READY_FILE once all run, and
//     waits for a signal (SIGTERM ends the process and its threads).
//   lab_threads enable FUNC
//     limits set_ftrace_filter to FUNC, writes function_graph to
//     current_tracer and times that write() with CLOCK_MONOTONIC, writes it
//     again after nop (every thread then has its shadow stack: the walk is
//     one pass), restores nop and an empty filter, and prints
//     "enable first_ms=F second_ms=S".
//
// The timing is independent of tracehealth: it is the enable as a user of
// tracefs sees it, measured around the one write() that runs
// start_graph_tracing().
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lab_tracefs.h"

static void* Idle(void* arg) {
  (void)arg;
  for (;;) pause();
  return NULL;
}

static int Hold(long n, const char* ready_file) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  // Small stacks and no guard page: 32k threads in a few hundred MiB and one
  // mapping each (vm.max_map_count).
  pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN);
  pthread_attr_setguardsize(&attr, 0);
  for (long i = 0; i < n; ++i) {
    pthread_t t;
    int rc = pthread_create(&t, &attr, Idle, NULL);
    if (rc != 0) {
      fprintf(stderr, "lab_threads: thread %ld of %ld: %s\n", i, n,
              strerror(rc));
      return 1;
    }
  }
  FILE* f = fopen(ready_file, "w");
  if (f == NULL || fprintf(f, "%ld\n", n) < 0 || fclose(f) != 0) {
    fprintf(stderr, "lab_threads: %s: %s\n", ready_file, strerror(errno));
    return 1;
  }
  for (;;) pause();
}

static int WriteFile(const char* name, const char* value, double* ms) {
  return TracefsWrite(name, value, O_TRUNC, ms);
}

static int Enable(const char* func) {
  double first = 0, second = 0;
  int rc = 0;
  if (WriteFile("current_tracer", "nop", NULL) != 0 ||
      WriteFile("set_ftrace_filter", func, NULL) != 0 ||
      WriteFile("current_tracer", "function_graph", &first) != 0 ||
      WriteFile("current_tracer", "nop", NULL) != 0 ||
      WriteFile("current_tracer", "function_graph", &second) != 0) {
    rc = 1;
  }
  // Restore whatever happened above.
  WriteFile("current_tracer", "nop", NULL);
  WriteFile("set_ftrace_filter", "", NULL);
  if (rc == 0) printf("enable first_ms=%.3f second_ms=%.3f\n", first, second);
  return rc;
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "hold") == 0) {
    char* end;
    long n = strtol(argv[2], &end, 10);
    if (*end != '\0' || n < 0) {
      fprintf(stderr, "lab_threads: bad thread count %s\n", argv[2]);
      return 2;
    }
    return Hold(n, argv[3]);
  }
  if (argc == 3 && strcmp(argv[1], "enable") == 0) return Enable(argv[2]);
  fprintf(stderr,
          "usage: lab_threads hold N READY_FILE | lab_threads enable FUNC\n");
  return 2;
}
