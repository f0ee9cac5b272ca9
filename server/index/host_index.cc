#include "server/index/host_index.h"

#include <algorithm>
#include <deque>
#include <thread>
#include <vector>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"

namespace tracehealth::server {

const HostIndex::Shard& HostIndex::ShardOf(absl::string_view host_id) const {
  return shards_[absl::Hash<absl::string_view>()(host_id) % kShards];
}

HostIndex::Shard& HostIndex::ShardOf(absl::string_view host_id) {
  return shards_[absl::Hash<absl::string_view>()(host_id) % kShards];
}

absl::Status HostIndex::LoadFrom(
    ReportStore& storage,
    const std::function<void(const v1::HostReport&)>& also) {
  using Shards = std::array<absl::node_hash_map<std::string, HostEntry>, kShards>;
  // The store is read on this thread while kLoadThreads threads parse the
  // rows and build the records (a restart is mostly parsing), each into its
  // own shards, merged at the end. Rows go over in batches, a few at a time.
  constexpr int kLoadThreads = 2;
  constexpr size_t kBatchRows = 512;
  constexpr size_t kMaxQueued = 8;
  absl::Mutex mu;
  std::deque<std::vector<LatestRow>> queue;  // guarded by mu
  bool done = false;                         // guarded by mu
  absl::Status first_error;                  // guarded by mu
  std::vector<Shards> parsed(kLoadThreads);
  auto work = [&](Shards& out) {
    // One message, parsed into again and again: its memory is reused.
    v1::HostReport report;
    while (true) {
      std::vector<LatestRow> batch;
      {
        absl::MutexLock lock(&mu);
        auto ready = [&] { return !queue.empty() || done; };
        mu.Await(absl::Condition(&ready));
        if (queue.empty()) return;
        batch = std::move(queue.front());
        queue.pop_front();
      }
      for (LatestRow& row : batch) {
        if (!report.ParseFromString(row.blob)) {
          absl::MutexLock lock(&mu);
          if (first_error.ok()) {
            first_error = absl::DataLossError(
                absl::StrCat("stored report ", row.host_id, "/",
                             row.latest_seq, " does not parse"));
          }
          continue;
        }
        if (also) also(report);
        HostEntry e;
        e.record = MakeHostRecord(report, tables_);
        e.record.seq = row.latest_seq;
        e.first_seen = absl::FromUnixNanos(row.first_seen_ns);
        e.last_seen = absl::FromUnixNanos(row.last_seen_ns);
        e.reports = row.reports;
        const size_t shard =
            absl::Hash<absl::string_view>()(row.host_id) % kShards;
        out[shard].insert_or_assign(std::move(row.host_id), std::move(e));
      }
    }
  };
  std::vector<std::thread> workers;
  for (int i = 0; i < kLoadThreads; ++i) {
    workers.emplace_back(work, std::ref(parsed[i]));
  }
  std::vector<LatestRow> batch;
  auto flush = [&] {
    if (batch.empty()) return;
    absl::MutexLock lock(&mu);
    auto room = [&] { return queue.size() < kMaxQueued; };
    mu.Await(absl::Condition(&room));
    queue.push_back(std::move(batch));
    batch = std::vector<LatestRow>();
    batch.reserve(kBatchRows);
  };
  batch.reserve(kBatchRows);
  absl::Status st = storage.LoadLatest([&](LatestRow& row) {
    batch.push_back(std::move(row));
    if (batch.size() == kBatchRows) flush();
  });
  flush();
  {
    absl::MutexLock lock(&mu);
    done = true;
  }
  for (std::thread& t : workers) t.join();
  if (!st.ok()) return st;
  for (int i = 0; i < kShards; ++i) {
    absl::node_hash_map<std::string, HostEntry> loaded;
    for (Shards& p : parsed) loaded.merge(p[i]);
    absl::MutexLock lock(&shards_[i].mu);
    shards_[i].hosts = std::move(loaded);
  }
  absl::MutexLock lock(&mu);
  return first_error;
}

void HostIndex::Apply(absl::Span<const CommittedReport> reports) {
  for (const CommittedReport& c : reports) {
    const std::string& host = c.report->host_id();
    // Outside the lock: the parse (shared with alert rules, which may have
    // done it) and building the record.
    std::shared_ptr<const v1::HostReport> parsed = c.report->report();
    HostRecord record = MakeHostRecord(*parsed, tables_);
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
  for (const auto& [id, e] : s.hosts) fn(id, e);
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
