#!/usr/bin/env python3
"""Mutation testing: applies the mutants of mutants.txt one at a time, runs
the Bazel tests each one names and reports whether the tests noticed.

Each mutant replaces one exact snippet of one source file (the snippet must
occur exactly once). The file is restored after the tests whatever happens
(test failure, timeout, Ctrl-C, SIGTERM); a copy of the original is kept in
tests/mutation/.backup/ while the mutant is applied, so a run killed with
SIGKILL is repaired by the next run before it does anything else.

Verdicts:
  KILLED        the build succeeded and at least one test failed or timed out
  SURVIVED      the build succeeded and every test passed
  BUILD-BROKEN  the mutant does not compile: a broken mutant, fix it
  ERROR         bazel failed otherwise (bad target, no tests, over --timeout)
The score is KILLED / (KILLED + SURVIVED): every survivor counts against it,
also one marked "equivalent:" in the list (a change no test can tell apart,
shown as SURVIVED (equivalent) with the reason).

Usage:
  tests/mutation/run_mutants.py                run every mutant
  tests/mutation/run_mutants.py --list         list the mutants
  tests/mutation/run_mutants.py ID [ID ...]    run these mutants
  tests/mutation/run_mutants.py --check        only check that every snippet
                                               occurs exactly once
Options: --mutants FILE (default tests/mutation/mutants.txt),
         --timeout SECONDS (per mutant, default 600; each test 120),
         --bazel PATH (default bazel).
Exit status: 0 when the score is at least --min-score (default 90), 1 when it
is lower or a mutant is broken, 2 on a bad list.
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BACKUP_DIR = os.path.join(ROOT, "tests", "mutation", ".backup")
FIELDS = ("file", "kind", "targets", "equivalent")


class ListError(Exception):
    pass


class Mutant:
    def __init__(self, mid, line):
        self.id = mid
        self.line = line
        self.file = ""
        self.kind = ""
        self.targets = []
        self.equivalent = ""
        self.original = None
        self.replacement = None


def parse_list(path):
    """Parses the mutant list (format described at the top of the file)."""
    mutants = []
    cur = None
    block = None  # "original" or "replacement" while reading a snippet
    lines = []
    with open(path, encoding="utf-8") as f:
        text = f.read().split("\n")
    for n, raw in enumerate(text, 1):
        if block is not None:
            if raw.startswith("--- "):
                setattr(cur, block, "\n".join(lines))
                block = None
            else:
                lines.append(raw)
                continue
        if raw.startswith("--- "):
            word = raw[4:].strip()
            if cur is None:
                raise ListError("%s:%d: snippet outside a mutant" % (path, n))
            if word in ("original", "replacement"):
                block, lines = word, []
            elif word != "end":
                raise ListError("%s:%d: unknown marker %r" % (path, n, raw))
            continue
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("[mutant ") and stripped.endswith("]"):
            cur = Mutant(stripped[len("[mutant "):-1].strip(), n)
            mutants.append(cur)
            continue
        key, sep, value = stripped.partition(":")
        if cur is None or not sep or key.strip() not in FIELDS:
            raise ListError("%s:%d: cannot read %r" % (path, n, raw))
        key, value = key.strip(), value.strip()
        if key == "targets":
            cur.targets = value.split()
        else:
            setattr(cur, key, value)
    if block is not None:
        raise ListError("%s: snippet of %s not closed" % (path, cur.id))
    seen = set()
    for m in mutants:
        where = "%s:%d (%s)" % (path, m.line, m.id)
        if m.id in seen:
            raise ListError("%s: duplicate id" % where)
        seen.add(m.id)
        if not m.file or not m.kind or not m.targets:
            raise ListError("%s: file, kind and targets are required" % where)
        if m.original is None or m.replacement is None:
            raise ListError("%s: original and replacement are required" % where)
        if m.original == m.replacement:
            raise ListError("%s: replacement equals the original" % where)
    return mutants


def check_snippet(m):
    path = os.path.join(ROOT, m.file)
    if not os.path.isfile(path):
        return "no file %s" % m.file
    with open(path, encoding="utf-8") as f:
        count = f.read().count(m.original)
    if count != 1:
        return "original snippet occurs %d times in %s" % (count, m.file)
    return None


def restore_leftovers():
    """Puts back files a killed run left mutated."""
    if not os.path.isdir(BACKUP_DIR):
        return
    for dirpath, _, names in os.walk(BACKUP_DIR):
        for name in names:
            src = os.path.join(dirpath, name)
            rel = os.path.relpath(src, BACKUP_DIR)
            shutil.copy2(src, os.path.join(ROOT, rel))
            print("restored %s from an interrupted run" % rel)
    shutil.rmtree(BACKUP_DIR)


class Applied:
    """Context manager: the mutant is in the file inside the block only."""

    def __init__(self, m):
        self.m = m
        self.path = os.path.join(ROOT, m.file)
        self.backup = os.path.join(BACKUP_DIR, m.file)

    def __enter__(self):
        with open(self.path, encoding="utf-8") as f:
            self.text = f.read()
        os.makedirs(os.path.dirname(self.backup), exist_ok=True)
        shutil.copy2(self.path, self.backup)
        mutated = self.text.replace(self.m.original, self.m.replacement, 1)
        with open(self.path, "w", encoding="utf-8") as f:
            f.write(mutated)
        return self

    def __exit__(self, *exc):
        with open(self.path, "w", encoding="utf-8") as f:
            f.write(self.text)
        # The restored file gets the backup's timestamp back as well.
        shutil.copystat(self.backup, self.path)
        shutil.rmtree(BACKUP_DIR)
        return False


def run_bazel(args, m):
    cmd = [args.bazel, "test", "--test_output=summary",
           "--test_summary=terse", "--test_timeout=%d" % args.test_timeout,
           "--noshow_progress", "--"] + m.targets
    try:
        proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=args.timeout,
                              start_new_session=True)
    except subprocess.TimeoutExpired:
        # A test stuck in a loop is stopped by --test_timeout (a kill);
        # this is bazel itself taking too long.
        return "ERROR", "bazel still running after %d s" % args.timeout
    out = proc.stdout.decode("utf-8", "replace")
    # bazel: 0 all passed, 1 build failed, 3 a test failed or timed out.
    if proc.returncode == 0:
        return "SURVIVED", ""
    if proc.returncode == 3:
        failed = [l.split()[0] for l in out.splitlines()
                  if l.startswith("//") and ("FAILED" in l or "TIMEOUT" in l)]
        return "KILLED", "by " + " ".join(failed)
    if proc.returncode == 1:
        errors = [l for l in out.splitlines() if "error:" in l]
        return "BUILD-BROKEN", (errors[0] if errors else "build failed")
    tail = out.strip().splitlines()[-1:] or [""]
    return "ERROR", "bazel exit %d: %s" % (proc.returncode, tail[0])


def on_signal(signum, _frame):
    raise KeyboardInterrupt("signal %d" % signum)


def main():
    p = argparse.ArgumentParser(
        description="Apply mutants one at a time and run their tests.")
    p.add_argument("ids", nargs="*", help="run only these mutants")
    p.add_argument("--list", action="store_true", help="list the mutants")
    p.add_argument("--check", action="store_true",
                   help="check the snippets, run nothing")
    p.add_argument("--mutants",
                   default=os.path.join(ROOT, "tests", "mutation",
                                        "mutants.txt"))
    p.add_argument("--timeout", type=int, default=600)
    p.add_argument("--test-timeout", type=int, default=120)
    p.add_argument("--min-score", type=float, default=90.0)
    p.add_argument("--bazel", default="bazel")
    args = p.parse_args()
    # Output piped into head(1) and the like ends quietly.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)

    try:
        mutants = parse_list(args.mutants)
    except (ListError, OSError) as e:
        print("mutants: %s" % e, file=sys.stderr)
        return 2
    restore_leftovers()

    if args.list:
        for m in mutants:
            eq = "  [equivalent]" if m.equivalent else ""
            print("%-28s %-20s %s%s" % (m.id, m.kind, m.file, eq))
        print("%d mutants" % len(mutants))
        return 0
    if args.ids:
        by_id = {m.id: m for m in mutants}
        unknown = [i for i in args.ids if i not in by_id]
        if unknown:
            print("unknown mutant id: %s" % " ".join(unknown), file=sys.stderr)
            return 2
        mutants = [by_id[i] for i in args.ids]

    bad = [(m, e) for m in mutants for e in [check_snippet(m)] if e]
    for m, e in bad:
        print("%s: %s" % (m.id, e), file=sys.stderr)
    if bad:
        return 2
    if args.check:
        print("%d mutants, every snippet found once" % len(mutants))
        return 0

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    counts = {"KILLED": 0, "SURVIVED": 0, "EQUIVALENT": 0,
              "BUILD-BROKEN": 0, "ERROR": 0}
    start = time.time()
    try:
        for i, m in enumerate(mutants, 1):
            t0 = time.time()
            with Applied(m):
                verdict, detail = run_bazel(args, m)
            shown = verdict
            if verdict == "SURVIVED" and m.equivalent:
                counts["EQUIVALENT"] += 1
                shown = "SURVIVED (equivalent)"
                detail = m.equivalent
            else:
                counts[verdict] += 1
            print("[%d/%d] %-28s %-22s %4.0fs  %s" %
                  (i, len(mutants), m.id, shown, time.time() - t0, detail),
                  flush=True)
    except KeyboardInterrupt:
        print("interrupted; the mutated file was restored", file=sys.stderr)
        return 130

    scored = counts["KILLED"] + counts["SURVIVED"] + counts["EQUIVALENT"]
    score = 100.0 * counts["KILLED"] / scored if scored else 0.0
    print("mutation score: %d killed / %d scored = %.1f %% "
          "(%d survived unexplained, %d equivalent, %d build-broken, %d error; "
          "%d mutants, %.0f s)" %
          (counts["KILLED"], scored, score, counts["SURVIVED"],
           counts["EQUIVALENT"], counts["BUILD-BROKEN"], counts["ERROR"],
           len(mutants), time.time() - start))
    if counts["BUILD-BROKEN"] or counts["ERROR"] or score < args.min_score:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
