// tracefs writes for the lab guest's helpers (lab_threads.c, lab_attach.c).
#ifndef TRACEHEALTH_TESTS_LAB_GUEST_LAB_TRACEFS_H_
#define TRACEHEALTH_TESTS_LAB_GUEST_LAB_TRACEFS_H_

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// TracefsWrite(NAME, VALUE, MODE, MS): opens /sys/kernel/tracing/NAME
// write-only with MODE (O_TRUNC or O_APPEND), writes VALUE in one write()
// and, when MS is not NULL, stores how long that write() took in
// milliseconds (CLOCK_MONOTONIC). Returns 0, or -1 with errno set and the
// reason on stderr.
static inline int TracefsWrite(const char* name, const char* value, int mode,
                               double* ms) {
  char path[320];
  snprintf(path, sizeof path, "/sys/kernel/tracing/%s", name);
  int fd = open(path, O_WRONLY | mode);
  if (fd < 0) {
    int err = errno;
    fprintf(stderr, "lab: open %s: %s\n", path, strerror(err));
    errno = err;
    return -1;
  }
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  ssize_t w = write(fd, value, strlen(value));
  clock_gettime(CLOCK_MONOTONIC, &b);
  int err = errno;
  close(fd);
  if (w < 0) {
    fprintf(stderr, "lab: write %s to %s: %s\n", value, path, strerror(err));
    errno = err;
    return -1;
  }
  if (ms != NULL) {
    *ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
  }
  return 0;
}

#endif  // TRACEHEALTH_TESTS_LAB_GUEST_LAB_TRACEFS_H_
