// ReportPricer: prices each committed batch once for everything that
// follows the commit. Alert rules (server/alerts/alerting.h), the event
// recorder (server/events/event_recorder.h) and the host index
// (server/index/host_index.h) take the batch's reports, and each host's
// previous report, from the PricedBatch it makes; none of them prices a
// report or reads a previous one itself.
//
// - A report as shown (calibrated_report.h WithClassCalibration): as its
//   agent sent it, or, for a host without a calibration of its own in a
//   hardware class with canaries, a copy priced with the class's
//   constants: one model run per such report, made in Price and nowhere
//   else on the commit path. The parse is ingest's (StoredReport), so a
//   report its agent priced costs a class lookup only.
// - A host's previous report: its newest committed report before the batch
//   (Options::latest_seq, asked once per host in Price, before the index
//   applies the batch), read from the store the first time someone asks
//   (PricedBatch::Previous) and priced the same way; at most one read per
//   host and batch, however many ask.
//
// Thread safety: ReportPricer is thread-safe (its counters are atomic). A
// PricedBatch is used by one thread at a time (the writer's publisher); it
// refers to the batch it was made from, which must outlive it.
#ifndef TRACEHEALTH_SERVER_CALIBRATION_REPORT_PRICER_H_
#define TRACEHEALTH_SERVER_CALIBRATION_REPORT_PRICER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/calibration/class_calibrations.h"
#include "server/report/committed_report.h"

namespace tracehealth::server {

class PricedBatch {
 public:
  // The host's newest report before the batch as shown; null when it has
  // none or it cannot be read.
  using ReadPrevious = std::function<std::shared_ptr<const v1::HostReport>(
      const std::string& host, uint64_t seq)>;

  // `shown[i]` is `committed[i]` as shown (never null); `previous_seq`
  // each host's newest seq before the batch (absent: 0); `read` reads
  // one (null: none is read).
  PricedBatch(absl::Span<const CommittedReport> committed,
              std::vector<std::shared_ptr<const v1::HostReport>> shown,
              absl::flat_hash_map<std::string, uint64_t> previous_seq,
              ReadPrevious read);
  PricedBatch(PricedBatch&&) = default;

  size_t size() const { return shown_.size(); }
  const CommittedReport& committed(size_t i) const { return committed_[i]; }
  // Report i as the index, the queries and the rules show it; never null.
  const std::shared_ptr<const v1::HostReport>& shown(size_t i) const {
    return shown_[i];
  }
  // Whether shown(i) carries its class's constants rather than being the
  // report as its agent sent it.
  bool class_priced(size_t i) const;

  // The host's newest committed seq before the batch; 0 when none.
  uint64_t PreviousSeq(const std::string& host) const;
  // That report as shown (read and priced the first time it is asked for);
  // null when there is none or it cannot be read.
  std::shared_ptr<const v1::HostReport> Previous(const std::string& host) const;

 private:
  absl::Span<const CommittedReport> committed_;
  std::vector<std::shared_ptr<const v1::HostReport>> shown_;
  absl::flat_hash_map<std::string, uint64_t> previous_seq_;
  ReadPrevious read_;
  mutable absl::flat_hash_map<std::string,
                              std::shared_ptr<const v1::HostReport>>
      previous_;
};

// `committed` as it is (nothing priced), for callers without classes;
// `previous_seq` and `read` as in the constructor.
PricedBatch AsCommitted(
    absl::Span<const CommittedReport> committed,
    absl::flat_hash_map<std::string, uint64_t> previous_seq = {},
    PricedBatch::ReadPrevious read = nullptr);

class ReportPricer {
 public:
  struct Options {
    // Not owned, may be null (no classes: nothing is priced).
    const ClassCalibrations* classes = nullptr;
    // A host's newest committed seq (0: none); the index's, asked before it
    // applies the batch. Null: no previous reports.
    std::function<uint64_t(const std::string& host)> latest_seq;
    // The stored bytes of a report (ReportStore::GetReport). Null: previous
    // reports are not read.
    std::function<absl::StatusOr<std::string>(const std::string& host,
                                              uint64_t seq)>
        read_report;
  };

  // What pricing has cost so far.
  struct Stats {
    uint64_t batches = 0;
    uint64_t reports = 0;
    // Reports priced with their class's constants: one model run each
    // (committed ones and previous ones read).
    uint64_t model_runs = 0;
    // Previous reports read from the store.
    uint64_t previous_reads = 0;
  };

  explicit ReportPricer(Options options);

  // Prices `batch`, which must outlive the result.
  PricedBatch Price(absl::Span<const CommittedReport> batch) const;

  Stats stats() const;

 private:
  struct Counters {
    std::atomic<uint64_t> batches{0}, reports{0}, model_runs{0},
        previous_reads{0};
  };
  // `r` as shown, counting a model run when it is priced.
  static std::shared_ptr<const v1::HostReport> Shown(
      std::shared_ptr<const v1::HostReport> r, const ClassCalibrations* classes,
      Counters& counters);

  const Options options_;
  const std::shared_ptr<Counters> counters_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_CALIBRATION_REPORT_PRICER_H_
