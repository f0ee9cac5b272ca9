#include "server/calibration/report_pricer.h"

#include <utility>

#include "server/calibration/calibrated_report.h"

namespace tracehealth::server {

PricedBatch::PricedBatch(
    absl::Span<const CommittedReport> committed,
    std::vector<std::shared_ptr<const v1::HostReport>> shown,
    absl::flat_hash_map<std::string, uint64_t> previous_seq, ReadPrevious read)
    : committed_(committed),
      shown_(std::move(shown)),
      previous_seq_(std::move(previous_seq)),
      read_(std::move(read)) {}

bool PricedBatch::class_priced(size_t i) const {
  return shown_[i].get() != committed_[i].report->report().get();
}

uint64_t PricedBatch::PreviousSeq(const std::string& host) const {
  auto it = previous_seq_.find(host);
  return it == previous_seq_.end() ? 0 : it->second;
}

std::shared_ptr<const v1::HostReport> PricedBatch::Previous(
    const std::string& host) const {
  auto [it, inserted] = previous_.try_emplace(host);
  if (inserted) {
    const uint64_t seq = PreviousSeq(host);
    if (seq > 0 && read_) it->second = read_(host, seq);
  }
  return it->second;
}

PricedBatch AsCommitted(absl::Span<const CommittedReport> committed,
                        absl::flat_hash_map<std::string, uint64_t> previous_seq,
                        PricedBatch::ReadPrevious read) {
  std::vector<std::shared_ptr<const v1::HostReport>> shown;
  shown.reserve(committed.size());
  for (const CommittedReport& c : committed)
    shown.push_back(c.report->report());
  return PricedBatch(committed, std::move(shown), std::move(previous_seq),
                     std::move(read));
}

ReportPricer::ReportPricer(Options options)
    : options_(std::move(options)), counters_(std::make_shared<Counters>()) {}

std::shared_ptr<const v1::HostReport> ReportPricer::Shown(
    std::shared_ptr<const v1::HostReport> r, const ClassCalibrations* classes,
    Counters& counters) {
  const v1::HostReport* before = r.get();
  std::shared_ptr<const v1::HostReport> shown =
      WithClassCalibration(std::move(r), classes);
  if (shown.get() != before) ++counters.model_runs;
  return shown;
}

PricedBatch ReportPricer::Price(absl::Span<const CommittedReport> batch) const {
  ++counters_->batches;
  counters_->reports += batch.size();
  std::vector<std::shared_ptr<const v1::HostReport>> shown;
  shown.reserve(batch.size());
  absl::flat_hash_map<std::string, uint64_t> previous_seq;
  for (const CommittedReport& c : batch) {
    shown.push_back(Shown(c.report->report(), options_.classes, *counters_));
    if (options_.latest_seq) {
      auto [it, inserted] = previous_seq.try_emplace(c.report->host_id(), 0);
      if (inserted) it->second = options_.latest_seq(c.report->host_id());
    }
  }
  PricedBatch::ReadPrevious read;
  if (options_.read_report) {
    // Copies: the batch may outlive a pricer made for one call.
    read = [read_report = options_.read_report, classes = options_.classes,
            counters = counters_](
               const std::string& host,
               uint64_t seq) -> std::shared_ptr<const v1::HostReport> {
      ++counters->previous_reads;
      absl::StatusOr<std::string> blob = read_report(host, seq);
      if (!blob.ok()) return nullptr;
      auto report = std::make_shared<v1::HostReport>();
      if (!report->ParseFromString(*blob)) return nullptr;
      return Shown(std::move(report), classes, *counters);
    };
  }
  return PricedBatch(batch, std::move(shown), std::move(previous_seq),
                     std::move(read));
}

ReportPricer::Stats ReportPricer::stats() const {
  Stats s;
  s.batches = counters_->batches.load();
  s.reports = counters_->reports.load();
  s.model_runs = counters_->model_runs.load();
  s.previous_reads = counters_->previous_reads.load();
  return s;
}

}  // namespace tracehealth::server
