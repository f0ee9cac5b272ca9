#include "server/index/host_index.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/models/fgraph/hardware_class.h"
#include "common/status.h"
#include "server/calibration/calibrated_report.h"
#include "server/index/host_record_codec.h"

namespace tracehealth::server {
namespace {

// Hosts between the one a scan prefetches and the one it visits.
constexpr int kPrefetchAhead = 4;

}  // namespace

const HostIndex::Shard& HostIndex::ShardOf(absl::string_view host_id) const {
  return shards_[absl::Hash<absl::string_view>()(host_id) % kShards];
}

HostIndex::Shard& HostIndex::ShardOf(absl::string_view host_id) {
  return shards_[absl::Hash<absl::string_view>()(host_id) % kShards];
}

absl::Status HostIndex::LoadFrom(ReportStore& storage, LoadStats* stats) {
  std::array<absl::node_hash_map<std::string, HostEntry>, kShards> loaded;
  LoadStats counts;
  absl::Status first_error;
  auto fail = [&first_error](absl::Status st) {
    if (first_error.ok()) first_error = std::move(st);
  };
  auto keep = [&loaded](LatestRow& row, HostRecord record) {
    HostEntry e;
    e.record = std::move(record);
    e.record.seq = row.latest_seq;
    e.first_seen = absl::FromUnixNanos(row.first_seen_ns);
    e.last_seen = absl::FromUnixNanos(row.last_seen_ns);
    e.reports = row.reports;
    const size_t shard = absl::Hash<absl::string_view>()(row.host_id) % kShards;
    loaded[shard].insert_or_assign(std::move(row.host_id), std::move(e));
  };
  // One message, parsed into again and again: its memory is reused.
  v1::HostReport report;
  auto rebuild = [&](LatestRow& row, absl::string_view blob) {
    if (!report.ParseFromArray(blob.data(), static_cast<int>(blob.size()))) {
      fail(
          absl::DataLossError(absl::StrCat("stored report ", row.host_id, "/",
                                           row.latest_seq, " does not parse")));
      return;
    }
    counts.from_reports++;
    keep(row, RecordOf(report));
  };
  // Hosts whose record is not usable: their reports are read after the
  // scan (the store is not called back from inside it).
  std::vector<LatestRow> unusable;
  absl::Status st = storage.LoadLatest([&](LatestRow& row) {
    if (row.record.empty()) {
      counts.without_record++;
      rebuild(row, row.blob);
      return;
    }
    absl::StatusOr<HostRecord> record =
        DecodeHostRecord(row.record, tables_, &identities_);
    if (!record.ok()) {
      if (counts.first_unusable.ok()) counts.first_unusable = record.status();
      std::string().swap(row.record);
      unusable.push_back(std::move(row));
      return;
    }
    if (ClassWouldPrice(*record)) {
      // Its predictions are recomputed with the class's constants from the
      // whole report (RecordOf).
      counts.class_priced++;
      std::string().swap(row.record);
      unusable.push_back(std::move(row));
      return;
    }
    counts.from_records++;
    keep(row, *std::move(record));
  });
  if (!st.ok()) return st;
  counts.unusable_records = unusable.size() - counts.class_priced;
  for (LatestRow& row : unusable) {
    absl::StatusOr<std::string> blob =
        storage.GetReport(row.host_id, row.latest_seq);
    if (!blob.ok()) {
      fail(blob.status());
      continue;
    }
    rebuild(row, *blob);
  }
  for (int i = 0; i < kShards; ++i) {
    absl::MutexLock lock(&shards_[i].mu);
    shards_[i].hosts = std::move(loaded[i]);
  }
  if (stats != nullptr) *stats = std::move(counts);
  return first_error;
}

bool HostIndex::ClassWouldPrice(const HostRecord& record) const {
  if (classes_ == nullptr || record.calibration != nullptr) return false;
  const std::string cls = HardwareClass(record.inputs.identity->cpu_model,
                                        record.inputs.identity->release);
  if (cls.empty()) return false;
  std::optional<ClassConstants> k = classes_->Of(cls);
  return k.has_value() && k->c_visit_median > 0;
}

HostRecord HostIndex::RecordOf(const v1::HostReport& report) {
  if (classes_ == nullptr || report.has_calibration()) {
    return MakeHostRecord(report, tables_, &identities_);
  }
  // Not owned: `report` outlives the call.
  std::shared_ptr<const v1::HostReport> priced =
      WithClassCalibration(std::shared_ptr<const v1::HostReport>(
                               &report, [](const v1::HostReport*) {}),
                           classes_);
  return MakeHostRecord(*priced, tables_, &identities_);
}

void HostIndex::Apply(absl::Span<const CommittedReport> reports) {
  ReportPricer::Options o;
  o.classes = classes_;
  Apply(ReportPricer(o).Price(reports));
}

void HostIndex::Apply(const PricedBatch& batch) {
  // Per host of the batch: how many reports, when they were received, and
  // the one of its highest seq (the first of equal ones), the only one whose
  // record the index may keep: a backlog sent 64 a message commits many
  // reports of one host together, and a record made for each of them would
  // be replaced before anyone read it.
  struct Host {
    size_t newest = 0;
    uint64_t reports = 0;
    absl::Time first, last;
  };
  absl::flat_hash_map<absl::string_view, Host> hosts;
  std::vector<absl::string_view> order;  // as the batch first names them
  for (size_t i = 0; i < batch.size(); ++i) {
    const CommittedReport& c = batch.committed(i);
    auto [it, inserted] = hosts.try_emplace(c.report->host_id());
    Host& h = it->second;
    if (inserted) {
      order.push_back(it->first);
      h.newest = i;
      h.first = h.last = c.received_at;
    } else {
      if (c.report->seq() > batch.committed(h.newest).report->seq())
        h.newest = i;
      h.first = std::min(h.first, c.received_at);
      h.last = std::max(h.last, c.received_at);
    }
    h.reports++;
  }
  for (absl::string_view name : order) {
    const Host& h = hosts.at(name);
    const CommittedReport& c = batch.committed(h.newest);
    const std::string& host = c.report->host_id();
    // Outside the lock: building the record, from the one stored with the
    // report where it is usable and the report is shown as its agent sent
    // it, else from the report as shown (priced already: no model runs).
    HostRecord record = CommittedRecord(c, *batch.shown(h.newest),
                                        batch.class_priced(h.newest));
    record.seq = c.report->seq();
    Shard& shard = ShardOf(host);
    absl::MutexLock lock(&shard.mu);
    auto [it, inserted] = shard.hosts.try_emplace(host);
    HostEntry& e = it->second;
    if (inserted) {
      e.record = std::move(record);
      e.first_seen = h.first;
      e.last_seen = h.last;
      e.reports = h.reports;
      continue;
    }
    if (record.seq > e.record.seq) e.record = std::move(record);
    e.first_seen = std::min(e.first_seen, h.first);
    e.last_seen = std::max(e.last_seen, h.last);
    e.reports += h.reports;
  }
}

absl::Status HostIndex::Merge(LatestRow& row) {
  TH_ASSIGN_OR_RETURN(HostRecord record, MergedRecord(row));
  record.seq = row.latest_seq;
  const absl::Time first = absl::FromUnixNanos(row.first_seen_ns);
  const absl::Time last = absl::FromUnixNanos(row.last_seen_ns);
  Shard& shard = ShardOf(row.host_id);
  absl::MutexLock lock(&shard.mu);
  auto [it, inserted] = shard.hosts.try_emplace(row.host_id);
  HostEntry& e = it->second;
  if (inserted || row.latest_seq > e.record.seq) e.record = std::move(record);
  e.first_seen = inserted ? first : std::min(e.first_seen, first);
  e.last_seen = inserted ? last : std::max(e.last_seen, last);
  e.reports = std::max(e.reports, row.reports);
  return absl::OkStatus();
}

HostRecord HostIndex::CommittedRecord(const CommittedReport& c,
                                      const v1::HostReport& shown,
                                      bool class_priced) {
  if (!class_priced && !c.record.empty()) {
    absl::StatusOr<HostRecord> record =
        DecodeHostRecord(c.record, tables_, &identities_);
    if (record.ok()) return *std::move(record);
  }
  return MakeHostRecord(shown, tables_, &identities_);
}

absl::StatusOr<HostRecord> HostIndex::MergedRecord(const LatestRow& row) {
  if (!row.record.empty()) {
    absl::StatusOr<HostRecord> record =
        DecodeHostRecord(row.record, tables_, &identities_);
    if (record.ok() && (row.blob.empty() || !ClassWouldPrice(*record))) {
      return record;
    }
  }
  // One message per thread, parsed into again and again.
  thread_local v1::HostReport report;
  if (!report.ParseFromString(row.blob)) {
    return absl::DataLossError(
        absl::StrCat("report ", row.host_id, "/", row.latest_seq,
                     " from the change feed does not parse"));
  }
  return RecordOf(report);
}

std::optional<HostEntry> HostIndex::Get(const std::string& host_id) const {
  std::optional<HostEntry> out;
  Visit(host_id, [&out](const HostEntry& e) { out = e; });
  return out;
}

bool HostIndex::Visit(const std::string& host_id,
                      const std::function<void(const HostEntry&)>& fn) const {
  const Shard& shard = ShardOf(host_id);
  absl::ReaderMutexLock lock(&shard.mu);
  auto it = shard.hosts.find(host_id);
  if (it == shard.hosts.end()) return false;
  fn(it->second);
  return true;
}

uint64_t HostIndex::LatestSeq(const std::string& host_id) const {
  uint64_t seq = 0;
  Visit(host_id, [&seq](const HostEntry& e) { seq = e.record.seq; });
  return seq;
}

void HostIndex::ForEach(
    const std::function<void(const std::string&, const HostEntry&)>& fn) const {
  for (int i = 0; i < kShards; ++i) ForEachInShard(i, fn);
}

void HostIndex::ForEachInShard(
    int shard,
    const std::function<void(const std::string&, const HostEntry&)>& fn) const {
  const Shard& s = shards_[shard];
  absl::ReaderMutexLock lock(&s.mu);
  // The entries lie scattered over the heap, and a fleet-wide scan spends
  // most of its time waiting for each one to be read from memory: the
  // first kScanBytes of the entry kPrefetchAhead hosts on are asked for
  // while this one is used.
  auto ahead = s.hosts.begin();
  for (int i = 0; i < kPrefetchAhead && ahead != s.hosts.end(); ++i) ++ahead;
  for (const auto& [id, e] : s.hosts) {
    if (ahead != s.hosts.end()) {
      const char* p = reinterpret_cast<const char*>(&*ahead);
      for (size_t off = 0; off < kScanBytes; off += 64) {
        __builtin_prefetch(p + off);
      }
      ++ahead;
    }
    fn(id, e);
  }
}

size_t HostIndex::size() const {
  size_t n = 0;
  for (const Shard& s : shards_) {
    absl::ReaderMutexLock lock(&s.mu);
    n += s.hosts.size();
  }
  return n;
}

}  // namespace tracehealth::server
