// The lab guest's helper (static, no libraries in the initramfs):
//
//   lab_threads hold N READY_FILE [PER_PROCESS]
//     starts N idle threads (PTHREAD_STACK_MIN stacks, no guard page, each
//     blocked in pause()), writes "N\n" to READY_FILE once all run, and
//     waits for a signal (SIGTERM ends the process and its threads). With
//     PER_PROCESS, the N threads are spread over ceil(N / PER_PROCESS)
//     child processes of PER_PROCESS tasks each (the process's own thread
//     and PER_PROCESS - 1 more; the last process the rest); SIGTERM ends
//     them all.
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lab_tracefs.h"

static void* Idle(void* arg) {
  (void)arg;
  for (;;) pause();
  return NULL;
}

static int StartThreads(long n) {
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
  return 0;
}

static int WriteReady(long n, const char* ready_file) {
  FILE* f = fopen(ready_file, "w");
  if (f == NULL || fprintf(f, "%ld\n", n) < 0 || fclose(f) != 0) {
    fprintf(stderr, "lab_threads: %s: %s\n", ready_file, strerror(errno));
    return 1;
  }
  return 0;
}

static int Hold(long n, const char* ready_file) {
  if (StartThreads(n) != 0 || WriteReady(n, ready_file) != 0) return 1;
  for (;;) pause();
}

static volatile sig_atomic_t stopping = 0;
static void OnTerm(int sig) { (void)sig; stopping = 1; }

// Children of PER tasks each; each child reports through a pipe once its
// threads run. The parent ends them all on SIGTERM.
static int HoldProcesses(long n, long per, const char* ready_file) {
  int fds[2];
  // A process group of its own: kill(0, ...) below reaches the children
  // and never the shell that started it.
  if (setpgid(0, 0) != 0 || pipe(fds) != 0) return 1;
  signal(SIGTERM, OnTerm);
  long children = 0;
  for (long left = n; left > 0; left -= per) {
    const long tasks = left < per ? left : per;
    pid_t pid = fork();
    if (pid < 0) {
      fprintf(stderr, "lab_threads: fork %ld: %s\n", children, strerror(errno));
      kill(0, SIGTERM);
      return 1;
    }
    if (pid == 0) {
      signal(SIGTERM, SIG_DFL);
      close(fds[0]);
      if (StartThreads(tasks - 1) != 0) _exit(1);
      char c = 1;
      if (write(fds[1], &c, 1) != 1) _exit(1);
      for (;;) pause();
    }
    ++children;
  }
  close(fds[1]);
  for (long got = 0; got < children;) {
    char c;
    ssize_t r = read(fds[0], &c, 1);
    if (r == 1) { ++got; continue; }
    if (r < 0 && errno == EINTR && !stopping) continue;
    fprintf(stderr, "lab_threads: %ld of %ld processes ready\n", got, children);
    signal(SIGTERM, SIG_IGN);
    kill(0, SIGTERM);
    return 1;
  }
  if (WriteReady(n, ready_file) != 0) return 1;
  // SIGTERM blocked between the test and the wait: one that arrives after
  // the test is delivered inside sigsuspend() instead of being lost before
  // a pause() that would then wait for ever.
  sigset_t term, old;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigprocmask(SIG_BLOCK, &term, &old);
  while (!stopping) sigsuspend(&old);
  sigprocmask(SIG_SETMASK, &old, NULL);
  signal(SIGTERM, SIG_IGN);
  kill(0, SIGTERM);
  while (wait(NULL) > 0) {}
  return 0;
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
  if ((argc == 4 || argc == 5) && strcmp(argv[1], "hold") == 0) {
    char* end;
    long n = strtol(argv[2], &end, 10);
    if (*end != '\0' || n < 0) {
      fprintf(stderr, "lab_threads: bad thread count %s\n", argv[2]);
      return 2;
    }
    if (argc == 4) return Hold(n, argv[3]);
    long per = strtol(argv[4], &end, 10);
    if (*end != '\0' || per < 1) {
      fprintf(stderr, "lab_threads: bad tasks per process %s\n", argv[4]);
      return 2;
    }
    return HoldProcesses(n, per, argv[3]);
  }
  if (argc == 3 && strcmp(argv[1], "enable") == 0) return Enable(argv[2]);
  fprintf(stderr,
          "usage: lab_threads hold N READY_FILE [PER_PROCESS] | "
          "lab_threads enable FUNC\n");
  return 2;
}
