#include "server/events/event_recorder.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/proto_time.h"
#include "gtest/gtest.h"
#include "server/metrics/text_exposition.h"
#include "server/report/stored_report.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/sqlite/sqlite_test_util.h"

namespace tracehealth::server {
namespace {

// Reports every 10 s from T0.
const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

v1::HostReport Report(uint64_t seq, absl::Time observed, v1::Risk attach,
                      v1::Risk purge) {
  v1::HostReport r;
  r.set_host_id("h1");
  r.set_seq(seq);
  *r.mutable_observed_at() = ToProto(observed);
  v1::AttachPrediction* a = r.mutable_predictions()->add_attach();
  a->set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  a->set_uses_fgraph(true);
  a->set_risk(attach);
  v1::VmapPurgePrediction* v = r.mutable_predictions()->mutable_vmap_purge();
  v->set_applies(true);
  v->set_risk(purge);
  return r;
}

v1::ObservedEvent* AddLockup(v1::HostReport* r, uint64_t kmsg_seq,
                             absl::Time logged, v1::EventModel model) {
  v1::ObservedEvent* e = r->add_observed_events();
  e->set_kmsg_seq(kmsg_seq);
  e->set_boot_id("b0");
  *e->mutable_logged_at() = ToProto(logged);
  e->set_kind(v1::OBSERVED_EVENT_KIND_SOFT_LOCKUP);
  e->set_seconds(22);
  e->set_model(model);
  return e;
}

class EventRecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = SqliteStorage::Open(NewDbPath());
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = *std::move(s);
    recorder_ = std::make_unique<EventRecorder>(
        store_.get(), store_.get(), &metrics_,
        [this](const std::string& line) { log_.push_back(line); });
  }

  // Stores `r` as the report store would have it.
  void Store(const v1::HostReport& r) {
    ReportRow row;
    row.host_id = r.host_id();
    row.seq = r.seq();
    row.observed_at_ns = absl::ToUnixNanos(FromProto(r.observed_at()));
    row.received_at_ns = row.observed_at_ns;
    row.blob = r.SerializeAsString();
    ASSERT_TRUE(store_->WriteBatch({row}).ok());
  }

  // Records `r` as committed, with `previous` as the index's report.
  void Record(const v1::HostReport& r,
              std::shared_ptr<const v1::HostReport> previous) {
    Store(r);
    CommittedReport c{StoredReport::Of(r), kT0 + absl::Seconds(100)};
    // The index's report is seq 1 (any: the read is this test's).
    recorder_->Record(AsCommitted(absl::MakeConstSpan(&c, 1), {{"h1", 1}},
                                  [&](const std::string& host, uint64_t) {
                                    EXPECT_EQ(host, "h1");
                                    return previous;
                                  }));
  }

  std::vector<v1::StoredEvent> Events() {
    EventFilter f;
    f.to_ns = absl::ToUnixNanos(kT0 + absl::Hours(1));
    auto rows = store_->ListEvents(f);
    EXPECT_TRUE(rows.ok()) << rows.status();
    std::vector<v1::StoredEvent> out;
    for (const EventRow& row : rows.ok() ? *rows : std::vector<EventRow>()) {
      out.emplace_back();
      EXPECT_TRUE(out.back().ParseFromString(row.blob));
    }
    return out;
  }

  // The counter's value in /metrics, "" when the series is absent.
  std::string Count(const std::string& kind, const std::string& model,
                    const std::string& predicted) {
    const std::string text = SerializeMetrics({metrics_.registry()});
    const std::string series = absl::StrCat(
        "tracehealth_observed_events_total{kind=\"", kind, "\",model=\"", model,
        "\",predicted=\"", predicted, "\"} ");
    size_t at = text.find(series);
    if (at == std::string::npos) return "";
    at += series.size();
    return text.substr(at, text.find('\n', at) - at);
  }

  ServerMetrics metrics_;
  std::unique_ptr<SqliteStorage> store_;
  std::unique_ptr<EventRecorder> recorder_;
  std::vector<std::string> log_;
};

TEST_F(EventRecorderTest, ComparesWithThePreviousReportAndCountsOnce) {
  auto previous = std::make_shared<v1::HostReport>(
      Report(10, kT0, v1::RISK_STALL, v1::RISK_NONE));
  Store(*previous);
  // Logged at T0+15 s, between seq 10 (T0) and seq 11 (T0+20 s): seq 10's
  // prediction (kprobe_multi_return STALL) was current.
  v1::HostReport carrier =
      Report(11, kT0 + absl::Seconds(20), v1::RISK_NONE, v1::RISK_NONE);
  AddLockup(&carrier, 812, kT0 + absl::Seconds(15),
            v1::EVENT_MODEL_FGRAPH_ATTACH);
  EXPECT_EQ(Count("soft_lockup", "fgraph", "yes"), "0");
  Record(carrier, previous);
  std::vector<v1::StoredEvent> got = Events();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].host_id(), "h1");
  EXPECT_EQ(got[0].event().kmsg_seq(), 812u);
  EXPECT_EQ(got[0].predicted(), v1::EVENT_PREDICTION_YES);
  EXPECT_EQ(got[0].predicted_risk(), v1::RISK_STALL);
  ASSERT_TRUE(got[0].has_prediction_seq());
  EXPECT_EQ(got[0].prediction_seq(), 10u);
  EXPECT_EQ(FromProto(got[0].prediction_observed_at()), kT0);
  EXPECT_EQ(got[0].report_seq(), 11u);
  EXPECT_EQ(FromProto(got[0].received_at()), kT0 + absl::Seconds(100));
  EXPECT_EQ(Count("soft_lockup", "fgraph", "yes"), "1");
  // The agent resends the event in a later report: stored and counted once.
  v1::HostReport again =
      Report(12, kT0 + absl::Seconds(30), v1::RISK_NONE, v1::RISK_NONE);
  AddLockup(&again, 812, kT0 + absl::Seconds(15),
            v1::EVENT_MODEL_FGRAPH_ATTACH);
  Record(again, std::make_shared<v1::HostReport>(carrier));
  EXPECT_EQ(Events().size(), 1u);
  EXPECT_EQ(Count("soft_lockup", "fgraph", "yes"), "1");
  EXPECT_EQ(Count("soft_lockup", "fgraph", "no"), "0");
  EXPECT_TRUE(log_.empty());
}

TEST_F(EventRecorderTest, TheCarrierWhenItWasObservedBeforeTheEvent) {
  auto previous = std::make_shared<v1::HostReport>(
      Report(10, kT0, v1::RISK_STALL, v1::RISK_NONE));
  // Logged at T0+25 s, after the carrier's T0+20 s snapshot: the carrier's
  // prediction (NONE) was current, and it is a miss.
  v1::HostReport carrier =
      Report(11, kT0 + absl::Seconds(20), v1::RISK_NONE, v1::RISK_NONE);
  AddLockup(&carrier, 900, kT0 + absl::Seconds(25),
            v1::EVENT_MODEL_FGRAPH_ATTACH);
  Record(carrier, previous);
  std::vector<v1::StoredEvent> got = Events();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].predicted(), v1::EVENT_PREDICTION_NO);
  EXPECT_EQ(got[0].predicted_risk(), v1::RISK_NONE);
  EXPECT_EQ(got[0].prediction_seq(), 11u);
  EXPECT_EQ(Count("soft_lockup", "fgraph", "no"), "1");
}

TEST_F(EventRecorderTest, AnOlderEventIsComparedWithTheStoredHistory) {
  // Stored: seq 5 at T0-100 s (purge WARNING), seq 6 at T0-60 s (purge
  // NONE). The event, logged at T0-70 s, reaches the server only with seq 11
  // (T0+20 s), after seq 10 (T0): seq 5 was current then.
  Store(Report(5, kT0 - absl::Seconds(100), v1::RISK_NONE, v1::RISK_WARNING));
  Store(Report(6, kT0 - absl::Seconds(60), v1::RISK_NONE, v1::RISK_NONE));
  auto previous = std::make_shared<v1::HostReport>(
      Report(10, kT0, v1::RISK_NONE, v1::RISK_NONE));
  Store(*previous);
  v1::HostReport carrier =
      Report(11, kT0 + absl::Seconds(20), v1::RISK_NONE, v1::RISK_NONE);
  AddLockup(&carrier, 40, kT0 - absl::Seconds(70), v1::EVENT_MODEL_VMAP_PURGE);
  // And one logged before every stored report: nothing to compare with.
  AddLockup(&carrier, 41, kT0 - absl::Hours(30), v1::EVENT_MODEL_VMAP_PURGE);
  Record(carrier, previous);
  std::vector<v1::StoredEvent> got = Events();  // newest logged first
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].event().kmsg_seq(), 40u);
  EXPECT_EQ(got[0].predicted(), v1::EVENT_PREDICTION_YES);
  EXPECT_EQ(got[0].prediction_seq(), 5u);
  EXPECT_EQ(got[1].event().kmsg_seq(), 41u);
  EXPECT_EQ(got[1].predicted(), v1::EVENT_PREDICTION_UNKNOWN);
  EXPECT_FALSE(got[1].has_prediction_seq());
  EXPECT_EQ(Count("soft_lockup", "vmap", "yes"), "1");
  EXPECT_EQ(Count("soft_lockup", "vmap", "unknown"), "1");
}

TEST_F(EventRecorderTest, AnEarlierReportOfTheBatchIsThePrevious) {
  // Seq 10 (STALL) and seq 11 (carrying an event logged between them) are
  // committed together; the index knows neither.
  v1::HostReport first = Report(10, kT0, v1::RISK_STALL, v1::RISK_NONE);
  v1::HostReport second =
      Report(11, kT0 + absl::Seconds(20), v1::RISK_NONE, v1::RISK_NONE);
  AddLockup(&second, 7, kT0 + absl::Seconds(5), v1::EVENT_MODEL_FGRAPH_ATTACH);
  Store(first);
  Store(second);
  std::vector<CommittedReport> batch = {{StoredReport::Of(first), kT0},
                                        {StoredReport::Of(second), kT0}};
  recorder_->Record(AsCommitted(batch));
  std::vector<v1::StoredEvent> got = Events();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].prediction_seq(), 10u);
  EXPECT_EQ(got[0].predicted(), v1::EVENT_PREDICTION_YES);
}

TEST_F(EventRecorderTest, EventsWithoutANameOrTimeAreSkipped) {
  v1::HostReport carrier =
      Report(11, kT0 + absl::Seconds(20), v1::RISK_NONE, v1::RISK_NONE);
  AddLockup(&carrier, 1, kT0, v1::EVENT_MODEL_FGRAPH_ATTACH)->clear_boot_id();
  AddLockup(&carrier, 2, kT0, v1::EVENT_MODEL_FGRAPH_ATTACH)->clear_logged_at();
  AddLockup(&carrier, 3, kT0, v1::EVENT_MODEL_FGRAPH_ATTACH)
      ->set_kind(v1::OBSERVED_EVENT_KIND_UNSPECIFIED);
  AddLockup(&carrier, 4, kT0, v1::EVENT_MODEL_FGRAPH_ATTACH)
      ->set_kind(static_cast<v1::ObservedEventKind>(99));
  AddLockup(&carrier, 5, kT0 + absl::Seconds(21),
            v1::EVENT_MODEL_FGRAPH_ATTACH);
  Record(carrier, nullptr);
  std::vector<v1::StoredEvent> got = Events();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].event().kmsg_seq(), 5u);
  EXPECT_EQ(log_, std::vector<std::string>{
                      "4 observed events without a kind, boot id or time "
                      "skipped"});
}

TEST_F(EventRecorderTest, AtMostSixtyFourEventsOfAReport) {
  v1::HostReport carrier =
      Report(11, kT0 + absl::Seconds(20), v1::RISK_NONE, v1::RISK_NONE);
  for (uint64_t seq = 1; seq <= 65; ++seq) {
    AddLockup(&carrier, seq, kT0 + absl::Seconds(21),
              v1::EVENT_MODEL_FGRAPH_ATTACH);
  }
  Record(carrier, nullptr);
  EXPECT_EQ(Events().size(), 64u);  // seq 65 is past the bound
  EXPECT_EQ(Count("soft_lockup", "fgraph", "no"), "64");
}

}  // namespace
}  // namespace tracehealth::server
