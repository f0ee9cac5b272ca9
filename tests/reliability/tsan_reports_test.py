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


def verdicts(name):
    prefix = os.path.join(TESTDATA, name)
    found = [(owners, tsan_reports.verdict(owners))
             for path, _, owners, _ in tsan_reports.reports(prefix[:-len(".txt")])
             if path == prefix]
    assert len(found) == 1, (name, found)
    return found[0]


class VerdictTest(unittest.TestCase):

    def test_first_lock_against_unrestored_allocation_is_project(self):
        owners, v = verdicts("reactor_first_lock.txt")
        self.assertEqual([o[0] for o in owners], ["project", "unknown"])
        self.assertEqual(v, "project")

    def test_grpc_reading_a_reactor_the_factory_built_is_grpcs(self):
        owners, v = verdicts("reactor_vptr_read.txt")
        self.assertEqual(sorted(o[0] for o in owners), ["lifecycle", "system"])
        self.assertEqual(v, "system")

    def test_grpc_header_code_on_both_sides_is_system(self):
        owners, v = verdicts("byte_buffer_handoff.txt")
        self.assertEqual([o[0] for o in owners], ["system", "system"])
        self.assertEqual(v, "system")

    def test_two_reactions_of_one_reactor_are_project(self):
        owners, v = verdicts("reactions_race.txt")
        self.assertEqual([o[0] for o in owners], ["project", "project"])
        self.assertEqual(v, "project")

    def test_reaction_against_construction_is_project(self):
        owners, v = verdicts("construction_vs_reaction.txt")
        self.assertEqual(sorted(o[0] for o in owners), ["lifecycle", "project"])
        self.assertEqual(v, "project")


    def test_grpc_finish_against_the_reactors_on_done_delete_is_grpcs(self):
        owners, v = verdicts("on_done_delete_vs_finish.txt")
        self.assertEqual(sorted(o[0] for o in owners), ["lifecycle", "system"])
        self.assertEqual(v, "system")

    def test_reaction_against_on_done_is_project(self):
        owners, v = verdicts("on_done_vs_reaction.txt")
        self.assertEqual(sorted(o[0] for o in owners), ["lifecycle", "project"])
        self.assertEqual(v, "project")

    def test_construction_code_on_shared_memory_is_not_grpcs(self):
        # The constructor's own access passes through the factory call, but
        # the memory is not the reactor's: a race with /metrics stays ours.
        owners, v = verdicts("ctor_metric_vs_scrape.txt")
        self.assertEqual([o[0] for o in owners], ["system", "project"])
        self.assertEqual(v, "project")


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
