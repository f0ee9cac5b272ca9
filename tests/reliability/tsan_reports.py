#!/usr/bin/env python3
"""Sorts ThreadSanitizer reports into system-only and project ones.

Usage: tsan_reports.py LOG_PREFIX
  Reads every LOG_PREFIX.* file (TSAN_OPTIONS=log_path=LOG_PREFIX), prints how
  many reports there are of each kind and every report that involves this
  project's code, and exits 1 if there is one.

A report involves the project when one of its racing accesses is in project
code, or when no access stack names system code (e.g. none could be restored).

Two kinds of project access to a reactor's own memory (the heap block gRPC's
handler got from the service's reactor factory, or memory OnDone frees) count
as gRPC's when the other access is in system code: building a reactor inside
gRPC's call of the service's reactor factory (Callback*Handler<...>::RunHandler
on the stack), and tearing it down in OnDone (...Impl::CallOnDone on the
stack). gRPC reads the reactor on its callback threads before any project code
of a reaction runs (the virtual call loads the vptr) and inside Start*/Finish
(the stream pointer), and orders all of it after the factory and before OnDone
inside libgrpc++, where no annotation of the project's can reach. There is no
exception for a reactor's own code: gRPC may run its reactions concurrently
(OnDone after all others) and orders an operation's reaction after its start;
the ingest reactor states that order for TSan (common/happens_before.h), so a
report between its reactions, or between one and its construction or OnDone, is
a missing annotation or a real race. An access belongs to the first frame of
its stack (inlined frames included: --config=tsan's -g1 debug info describes
them) that is not the TSan runtime, libstdc++ or absl inline code, or
//third_party:tsan_absl_sync (those act on behalf of their caller). That frame
is system code when it lies in a system library (libgrpc*.so, libprotobuf.so,
...), in gRPC's or protobuf's headers under /usr/include, or in
protoc-generated code (tracehealth::v1::, *.pb.*); anything else is project
code.
"""

import collections
import glob
import re
import sys

RUNTIME = re.compile(r"libtsan\.so|libsanitizer")
SYSTEM_MODULE = re.compile(
    r"^lib(grpc|grpc\+\+|gpr|upb|address_sorting|re2|cares|ssl|crypto|z|protobuf|"
    r"absl_[a-z0-9_]+|sqlite3|prometheus-cpp-[a-z]+|civetweb|yaml-cpp|stdc\+\+|c|m|"
    r"gcc_s)\.so[.0-9]*$")
SYSTEM_FUNCTION = re.compile(
    r"^(grpc::|grpc_|gpr_|google::protobuf::|tracehealth::v1::|upb_|"
    r"absl::[a-z0-9_]+::synchronization_internal::)")
ON_BEHALF_OF_CALLER = re.compile(
    r"^((void |bool |int |unsigned long )?(std::|__gnu_cxx::|absl::)|operator |"
    r"\(anonymous namespace\)::(AnnounceLock|AnnounceUnlock|EvalGuarded|"
    r"ReleaseNotification|AcquireNotification)|<null>)")
FRAME = re.compile(r"^\s+#\d+ (.*) (\S+) \((\S+?)\+0x[0-9a-f]+\)$")
SYSTEM_FILE = re.compile(r"^/usr/include/(grpc|grpcpp|grpc\+\+|google/protobuf)/|\.pb\.(h|cc):")
ON_BEHALF_FILE = re.compile(
    r"^(/usr/include/(c\+\+|x86_64-linux-gnu|absl)/|third_party/tsan_absl_sync\.cc:)")
REACTOR_FACTORY = re.compile(
    r"grpc::internal::Callback(Bidi|Unary|ServerStreaming|ClientStreaming)Handler<.*>::RunHandler")
ON_DONE = re.compile(r"grpc::internal::Callback\w+Handler<.*>::ServerCallback\w+Impl::CallOnDone")
FREE = re.compile(r"#0 (operator delete|free)\b")
ACCESS = re.compile(r"^  (Previous )?(atomic )?(read|write|Read|Write|Atomic)")


def frame(line):
    """(function, source file, module) of one stack line, or None."""
    m = FRAME.match(line)
    if not m:
        return None
    return m.group(1), m.group(2), m.group(3)


def owner(stack, on_reactor):
    """('system' | 'project' | 'lifecycle' | 'unknown', function) of one
    access stack; 'lifecycle' is project code building a reactor inside gRPC's
    reactor factory call or tearing it down in OnDone, when the access is to
    the reactor's own memory (`on_reactor`)."""
    frames = [f for f in map(frame, stack) if f and not RUNTIME.search(" ".join(f))]
    for function, source, module in frames:
        if SYSTEM_MODULE.match(module) or SYSTEM_FILE.search(source):
            return "system", function
        if ON_BEHALF_FILE.match(source) or ON_BEHALF_OF_CALLER.match(function):
            continue
        if SYSTEM_FUNCTION.match(function):
            return "system", function
        if on_reactor and any(REACTOR_FACTORY.search(f[0]) or ON_DONE.search(f[0])
                              for f in frames):
            return "lifecycle", function
        return "project", function
    if not frames:  # TSan could not restore the stack (history overflow)
        return "unknown", "?"
    return "system", frames[0][0]


def verdict(owners):
    """'system' or 'project' for a report whose access stacks have `owners`."""
    if any(o[0] == "system" for o in owners) and all(
            o[0] in ("system", "unknown", "lifecycle") for o in owners):
        return "system"
    return "project"


def reports(prefix):
    for path in sorted(glob.glob(prefix + ".*")):
        with open(path, errors="replace") as f:
            text = f.read()
        for chunk in text.split("WARNING: ThreadSanitizer: ")[1:]:
            kind = chunk.split(" (pid")[0].strip()
            stacks, current, allocation = [], None, []
            for line in chunk.splitlines():
                if ACCESS.match(line):
                    current = []
                    stacks.append(current)
                elif line.startswith("  Location is heap block"):
                    current = allocation
                elif current is not None and re.match(r"\s+#\d+", line):
                    current.append(line)
                else:
                    current = None
            # The reactor's memory: allocated in the factory call, or freed
            # in OnDone (TSan names no block for the freeing access).
            on_reactor = any(REACTOR_FACTORY.search(l) for l in allocation) or any(
                st and FREE.search(st[0]) and any(ON_DONE.search(l) for l in st)
                for st in stacks)
            yield path, kind, [owner(s, on_reactor) for s in stacks], chunk


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    counts = collections.Counter()
    system_tops = collections.Counter()
    project = []
    unrestored = 0
    lifecycle = 0
    for path, kind, owners, chunk in reports(sys.argv[1]):
        if any(o[0] == "unknown" for o in owners):
            unrestored += 1
        if verdict(owners) == "system":
            counts[kind, "system"] += 1
            system_tops[" / ".join(sorted(o[1][:60] for o in owners))] += 1
            if any(o[0] == "lifecycle" for o in owners):
                lifecycle += 1
        else:
            counts[kind, "project"] += 1
            project.append((path, chunk))
    total = sum(counts.values())
    print(f"tsan: {total} reports: {total - len(project)} with no access in "
          f"project code, {len(project)} involving project code")
    if unrestored:
        print(f"  ({unrestored} of them with one stack TSan could not restore; "
              "the other access is in system code)")
    if lifecycle:
        print(f"  ({lifecycle} of them between gRPC's code and a reactor's construction "
              "by the service's factory or its OnDone)")
    for (kind, where), n in sorted(counts.items()):
        print(f"  {n:5d} {kind} ({where})")
    if system_tops:
        print("  system-only, most frequent:")
        for tops, n in system_tops.most_common(8):
            print(f"  {n:5d} {tops}")
    for path, chunk in project:
        print(f"==== {path}\nWARNING: ThreadSanitizer: {chunk.strip()}\n")
    sys.exit(1 if project else 0)


if __name__ == "__main__":
    main()
