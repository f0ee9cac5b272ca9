#include "server/index/host_index.h"

#include <algorithm>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"

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

absl::Status HostIndex::LoadFrom(
    ReportStore& storage,
    const std::function<void(const v1::HostReport&)>& also) {
  std::array<absl::node_hash_map<std::string, HostEntry>, kShards> loaded;
  absl::Status first_error;
  // One message, parsed into again and again: its memory is reused.
  v1::HostReport report;
  absl::Status st = storage.LoadLatest([&](LatestRow& row) {
    if (!report.ParseFromString(row.blob)) {
      if (first_error.ok()) {
        first_error = absl::DataLossError(
            absl::StrCat("stored report ", row.host_id, "/", row.latest_seq,
                         " does not parse"));
      }
      return;
    }
    if (also) also(report);
    HostEntry e;
    e.record = MakeHostRecord(report, tables_, &identities_);
    e.record.seq = row.latest_seq;
    e.first_seen = absl::FromUnixNanos(row.first_seen_ns);
    e.last_seen = absl::FromUnixNanos(row.last_seen_ns);
    e.reports = row.reports;
    const size_t shard = absl::Hash<absl::string_view>()(row.host_id) % kShards;
    loaded[shard].insert_or_assign(std::move(row.host_id), std::move(e));
  });
  if (!st.ok()) return st;
  for (int i = 0; i < kShards; ++i) {
    absl::MutexLock lock(&shards_[i].mu);
    shards_[i].hosts = std::move(loaded[i]);
  }
  return first_error;
}

void HostIndex::Apply(absl::Span<const CommittedReport> reports) {
  for (const CommittedReport& c : reports) {
    const std::string& host = c.report->host_id();
    // Outside the lock: the parse (shared with alert rules, which may have
    // done it) and building the record.
    std::shared_ptr<const v1::HostReport> parsed = c.report->report();
    HostRecord record = MakeHostRecord(*parsed, tables_, &identities_);
    record.seq = c.report->seq();
    Shard& shard = ShardOf(host);
    absl::MutexLock lock(&shard.mu);
    auto [it, inserted] = shard.hosts.try_emplace(host);
    HostEntry& e = it->second;
    if (inserted) {
      e.record = std::move(record);
      e.first_seen = c.received_at;
      e.last_seen = c.received_at;
      e.reports = 1;
      continue;
    }
    if (record.seq > e.record.seq) e.record = std::move(record);
    e.first_seen = std::min(e.first_seen, c.received_at);
    e.last_seen = std::max(e.last_seen, c.received_at);
    e.reports++;
  }
}

absl::Status HostIndex::Merge(LatestRow& row) {
  // One message per thread, parsed into again and again.
  thread_local v1::HostReport report;
  if (!report.ParseFromString(row.blob)) {
    return absl::DataLossError(
        absl::StrCat("report ", row.host_id, "/", row.latest_seq,
                     " from the change feed does not parse"));
  }
  HostRecord record = MakeHostRecord(report, tables_, &identities_);
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
