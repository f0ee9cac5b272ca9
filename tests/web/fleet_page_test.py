#!/usr/bin/python3
"""The fleet page in headless Chromium against the real tracehealth-server
fed by real agents on the fixture hosts.

Checks: the fleet table lists every host with the risk the gRPC API gives
(tracehealthctl), sorting and filtering work, a host page shows its
explanation, charts, observed kernel events and the calibration its
predictions use, the what-if form gives the number tracehealthctl predict
gives (a kernel what-if on a Debian host included), the rollout plan and
accuracy views show what their routes answer, hostile label values render
as text, and the browser logs no error. Screenshots go to
$TEST_UNDECLARED_OUTPUTS_DIR.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

RUNFILES = os.path.join(os.environ.get("TEST_SRCDIR", "."), "tracehealth")
SERVER = os.path.join(RUNFILES, "server/tracehealth-server")
AGENT = os.path.join(RUNFILES, "agent/tracehealth-agent")
CTL = os.path.join(RUNFILES, "tools/tracehealthctl/tracehealthctl")
FIXTURES = os.path.join(RUNFILES, "tests/fixtures/hosts")
KMSG = os.path.join(RUNFILES, "tests/fixtures/kmsg")
OUT = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR", tempfile.gettempdir())

# host id -> (fixture, labels)
HOSTS = {
    "db-lockup": ("preempt-none-6.16-240k", "role=db,rack=r1"),
    "db-kasan": ("kasan-6.12-256cpu", "role=db,rack=r2"),
    "web-fprobe": ("kprobe-multi-6.14", "role=web,rack=r1"),
    "web-active": ("fgraph-active-6.19", "role=web,rack=r3"),
    "batch-notracefs": ("no-tracefs", "role=batch,rack=r3"),
    # Label values an agent may send: markup and control characters.
    "hostile": ("kprobe-multi-6.14",
                # (the agent's --labels splits on ',' and the first '=')
                'role=<script>alert(1)</script>,'
                'note="><img src onerror>,'
                'ctl=a\x1b[2J\x07b'),
}


# db-lockup's kernel log: a soft lockup in the fgraph walk
# (tests/fixtures/kmsg), logged a minute before the agents start.
LOGGED = {"db-lockup": "soft_lockup_fgraph"}
# web-active's own calibration, measured on its release family (6.19).
CALIBRATED = {"web-active": {
    "c_visit_seconds": 1.2e-07, "fixed_seconds": 0, "kernel_release": "6.19.2",
    "cpu_model": "AMD EPYC 9654 96-Core Processor",
    "measured_at": "2026-12-01T15:40:00Z"}}


def kernel_log(root, name, at):
    """The records of kmsg fixture `name`, renumbered from 100 and dated from
    unix time `at` on (one microsecond apart), as ROOT/dev/kmsg."""
    btime = next(int(line.split()[1]) for line in open(os.path.join(root, "proc/stat"))
                 if line.startswith("btime "))
    ts = int((at - btime) * 1e6)
    seq = 100
    out = []
    for line in open(os.path.join(KMSG, name)):
        if line.startswith(" ") or not line.strip():
            out.append(line)
            continue
        pri, _, _, rest = line.split(",", 3)
        out.append("%s,%d,%d,%s" % (pri, seq, ts, rest))
        seq, ts = seq + 1, ts + 1
    os.makedirs(os.path.join(root, "dev"), exist_ok=True)
    with open(os.path.join(root, "dev/kmsg"), "w") as f:
        f.write("".join(out))


def wait(cond, timeout=15, what="condition"):
    end = time.time() + timeout
    while time.time() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


class FleetPageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="fleet-page-", dir=os.environ.get("TEST_TMPDIR"))
        port_file = os.path.join(cls.tmp, "ports")
        cls.server_log = open(os.path.join(cls.tmp, "server.log"), "w")
        cls.logs = [cls.server_log]
        cls.server = subprocess.Popen(
            [SERVER, "--data_dir=" + cls.tmp, "--listen=127.0.0.1:0",
             "--metrics_listen=127.0.0.1:0", "--port_file=" + port_file,
             "--stale_after_intervals=100000"],
            stdout=cls.server_log, stderr=subprocess.STDOUT)
        ports = wait(lambda: os.path.exists(port_file) and open(port_file).read(), 30, "port file")
        addrs = dict(line.split("=", 1) for line in ports.split())
        cls.grpc, cls.http = addrs["grpc"], addrs["metrics"]
        agents = []
        for host, (fixture, labels) in HOSTS.items():
            state = os.path.join(cls.tmp, "agent-" + host)
            root = os.path.join(FIXTURES, fixture)
            if host in LOGGED:
                root = shutil.copytree(root, os.path.join(cls.tmp, "root-" + host))
                kernel_log(root, LOGGED[host], time.time() - 60)
            if host in CALIBRATED:
                os.makedirs(state)
                with open(os.path.join(state, "calibration.json"), "w") as f:
                    json.dump(CALIBRATED[host], f)
            agents.append(subprocess.Popen(
                [AGENT, "--root=" + root, "--state_dir=" + state,
                 "--host_id=" + host, "--labels=" + labels, "--server=" + cls.grpc,
                 "--interval=200ms", "--max_reports=3", "--shutdown_flush_timeout=30s"],
                stdout=subprocess.DEVNULL, stderr=cls.log(state + ".log")))
        for a in agents:
            assert a.wait(60) == 0, "an agent failed"
        options = webdriver.ChromeOptions()
        for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    "--window-size=1400,1000",
                    "--user-data-dir=" + os.path.join(cls.tmp, "chromium")):
            options.add_argument(arg)
        options.binary_location = "/usr/bin/chromium"
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        cls.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        cls.driver.set_page_load_timeout(30)

    @classmethod
    def log(cls, path):
        f = open(path, "w")
        cls.logs.append(f)
        return f

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.server.terminate()
        cls.server.wait(30)
        for f in cls.logs:
            f.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def ctl(self, *args):
        out = subprocess.run([CTL, "--server=" + self.grpc, "--json"] + list(args),
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out)

    def open(self, path):
        self.driver.get("http://" + self.http + path)

    def rows(self):
        return self.driver.find_elements(By.CSS_SELECTOR, "#hosts tbody tr")

    def row_ids(self):
        return [r.get_attribute("data-host") for r in self.rows()]

    def shot(self, name):
        self.driver.save_screenshot(os.path.join(OUT, name))

    def assert_no_console_errors(self):
        errors = [e for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]
        self.assertEqual(errors, [])

    def test_1_fleet_lists_every_host_with_its_risk(self):
        by_grpc = {h["host_id"]: h for h in self.ctl("hosts", "--limit=100")["hosts"]}
        self.assertEqual(set(by_grpc), set(HOSTS))
        # 240,000 idle threads on PREEMPT_NONE 6.16: a predicted soft lockup.
        self.assertEqual(by_grpc["db-lockup"]["worst_risk"], "RISK_STALL")
        self.open("/")
        wait(lambda: len(self.rows()) == len(HOSTS), what="host rows")
        for row in self.rows():
            host = row.get_attribute("data-host")
            badge = row.find_element(By.CSS_SELECTOR, "td.risk .badge")
            self.assertEqual(badge.get_attribute("title"), by_grpc[host]["worst_risk"], host)
        stalls = sum(1 for h in by_grpc.values() if h["worst_risk"] == "RISK_STALL")
        self.assertEqual(self.driver.find_element(By.ID, "count-RISK_STALL").text, str(stalls))
        self.assertEqual(self.driver.find_element(By.ID, "count-hosts").text, str(len(HOSTS)))
        # Every host in the strip: one cell each here.
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, "#strip a")), len(HOSTS))
        self.shot("fleet.png")
        self.assert_no_console_errors()

    def test_2_sorting_and_filtering(self):
        self.open("/")
        wait(lambda: len(self.rows()) == len(HOSTS), what="host rows")
        self.driver.find_element(By.CSS_SELECTOR, "th[data-sort=host]").click()
        wait(lambda: self.row_ids() == sorted(HOSTS), what="rows by host id")
        self.driver.find_element(By.CSS_SELECTOR, "th[data-sort=host]").click()
        wait(lambda: self.row_ids() == sorted(HOSTS, reverse=True), what="rows by host id, reversed")
        # Most threads first, as the gRPC API sorts them.
        threads = [h["host_id"] for h in self.ctl("hosts", "--limit=100", "--sort=host")["hosts"]]
        by_threads = sorted(
            threads, key=lambda h: -int(self.ctl("host", h)["latest"]["snapshot"]["threads"].get("total", 0)))
        self.driver.find_element(By.CSS_SELECTOR, "th[data-sort=threads]").click()
        wait(lambda: self.row_ids()[:2] == by_threads[:2], what="rows by threads")
        # Label selector.
        box = self.driver.find_element(By.ID, "f-selector")
        box.clear()
        box.send_keys("role=db")
        self.driver.find_element(By.ID, "f-apply").click()
        wait(lambda: sorted(self.row_ids()) == ["db-kasan", "db-lockup"], what="role=db rows")
        self.assertIn("of 2 hosts", self.driver.find_element(By.ID, "page-info").text)
        # Risk filter on top: the role=db hosts the gRPC API says stall.
        stalls = sorted(h["host_id"] for h in self.ctl("hosts", "--selector=role=db", "--min_risk=stall")["hosts"])
        self.assertIn("db-lockup", stalls)
        Select(self.driver.find_element(By.ID, "f-risk")).select_by_value("RISK_STALL")
        self.driver.find_element(By.ID, "f-apply").click()
        wait(lambda: sorted(self.row_ids()) == stalls, what="stall rows")
        # A bad selector: the API's reason on the page.
        self.open("/?selector=" + "role%3D~%28")
        err = wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, "p.error"), what="error")
        self.assertIn("bad regex", err[0].text)
        self.driver.get_log("browser")  # the 400 is logged by the browser: expected here

    def test_3_host_page_explains_and_charts(self):
        self.open("/hosts/db-lockup")
        wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#attach tbody tr"), what="predictions")
        row = self.driver.find_element(By.CSS_SELECTOR, "#attach tr[data-kind=PROBE_KIND_FUNCTION_GRAPH_TRACER]")
        summary = row.find_element(By.CSS_SELECTOR, "td.summary").text
        self.assertIn("soft lockup", summary)
        self.assertIn("240", summary)
        inputs = self.driver.find_element(By.ID, "inputs").text
        self.assertIn("measured", inputs)
        # 3 reports, each a point of the threads chart.
        wait(lambda: self.driver.execute_script(
            "const c = Chart.getChart('chart-threads'); return c && c.data.datasets[0].data.length;") == 3,
            what="threads chart with 3 points")
        self.assertIn("3 of 3 reports", self.driver.find_element(By.ID, "history-count").text)
        # Its kernel log's soft lockup, as the gRPC API lists it, in words:
        # logged before the host's first report, so nothing to compare with.
        want = self.ctl("events", "db-lockup")["events"]
        self.assertEqual([(e["event"]["kind"], e["event"]["model"], e["predicted"]) for e in want],
                         [("OBSERVED_EVENT_KIND_SOFT_LOCKUP", "EVENT_MODEL_FGRAPH_ATTACH", "EVENT_PREDICTION_UNKNOWN")])
        rows = wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#events tbody tr"), what="events")
        self.assertEqual(len(rows), 1)
        self.assertEqual(rows[0].get_attribute("data-predicted"), "EVENT_PREDICTION_UNKNOWN")
        self.assertEqual([rows[0].find_element(By.CSS_SELECTOR, "td." + c).text for c in ("kind", "model", "predicted")],
                         ["soft lockup", "fgraph attach", "not comparable"])
        self.assertIn("22 s, bpftrace:4242", rows[0].text)
        # No calibration anywhere: the seed constants.
        self.assertEqual(self.driver.find_element(By.ID, "host-calibration").text, "seed constants (no calibration)")
        main = self.driver.find_element(By.ID, "main").text
        for raw in ("OBSERVED_EVENT_KIND_", "EVENT_MODEL_", "EVENT_PREDICTION_", "CONSTANTS_ORIGIN_", "INPUT_SOURCE_"):
            self.assertNotIn(raw, main)
        self.shot("host.png")
        self.assert_no_console_errors()

    def test_3b_host_page_names_its_own_calibration(self):
        self.assertEqual(self.ctl("host", "web-active")["constants_origin"], "CONSTANTS_ORIGIN_HOST_CALIBRATION")
        self.open("/hosts/web-active")
        cal = wait(lambda: self.driver.find_elements(By.ID, "host-calibration"), what="calibration")[0]
        self.assertEqual(cal.text, "this host's own calibration: c_visit 120 ns, measured 2026-12-01 15:40:00Z")
        wait(lambda: self.driver.find_elements(By.ID, "no-events"), what="no events")
        self.assert_no_console_errors()

    def test_4_what_if_gives_the_models_answer(self):
        want = self.ctl("predict", "--hosts=db-lockup", "--probe=kprobe_multi_return",
                        "--threads=400000", "--batch=1024", "--preempt=none")
        want_latency = want["answers"][0]["prediction"]["latency_seconds"]
        self.open("/what-if?host=db-lockup")
        form = wait(lambda: self.driver.find_elements(By.ID, "whatif"), what="form")[0]
        Select(self.driver.find_element(By.ID, "w-kind")).select_by_value("PROBE_KIND_KPROBE_MULTI_RETURN")
        self.driver.find_element(By.ID, "w-threads").send_keys("400000")
        self.driver.find_element(By.ID, "w-batch").send_keys("1024")
        Select(self.driver.find_element(By.ID, "w-preempt")).select_by_value("PREEMPT_MODE_NONE")
        self.driver.find_element(By.ID, "w-submit").click()
        cell = wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#answers td.latency"), what="answer")[0]
        self.assertEqual(float(cell.get_attribute("data-seconds")), want_latency)
        self.assertGreater(want_latency, 1.0)
        self.shot("whatif.png")
        self.assert_no_console_errors()

    def test_4b_kernel_what_if_on_a_debian_host(self):
        # db-lockup runs Debian's 6.16.12 (its /proc/version says so), where
        # an entry-only kprobe_multi walks 240,000 threads. At 6.19.0 it is
        # off fgraph: only the patching of 100 sites at 1.069 s / 48,712.
        want = self.ctl("predict", "--hosts=db-lockup", "--probe=kprobe_multi",
                        "--kernel=6.19.0")["answers"][0]["prediction"]
        self.assertFalse(want.get("uses_fgraph", False))
        self.assertAlmostEqual(want["latency_seconds"], 100 * 1.069 / 48712, places=12)
        self.open("/what-if?host=db-lockup")
        wait(lambda: self.driver.find_elements(By.ID, "whatif"), what="form")
        Select(self.driver.find_element(By.ID, "w-kind")).select_by_value("PROBE_KIND_KPROBE_MULTI")
        self.driver.find_element(By.ID, "w-kernel").send_keys("6.19.0")
        self.driver.find_element(By.ID, "w-submit").click()
        cell = wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#answers td.latency"), what="answer")[0]
        self.assertEqual(float(cell.get_attribute("data-seconds")), want["latency_seconds"])
        self.assert_no_console_errors()

    def test_4c_rollout_plan_view(self):
        want = self.ctl("plan", "--probe=kprobe_multi_return", "--max_latency=2s")["plan"]
        # db-lockup's 240,000-thread walk on PREEMPT_NONE is a lockup risk.
        self.assertGreaterEqual(want.get("lockup_risk", 0), 1)
        self.open("/")
        wait(lambda: len(self.rows()) == len(HOSTS), what="host rows")
        self.driver.find_element(By.LINK_TEXT, "Rollout plan").click()
        wait(lambda: self.driver.find_elements(By.ID, "rollout"), what="rollout form")
        Select(self.driver.find_element(By.ID, "r-kind")).select_by_value("PROBE_KIND_KPROBE_MULTI_RETURN")
        budget = self.driver.find_element(By.ID, "r-budget")
        budget.clear()
        budget.send_keys("2")
        self.driver.find_element(By.ID, "r-submit").click()
        rows = wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#waves tbody tr"), what="waves")
        for key in ("safe", "over_budget", "lockup_risk", "unknown"):
            self.assertEqual(self.driver.find_element(By.ID, "plan-" + key).text, str(want.get(key, 0)), key)
        words = {"PLAN_CLASS_SAFE": "safe", "PLAN_CLASS_OVER_BUDGET": "over budget",
                 "PLAN_CLASS_LOCKUP_RISK": "lockup risk", "PLAN_CLASS_UNKNOWN": "unknown"}
        self.assertEqual([(r.get_attribute("data-plan-class"), r.find_elements(By.TAG_NAME, "td")[1].text) for r in rows],
                         [(w["plan_class"], words[w["plan_class"]]) for w in want["waves"]])
        lockup = [r for r in rows if r.get_attribute("data-plan-class") == "PLAN_CLASS_LOCKUP_RISK"][0]
        self.assertIn("db-lockup", [a.text for a in lockup.find_elements(By.CSS_SELECTOR, "td.hosts a")])
        # The plan is a link: the same view from its address.
        self.assertIn("max_latency=2", self.driver.current_url)
        self.assertNotIn("PLAN_CLASS_", self.driver.find_element(By.ID, "main").text)
        self.shot("rollout.png")
        # A refused plan: the route's reason on the page.
        self.open("/rollout?probe_kind=PROBE_KIND_KPROBE_MULTI_RETURN&max_latency=0")
        err = wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, "p.error"), what="error")
        self.assertIn("plan.max_latency: required, must be > 0", err[0].text)
        self.driver.get_log("browser")  # the 400 is logged by the browser: expected here

    def test_4d_accuracy_view(self):
        want = {c["hardware_class"]: c for c in self.ctl("accuracy")["classes"]}
        self.open("/")
        wait(lambda: len(self.rows()) == len(HOSTS), what="host rows")
        self.driver.find_element(By.LINK_TEXT, "Accuracy").click()
        rows = wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#accuracy tbody tr"), what="classes")
        self.assertEqual(sorted(r.get_attribute("data-cls") for r in rows), sorted(want))
        for r in rows:
            c = want[r.get_attribute("data-cls")]
            self.assertEqual(r.find_element(By.CSS_SELECTOR, "td.events").text, str(c.get("events", 0)))
            # No canaries here: nothing but the seed prices the class.
            self.assertEqual(c.get("canaries", 0), 0)
            self.assertEqual(r.find_element(By.CSS_SELECTOR, "td.priced").text, "–")
        # db-lockup's soft lockup, in its class.
        lockup_class = self.ctl("host", "db-lockup")["latest"]["snapshot"]["cpus"]["model_name"] + " / 6.16"
        self.assertEqual(want[lockup_class].get("events", 0), 1)
        self.shot("accuracy.png")
        self.assert_no_console_errors()

    def test_5_hostile_labels_are_text(self):
        self.open("/hosts/hostile")
        labels = wait(lambda: self.driver.find_elements(By.ID, "host-labels"), what="labels")[0]
        text = labels.get_attribute("textContent")
        self.assertIn("role=<script>alert(1)</script>", text)
        self.assertIn('note="><img src onerror>', text)
        self.assertIn("ctl=a\\x1b[2J\\x07b", text)  # control characters shown escaped
        self.assertEqual(labels.find_elements(By.CSS_SELECTOR, "*"), [])
        # The page's own scripts and none injected.
        scripts = [e.get_attribute("src") for e in self.driver.find_elements(By.TAG_NAME, "script")]
        self.assertEqual([s.rsplit("/", 1)[-1] for s in scripts],
                         ["chart.min.js", "host.js", "events.js", "rollout.js", "accuracy.js", "app.js"])
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, "main img")), 0)
        with self.assertRaises(NoAlertPresentException):
            self.driver.switch_to.alert.text
        self.shot("hostile-host.png")
        self.open("/?selector=ctl%3D~a.*b")
        wait(lambda: "hostile" in self.row_ids(), what="hostile row")
        cell = self.driver.find_element(By.CSS_SELECTOR, "tr[data-host=hostile] td.labels")
        self.assertIn("<script>", cell.text)
        with self.assertRaises(NoAlertPresentException):
            self.driver.switch_to.alert.text
        self.shot("hostile-fleet.png")
        self.assert_no_console_errors()


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    print("%d passed, %d failed" % (result.testsRun - len(result.failures) - len(result.errors),
                                    len(result.failures) + len(result.errors)))
    sys.exit(0 if result.wasSuccessful() else 1)
