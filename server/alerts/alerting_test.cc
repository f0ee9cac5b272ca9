#include "server/alerts/alerting.h"

#include "common/models/evaluate.h"
#include "gtest/gtest.h"
#include "prometheus/metric_family.h"
#include "server/calibration/class_calibrations.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::server {
namespace {

std::vector<AlertRule> Rules() {
  absl::StatusOr<std::vector<AlertRule>> rules = ParseAlertRules(R"(
rules:
  - name: Slow
    condition: predictions.attach[kprobe_multi_return].latency_seconds > 5
  - name: Dropping
    condition: health.spool_dropped_total increased
)");
  EXPECT_TRUE(rules.ok()) << rules.status();
  return *rules;
}

CommittedReport Report(const std::string& host, uint64_t seq, double latency,
                       uint64_t dropped, absl::Time at) {
  auto r = std::make_shared<v1::HostReport>();
  r->set_host_id(host);
  r->set_seq(seq);
  r->set_interval_seconds(15);
  v1::AttachPrediction* a = r->mutable_predictions()->add_attach();
  a->set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  a->set_latency_seconds(latency);
  r->mutable_health()->set_spool_dropped_total(dropped);
  return {StoredReport::Of(*r), at};
}

// `batch` priced as the server prices it (server/calibration/
// report_pricer.h): a host's previous report is the index's newest, read
// from `store` (null: none is read); `classes` price hosts without their
// own calibration.
PricedBatch Priced(const std::vector<CommittedReport>& batch,
                   const HostIndex& index, ReportStore* store = nullptr,
                   const ClassCalibrations* classes = nullptr) {
  ReportPricer::Options o;
  o.classes = classes;
  o.latest_seq = [&index](const std::string& h) { return index.LatestSeq(h); };
  if (store != nullptr) {
    o.read_report = [store](const std::string& h, uint64_t seq) {
      return store->GetReport(h, seq);
    };
  }
  return ReportPricer(o).Price(batch);
}

// Waits until `storage` holds `n` pending/firing alerts.
std::vector<AlertRow> WaitStored(AlertStore* storage, size_t n) {
  absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (true) {
    absl::StatusOr<std::vector<AlertRow>> rows =
        storage->ListAlerts(AlertFilter{});
    if ((rows.ok() && rows->size() == n) || absl::Now() > deadline) {
      return rows.ok() ? *rows : std::vector<AlertRow>{};
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

TEST(AlertingTest, EvaluatesCommittedReportsStoresAndRestores) {
  std::string dir = testing::NewTempDir("alerting");
  absl::StatusOr<std::unique_ptr<SqliteStorage>> storage =
      SqliteStorage::Open(dir + "/t.db", SqliteOptions{});
  ASSERT_TRUE(storage.ok()) << storage.status();
  HostIndex index;
  absl::Time t0 = absl::Now();
  {
    Alerting alerting(Rules(), storage->get(), &index,
                      {absl::Milliseconds(50), {}});
    ASSERT_TRUE(alerting.Start().ok());
    // The writer hook order: alerting sees the batch before the index does.
    std::vector<CommittedReport> batch = {Report("h1", 1, 9, 0, t0),
                                          Report("h2", 1, 1, 0, t0),
                                          Report("h2", 2, 1, 3, t0)};
    PricedBatch priced = Priced(batch, index);
    alerting.OnCommitted(priced);
    index.Apply(priced);
    std::vector<AlertRow> rows = WaitStored(storage->get(), 2);
    ASSERT_EQ(rows.size(), 2u);
    std::map<std::string, std::string> fired;
    for (const AlertRow& r : rows) fired[r.rule] = r.host_id;
    EXPECT_EQ(fired["Slow"], "h1");
    EXPECT_EQ(fired["Dropping"], "h2");  // 0 -> 3 within one batch
    // A replayed old report changes nothing.
    std::vector<CommittedReport> replay = {Report("h1", 1, 1, 0, t0)};
    alerting.OnCommitted(Priced(replay, index));
    absl::SleepFor(absl::Milliseconds(200));
    EXPECT_EQ(WaitStored(storage->get(), 2).size(), 2u);
  }
  // After a restart the firing alert is still there and resolves normally.
  Alerting restarted(Rules(), storage->get(), &index,
                     {absl::Milliseconds(50), {}});
  ASSERT_TRUE(restarted.Start().ok());
  std::vector<v1::Alert> live = restarted.Alerts();
  ASSERT_EQ(live.size(), 2u);
  std::vector<CommittedReport> recover = {
      Report("h1", 2, 1, 0, t0 + absl::Seconds(15))};
  restarted.OnCommitted(Priced(recover, index));
  index.Apply(recover);
  std::vector<AlertRow> rows = WaitStored(storage->get(), 1);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].rule, "Dropping");
  AlertFilter resolved;
  resolved.states = {v1::ALERT_STATE_RESOLVED};
  absl::StatusOr<std::vector<AlertRow>> done = (*storage)->ListAlerts(resolved);
  ASSERT_TRUE(done.ok());
  ASSERT_EQ(done->size(), 1u);
  EXPECT_EQ((*done)[0].host_id, "h1");
  EXPECT_TRUE((*done)[0].resolved_at_ns.has_value());
  // The metric shows one firing alert.
  std::vector<prometheus::MetricFamily> families =
      restarted.collector()->Collect();
  ASSERT_FALSE(families.empty());
  EXPECT_EQ(families[0].name, "tracehealth_alerts");
  ASSERT_EQ(families[0].metric.size(), 1u);
}

TEST(AlertingTest, IncreasedComparesAcrossBatchesAndRestarts) {
  std::string dir = testing::NewTempDir("alerting");
  absl::StatusOr<std::unique_ptr<SqliteStorage>> storage =
      SqliteStorage::Open(dir + "/t.db", SqliteOptions{});
  ASSERT_TRUE(storage.ok()) << storage.status();
  HostIndex index;
  const absl::Time t0 = absl::Now();
  // As the writer hook has it: the report is stored, alerting sees it, then
  // the index.
  auto commit = [&](Alerting& a, HostIndex& idx, CommittedReport c) {
    ReportRow row;
    row.host_id = c.report->host_id();
    row.seq = c.report->seq();
    row.blob = c.report->report()->SerializeAsString();
    ASSERT_TRUE((*storage)->WriteBatch({row}).ok());
    std::vector<CommittedReport> batch = {std::move(c)};
    PricedBatch priced = Priced(batch, idx, storage->get());
    a.OnCommitted(priced);
    idx.Apply(priced);
  };
  {
    Alerting alerting(Rules(), storage->get(), &index,
                      {absl::Milliseconds(50), {}, nullptr});
    ASSERT_TRUE(alerting.Start().ok());
    commit(alerting, index, Report("h3", 1, 1, 5, t0));
    commit(alerting, index, Report("h3", 2, 1, 5, t0));  // 5 -> 5
    commit(alerting, index, Report("h4", 1, 1, 6, t0));
    absl::SleepFor(absl::Milliseconds(200));
    EXPECT_TRUE(alerting.Alerts().empty());
    commit(alerting, index, Report("h3", 3, 1, 6, t0));  // 5 -> 6
    std::vector<AlertRow> rows = WaitStored(storage->get(), 1);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].rule, "Dropping");
    EXPECT_EQ(rows[0].host_id, "h3");
  }
  // A restarted server: its index loaded from the store, no values kept.
  // Each host's first report is compared with its stored newest one (6
  // dropped each): h3 6 -> 6 stays quiet (its restored alert resolves), h4
  // 6 -> 9 fires. Without the stored value h4 would be compared with
  // nothing and stay quiet.
  HostIndex reloaded;
  ASSERT_TRUE(reloaded.LoadFrom(**storage).ok());
  ASSERT_EQ(reloaded.LatestSeq("h4"), 1u);
  Alerting restarted(Rules(), storage->get(), &reloaded,
                     {absl::Milliseconds(50), {}, nullptr});
  ASSERT_TRUE(restarted.Start().ok());
  commit(restarted, reloaded, Report("h3", 4, 1, 6, t0 + absl::Seconds(15)));
  EXPECT_TRUE(WaitStored(storage->get(), 0).empty());
  commit(restarted, reloaded, Report("h4", 2, 1, 9, t0 + absl::Seconds(15)));
  std::vector<AlertRow> again = WaitStored(storage->get(), 1);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].host_id, "h4");
  EXPECT_EQ(again[0].value, 9);
  // Then from the kept value: h4 9 -> 9 resolves, h3 6 -> 7 fires.
  commit(restarted, reloaded, Report("h4", 3, 1, 9, t0 + absl::Seconds(30)));
  EXPECT_TRUE(WaitStored(storage->get(), 0).empty());
  commit(restarted, reloaded, Report("h3", 5, 1, 7, t0 + absl::Seconds(30)));
  again = WaitStored(storage->get(), 1);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].host_id, "h3");
  EXPECT_EQ(again[0].value, 7);
}

TEST(AlertRowTest, RoundTrips) {
  v1::Alert a;
  a.set_rule("R");
  a.set_host_id("h");
  a.set_state(v1::ALERT_STATE_FIRING);
  a.set_severity("critical");
  (*a.mutable_labels())["alertname"] = "R";
  (*a.mutable_annotations())["summary"] = "s";
  a.set_value(7.5);
  a.mutable_active_since()->set_seconds(100);
  a.mutable_fired_at()->set_seconds(400);
  v1::Alert back = FromAlertRow(ToAlertRow(a));
  EXPECT_EQ(back.SerializeAsString(), a.SerializeAsString());
}

// A host of the class "QEMU TCG CPU version 2.5+ / 6.1" as its agent
// reports it, with the seed constants: 128,000 threads, none with a shadow
// stack, B = 32: 4000 passes, V = 3999 + 32 * 3999 * 4000 / 2 + 128,000 =
// 256,067,999 visits. Walk at the seed 88.7 ns: 22.7132315 s + 2 us * 4000 +
// 20 ns * 128,000 = 22.72379151 s.
CommittedReport QemuReport(const std::string& host, uint64_t seq,
                           absl::Time at) {
  SampleHost h;
  h.host_id = host;
  h.threads = 128000;
  h.kernel_release = "6.1.0-28-amd64";
  h.preempt = v1::PREEMPT_MODE_VOLUNTARY;
  v1::HostReport r = SampleReport(h, seq, at);
  r.mutable_snapshot()->mutable_cpus()->set_model_name(
      "QEMU TCG CPU version 2.5+");
  *r.mutable_predictions() = PredictAll(r.snapshot());  // the seed constants
  return {StoredReport::Of(r), at, {}};
}

const v1::AttachPrediction& Graph(const v1::HostReport& r) {
  for (const auto& a : r.predictions().attach()) {
    if (a.probe_kind() == v1::PROBE_KIND_FUNCTION_GRAPH_TRACER) return a;
  }
  static const v1::AttachPrediction none;
  return none;
}

// Canaries of the class at 300, 500 and 400 ns (fixed 1, 3, 2 ms): the
// class prices at the medians, 400 ns and 2 ms.
void AddCanaries(ClassCalibrations& classes) {
  const double visits[] = {300e-9, 500e-9, 400e-9};
  const double fixed[] = {1e-3, 3e-3, 2e-3};
  for (int i = 0; i < 3; ++i) {
    v1::Calibration c;
    c.set_host_id("canary-" + std::to_string(i));
    c.set_hardware_class("QEMU TCG CPU version 2.5+ / 6.1");
    c.set_c_visit_seconds(visits[i]);
    c.set_fixed_seconds(fixed[i]);
    c.mutable_measured_at()->set_seconds(1796139600);
    ASSERT_TRUE(classes.Add(c));
  }
}

// Rules see the report as the index and the queries show it: a host
// without a calibration of its own is priced with its class's constants.
TEST(AlertingTest, RulesSeeTheClassPricedPredictions) {
  std::string dir = testing::NewTempDir("alerting-class");
  absl::StatusOr<std::unique_ptr<SqliteStorage>> storage =
      SqliteStorage::Open(dir + "/t.db", SqliteOptions{});
  ASSERT_TRUE(storage.ok()) << storage.status();
  absl::StatusOr<std::vector<AlertRule>> rules = ParseAlertRules(R"(
rules:
  - name: GraphSlow
    condition: predictions.attach[function_graph_tracer].latency_seconds > 60
)");
  ASSERT_TRUE(rules.ok()) << rules.status();
  ClassCalibrations classes;
  AddCanaries(classes);
  HostIndex index(&classes);
  Alerting::Options opts{absl::Milliseconds(50), {}, nullptr};
  Alerting alerting(*rules, storage->get(), &index, opts);
  ASSERT_TRUE(alerting.Start().ok());
  const absl::Time t0 = absl::Now();
  // guest-1 as sent: walk 22.72379151 s (seed), under 60 s.
  CommittedReport guest = QemuReport("guest-1", 1, t0);
  const v1::AttachPrediction& sent = Graph(*guest.report->report());
  ASSERT_DOUBLE_EQ(sent.visits(), 256067999);
  ASSERT_NEAR(sent.walk_seconds(), 22.72379151, 1e-6);
  ASSERT_LT(sent.latency_seconds(), 60);
  // guest-2 calibrated itself at the seed 88.7 ns: its own constants win,
  // its report is as it came (22.7 s, quiet).
  CommittedReport own = QemuReport("guest-2", 1, t0);
  {
    auto r = std::make_shared<v1::HostReport>(*own.report->report());
    r->mutable_calibration()->set_c_visit_seconds(88.7e-9);
    r->mutable_calibration()->set_fixed_seconds(0);
    r->mutable_calibration()->mutable_measured_at()->set_seconds(1796139600);
    own.report = StoredReport::Of(*r);
  }
  std::vector<CommittedReport> batch = {guest, own};
  PricedBatch priced = Priced(batch, index, storage->get(), &classes);
  alerting.OnCommitted(priced);
  index.Apply(priced);
  // Priced by the class: 400 ns * 256,067,999 = 102.4271996 s + 8 ms +
  // 2.56 ms = 102.4377596 s walk, + the class's 2 ms fixed cost, patching as
  // sent: over 60 s, so guest-1 fires; guest-2 stays quiet.
  std::vector<AlertRow> rows = WaitStored(storage->get(), 1);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].rule, "GraphSlow");
  EXPECT_EQ(rows[0].host_id, "guest-1");
  EXPECT_NEAR(rows[0].value, 102.4377596 + 2e-3 + sent.patch_seconds(), 1e-6);
  // The same number the index shows for the host (GetHost, /metrics).
  std::optional<HostEntry> e = index.Get("guest-1");
  ASSERT_TRUE(e.has_value());
  ASSERT_NE(e->record.calibration, nullptr);
  const StoredAttach* shown =
      e->record.Attach(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  ASSERT_NE(shown, nullptr);
  EXPECT_DOUBLE_EQ(shown->latency_seconds, rows[0].value);
}

// `increased` compares priced values: the stored previous report (read back
// after a restart) and the kept one are priced as the new one is.
TEST(AlertingTest, IncreasedComparesClassPricedValues) {
  std::string dir = testing::NewTempDir("alerting-class-increase");
  absl::StatusOr<std::unique_ptr<SqliteStorage>> storage =
      SqliteStorage::Open(dir + "/t.db", SqliteOptions{});
  ASSERT_TRUE(storage.ok()) << storage.status();
  absl::StatusOr<std::vector<AlertRule>> rules = ParseAlertRules(R"(
rules:
  - name: GraphSlower
    condition: predictions.attach[function_graph_tracer].walk_seconds increased
)");
  ASSERT_TRUE(rules.ok()) << rules.status();
  const absl::Time t0 = absl::Now();
  // Stored before this server started: seq 1 as its agent sent it (22.7 s).
  CommittedReport first = QemuReport("guest-1", 1, t0);
  ReportRow row;
  row.host_id = "guest-1";
  row.seq = 1;
  row.blob = first.report->report()->SerializeAsString();
  ASSERT_TRUE((*storage)->WriteBatch({row}).ok());
  ClassCalibrations classes;
  AddCanaries(classes);
  HostIndex index(&classes);
  ASSERT_TRUE(index.LoadFrom(**storage).ok());
  ASSERT_EQ(index.LatestSeq("guest-1"), 1u);
  Alerting::Options opts{absl::Milliseconds(50), {}, nullptr};
  Alerting alerting(*rules, storage->get(), &index, opts);
  ASSERT_TRUE(alerting.Start().ok());
  // seq 2 priced at 102.4377596 s, compared with seq 1 read from the store
  // and priced alike (102.4377596 s): not increased. Compared with the
  // stored report as sent (22.7 s) it would fire.
  std::vector<CommittedReport> second = {QemuReport("guest-1", 2, t0)};
  {
    PricedBatch priced = Priced(second, index, storage->get(), &classes);
    alerting.OnCommitted(priced);
    index.Apply(priced);
  }
  // seq 3 compared with the kept value of seq 2, priced: not increased.
  std::vector<CommittedReport> third = {QemuReport("guest-1", 3, t0)};
  {
    PricedBatch priced = Priced(third, index, storage->get(), &classes);
    alerting.OnCommitted(priced);
    index.Apply(priced);
  }
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_TRUE(alerting.Alerts().empty());
  // A fourth canary at 600 ns moves the median to (400 + 500) / 2 = 450 ns:
  // 450 ns * 256,067,999 = 115.23059955 s + 10.56 ms = 115.24115955 s,
  // increased.
  v1::Calibration c;
  c.set_host_id("canary-3");
  c.set_hardware_class("QEMU TCG CPU version 2.5+ / 6.1");
  c.set_c_visit_seconds(600e-9);
  c.set_fixed_seconds(2e-3);
  c.mutable_measured_at()->set_seconds(1796139600);
  ASSERT_TRUE(classes.Add(c));
  std::vector<CommittedReport> fourth = {QemuReport("guest-1", 4, t0)};
  {
    PricedBatch priced = Priced(fourth, index, storage->get(), &classes);
    alerting.OnCommitted(priced);
    index.Apply(priced);
  }
  std::vector<AlertRow> rows = WaitStored(storage->get(), 1);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].rule, "GraphSlower");
  EXPECT_NEAR(rows[0].value, 115.24115955, 1e-6);
}

}  // namespace
}  // namespace tracehealth::server

namespace tracehealth::server {
namespace {

std::vector<AlertRule> ForRules() {
  absl::StatusOr<std::vector<AlertRule>> rules = ParseAlertRules(R"(
rules:
  - name: Slow
    condition: predictions.attach[kprobe_multi_return].latency_seconds > 5
    for: 1h
)");
  EXPECT_TRUE(rules.ok()) << rules.status();
  return *rules;
}

// Two servers ("replicas") on one store both evaluate host h: the episode
// is stored once, at the first one's time, and the second takes it.
TEST(AlertingTest, TwoEvaluatorsOfOneHostStoreOneEpisode) {
  std::string dir = testing::NewTempDir("alerting-cas");
  absl::StatusOr<std::unique_ptr<SqliteStorage>> storage =
      SqliteStorage::Open(dir + "/t.db", SqliteOptions{});
  ASSERT_TRUE(storage.ok()) << storage.status();
  SqliteStorage* store = storage->get();
  HostIndex index_a, index_b;
  Alerting::Options opts{absl::Milliseconds(50), {}, store};
  Alerting a(ForRules(), store, &index_a, opts);
  Alerting b(ForRules(), store, &index_b, opts);
  ASSERT_TRUE(a.Start().ok());
  ASSERT_TRUE(b.Start().ok());
  // Whole seconds, so active_since compares exactly; `for: 1h` keeps both
  // pending.
  const absl::Time t0 = absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now()));
  std::vector<CommittedReport> first = {Report("h", 1, 9, 0, t0)};
  a.OnCommitted(Priced(first, index_a));
  std::vector<AlertRow> rows = WaitStored(store, 1);
  ASSERT_EQ(rows.size(), 1u);
  // B sees the next report 10 s later and would start its own episode.
  std::vector<CommittedReport> second = {
      Report("h", 2, 9, 0, t0 + absl::Seconds(10))};
  b.OnCommitted(Priced(second, index_b));
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  std::vector<v1::Alert> b_live;
  while (absl::Now() < deadline) {
    b_live = b.Alerts();
    if (b_live.size() == 1 &&
        b_live[0].active_since().seconds() == absl::ToUnixSeconds(t0)) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_EQ(b_live.size(), 1u);
  // B took A's episode (active since t0), not its own (t0 + 10 s).
  EXPECT_EQ(b_live[0].active_since().seconds(), absl::ToUnixSeconds(t0));
  rows = WaitStored(store, 1);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].active_since_ns, absl::ToUnixNanos(t0));
  EXPECT_EQ(rows[0].state, 1);  // pending
  // The condition clears (on B): the pending alert leaves the store too.
  std::vector<CommittedReport> cleared = {
      Report("h", 3, 1, 0, t0 + absl::Seconds(20))};
  b.OnCommitted(Priced(cleared, index_b));
  rows = WaitStored(store, 0);
  EXPECT_TRUE(rows.empty());
}

}  // namespace
}  // namespace tracehealth::server
