"""Tests tsan_reports.py on real and edited ThreadSanitizer reports
(testdata/tsan/README.md says which is which)."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tsan_reports  # noqa: E402

TESTDATA = os.path.join(HERE, "testdata", "tsan")


# Fixture, the kinds of its access stacks (sorted), verdict, and why.
CASES = [
    ("reactor_first_lock.txt", ["project", "unknown"], "project",
     "a reaction's lock against an unrestored stack"),
    ("reactor_vptr_read.txt", ["lifecycle", "system"], "system",
     "gRPC reading a reactor the factory built"),
    ("byte_buffer_handoff.txt", ["system", "system"], "system",
     "gRPC's header code on both sides"),
    ("on_done_delete_vs_finish.txt", ["lifecycle", "system"], "system",
     "gRPC's Finish against the reactor's OnDone delete"),
    ("reactions_race.txt", ["project", "project"], "project",
     "two reactions of one reactor may run concurrently"),
    ("construction_vs_reaction.txt", ["lifecycle", "project"], "project",
     "a reaction's own code against the construction"),
    ("on_done_vs_reaction.txt", ["lifecycle", "project"], "project",
     "a reaction's own code against OnDone"),
    ("ctor_metric_vs_scrape.txt", ["project", "system"], "project",
     "the constructor on shared memory (a metric), not the reactor's"),
]


class VerdictTest(unittest.TestCase):

    def test_each_fixture(self):
        for name, kinds, expected, why in CASES:
            with self.subTest(name, why=why):
                path = os.path.join(TESTDATA, name)
                found = [owners for p, _, owners, _ in
                         tsan_reports.reports(path[:-len(".txt")]) if p == path]
                self.assertEqual(len(found), 1)
                self.assertEqual(sorted(o[0] for o in found[0]), kinds)
                self.assertEqual(tsan_reports.verdict(found[0]), expected)

    def test_every_fixture_has_a_case(self):
        names = sorted(n for n in os.listdir(TESTDATA) if n.endswith(".txt"))
        self.assertEqual(names, sorted(c[0] for c in CASES))


class CommandTest(unittest.TestCase):
    """The script's exit code over a log directory, as run_tsan.sh uses it."""

    def run_on(self, names):
        logs = tempfile.mkdtemp()
        try:
            for i, name in enumerate(names):
                shutil.copy(os.path.join(TESTDATA, name), os.path.join(logs, f"tsan.{i}"))
            return subprocess.run(
                [sys.executable, os.path.join(HERE, "tsan_reports.py"),
                 os.path.join(logs, "tsan")],
                capture_output=True, text=True)
        finally:
            shutil.rmtree(logs)

    def test_system_only_logs_pass(self):
        r = self.run_on(["reactor_vptr_read.txt", "byte_buffer_handoff.txt"])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("2 reports: 2 with no access in project code, 0 involving", r.stdout)

    def test_one_project_report_fails_and_is_printed(self):
        r = self.run_on(["byte_buffer_handoff.txt", "reactions_race.txt"])
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("1 involving project code", r.stdout)
        self.assertIn("ReportReactor::OnWriteDone", r.stdout)


if __name__ == "__main__":
    unittest.main()
