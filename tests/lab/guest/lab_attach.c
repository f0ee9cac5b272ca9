// The lab guest's attach helper (static, raw syscalls, no libbpf):
//
//   lab_attach KIND FUNC
//     attaches one probe of KIND on the kernel function FUNC, detaches it,
//     attaches it again and detaches again, timing each step with
//     CLOCK_MONOTONIC, and prints
//       "kind=KIND first_ms=A detach_ms=D second_ms=B detach2_ms=E errno=0"
//     or, when the kernel refuses the probe,
//       "kind=KIND first_ms=-1 ... errno=E step=STEP"
//     (E the errno of the refused step, STEP what was refused) and exits 0:
//     a refusal is a result, not a failure of the helper.
//
// KIND is one of
//   function_graph       current_tracer = function_graph, set_ftrace_filter
//                        limited to FUNC (attach: the write of
//                        function_graph; detach: the write of nop)
//   kprobe_multi         BPF_LINK_CREATE, BPF_TRACE_KPROBE_MULTI, entry only
//   kprobe_multi_return  the same with BPF_F_KPROBE_MULTI_RETURN
//   kprobe_session       BPF_LINK_CREATE, BPF_TRACE_KPROBE_SESSION
//   fprobe               an "f:" event in dynamic_events, entry
//   fprobe_return        an "f:" event on FUNC%return
//   kretprobe            an "r:" event in kprobe_events
//   second:KIND          KIND as a second fgraph user: function_graph is
//                        made the top-level tracer first (filter FUNC,
//                        untimed: the first user, whose walk hands every
//                        thread a shadow stack), KIND is timed as above and
//                        function_graph is turned off at the end;
//                        second:function_graph goes to the tracefs instance
//                        "labsecond" (created and removed here)
// For the BPF kinds the program is "r0 = 0; exit" (BPF_PROG_TYPE_KPROBE,
// loaded once); attach is the BPF_LINK_CREATE syscall, detach the close()
// of the link. For the event kinds the event is created once and the
// attach is the write of 1 to its enable file, the detach the write of 0;
// the event is removed at the end.
//
// The first attach pays for whatever the kernel does once per thread (an
// fgraph user's shadow-stack walk allocates a stack for every thread that
// has none); the second finds that done. run_matrix.sh compares the two
// over N idle threads (lab_threads hold N).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lab_tracefs.h"

// enum bpf_attach_type in include/uapi/linux/bpf.h: BPF_TRACE_KPROBE_MULTI
// is 42 (5.18); BPF_TRACE_KPROBE_SESSION (6.10) is 56, after
// BPF_NETKIT_PEER (55). Build hosts with older headers lack the latter.
enum {
  kAttachKprobeMulti = 42,
  kAttachKprobeSession = 56,
};
#ifndef BPF_F_KPROBE_MULTI_RETURN
#define BPF_F_KPROBE_MULTI_RETURN (1U << 0)
#endif

_Static_assert((int)BPF_TRACE_KPROBE_MULTI == (int)kAttachKprobeMulti,
               "BPF_TRACE_KPROBE_MULTI differs from the kernel's uapi");

static const char kGroup[] = "labattach";

static double NowMs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static long Bpf(int cmd, union bpf_attr* attr) {
  return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

// The result of one kind: the four times, or the errno and the step refused.
struct Result {
  double ms[4];  // first attach, detach, second attach, detach
  int err;
  const char* step;
};

static int LoadProgram(int attach_type, struct Result* r) {
  // r0 = 0; exit
  struct bpf_insn insns[2];
  memset(insns, 0, sizeof insns);
  insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;
  insns[0].dst_reg = BPF_REG_0;
  insns[1].code = BPF_JMP | BPF_EXIT;
  union bpf_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.prog_type = BPF_PROG_TYPE_KPROBE;
  attr.expected_attach_type = attach_type;
  attr.insns = (uint64_t)(uintptr_t)insns;
  attr.insn_cnt = 2;
  attr.license = (uint64_t)(uintptr_t) "GPL";
  int fd = (int)Bpf(BPF_PROG_LOAD, &attr);
  if (fd < 0) {
    r->err = errno;
    r->step = "prog_load";
  }
  return fd;
}

static void BpfKind(int attach_type, uint32_t flags, const char* func,
                    struct Result* r) {
  int prog = LoadProgram(attach_type, r);
  if (prog < 0) return;
  const char* syms[1] = {func};
  for (int i = 0; i < 2; ++i) {
    union bpf_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.link_create.prog_fd = prog;
    attr.link_create.attach_type = attach_type;
    attr.link_create.kprobe_multi.flags = flags;
    attr.link_create.kprobe_multi.cnt = 1;
    attr.link_create.kprobe_multi.syms = (uint64_t)(uintptr_t)syms;
    double a = NowMs();
    int link = (int)Bpf(BPF_LINK_CREATE, &attr);
    double b = NowMs();
    if (link < 0) {
      r->err = errno;
      r->step = "link_create";
      break;
    }
    close(link);
    double c = NowMs();
    r->ms[2 * i] = b - a;
    r->ms[2 * i + 1] = c - b;
  }
  close(prog);
}

// function_graph in DIR ("" for the top level, or "instances/NAME/").
static void FunctionGraph(const char* dir, const char* func, struct Result* r) {
  char tracer[160], filter[160];
  snprintf(tracer, sizeof tracer, "%scurrent_tracer", dir);
  snprintf(filter, sizeof filter, "%sset_ftrace_filter", dir);
  if (TracefsWrite(tracer, "nop", O_TRUNC, NULL) != 0 ||
      TracefsWrite(filter, func, O_TRUNC, NULL) != 0) {
    r->err = errno;
    r->step = "set_ftrace_filter";
    return;
  }
  for (int i = 0; i < 2 && r->err == 0; ++i) {
    if (TracefsWrite(tracer, "function_graph", O_TRUNC, &r->ms[2 * i]) != 0) {
      r->err = errno;
      r->step = "current_tracer";
    } else if (TracefsWrite(tracer, "nop", O_TRUNC, &r->ms[2 * i + 1]) != 0) {
      r->err = errno;
      r->step = "nop";
    }
  }
  TracefsWrite(tracer, "nop", O_TRUNC, NULL);
  TracefsWrite(filter, "", O_TRUNC, NULL);
}

static const char kSecondInstance[] = "/sys/kernel/tracing/instances/labsecond";

// An event in FILE ("dynamic_events" or "kprobe_events") defined by the
// line "PREFIX:labattach/EVENT FUNC SUFFIX", enabled and disabled twice.
static void EventKind(const char* file, char prefix, const char* event,
                      const char* func, const char* suffix, struct Result* r) {
  char line[256], enable[256], remove[128];
  snprintf(line, sizeof line, "%c:%s/%s %s%s", prefix, kGroup, event, func,
           suffix);
  snprintf(enable, sizeof enable, "events/%s/%s/enable", kGroup, event);
  snprintf(remove, sizeof remove, "-:%s/%s", kGroup, event);
  if (TracefsWrite(file, line, O_APPEND, NULL) != 0) {
    r->err = errno;
    r->step = "define";
    return;
  }
  for (int i = 0; i < 2 && r->err == 0; ++i) {
    if (TracefsWrite(enable, "1", O_TRUNC, &r->ms[2 * i]) != 0) {
      r->err = errno;
      r->step = "enable";
    } else if (TracefsWrite(enable, "0", O_TRUNC, &r->ms[2 * i + 1]) != 0) {
      r->err = errno;
      r->step = "disable";
    }
  }
  TracefsWrite(enable, "0", O_TRUNC, NULL);
  TracefsWrite(file, remove, O_APPEND, NULL);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: lab_attach KIND FUNC\n");
    return 2;
  }
  const char* kind = argv[1];
  const char* func = argv[2];
  // Kernels before 5.11 charge BPF memory to RLIMIT_MEMLOCK.
  struct rlimit inf = {RLIM_INFINITY, RLIM_INFINITY};
  setrlimit(RLIMIT_MEMLOCK, &inf);
  struct Result r;
  memset(&r, 0, sizeof r);
  const int second = strncmp(kind, "second:", 7) == 0;
  const char* what = second ? kind + 7 : kind;
  if (second) {
    // The first fgraph user, untimed; it stays on while WHAT attaches.
    if (TracefsWrite("set_ftrace_filter", func, O_TRUNC, NULL) != 0 ||
        TracefsWrite("current_tracer", "function_graph", O_TRUNC, NULL) != 0) {
      r.err = errno;
      r.step = "first_user";
    }
  }
  if (r.err != 0) {
    // The first user could not be set up: nothing to time.
  } else if (second && strcmp(what, "function_graph") == 0) {
    if (mkdir(kSecondInstance, 0755) != 0 && errno != EEXIST) {
      r.err = errno;
      r.step = "instance";
    } else {
      FunctionGraph("instances/labsecond/", func, &r);
      rmdir(kSecondInstance);
    }
  } else if (strcmp(what, "function_graph") == 0) {
    FunctionGraph("", func, &r);
  } else if (strcmp(what, "kprobe_multi") == 0) {
    BpfKind(kAttachKprobeMulti, 0, func, &r);
  } else if (strcmp(what, "kprobe_multi_return") == 0) {
    BpfKind(kAttachKprobeMulti, BPF_F_KPROBE_MULTI_RETURN, func, &r);
  } else if (strcmp(what, "kprobe_session") == 0) {
    BpfKind(kAttachKprobeSession, 0, func, &r);
  } else if (strcmp(what, "fprobe") == 0) {
    EventKind("dynamic_events", 'f', "fp", func, "", &r);
  } else if (strcmp(what, "fprobe_return") == 0) {
    EventKind("dynamic_events", 'f', "fpr", func, "%return", &r);
  } else if (strcmp(what, "kretprobe") == 0) {
    EventKind("kprobe_events", 'r', "kr", func, "", &r);
  } else {
    fprintf(stderr, "lab_attach: unknown kind %s\n", kind);
    return 2;
  }
  if (second) {
    TracefsWrite("current_tracer", "nop", O_TRUNC, NULL);
    TracefsWrite("set_ftrace_filter", "", O_TRUNC, NULL);
  }
  if (r.err != 0) {
    printf(
        "kind=%s first_ms=-1 detach_ms=-1 second_ms=-1 detach2_ms=-1 "
        "errno=%d step=%s\n",
        kind, r.err, r.step);
  } else {
    printf(
        "kind=%s first_ms=%.3f detach_ms=%.3f second_ms=%.3f "
        "detach2_ms=%.3f errno=0\n",
        kind, r.ms[0], r.ms[1], r.ms[2], r.ms[3]);
  }
  return 0;
}
