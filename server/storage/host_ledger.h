// HostLedger: what the store knows about each host's stored reports, kept in
// memory so that ingest needs no per-report index lookup or per-host update.
//
// SqliteStorage answers "is (host, seq) stored already?" from here instead of
// a unique index on the reports table: that index put one random b-tree page
// per host into every commit (and a hosts-table update another), which cost
// more than the report rows themselves. The ledger is checkpointed to the
// hosts table every so many rows and rebuilt at start from that checkpoint
// plus the rows stored after it, so it is exact after a crash. A host with
// more gaps than SeqRuns keeps in memory has its oldest runs in the store
// (SeqRuns::Insert's `spilled`); Find says when to ask it.
//
// Not thread-safe; SqliteLedger (sqlite/ledger.h) holds it, under the
// store's write lock.
#ifndef TRACEHEALTH_SERVER_STORAGE_HOST_LEDGER_H_
#define TRACEHEALTH_SERVER_STORAGE_HOST_LEDGER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "server/storage/seq_runs.h"

namespace tracehealth::server {

struct LedgerEntry {
  int64_t first_seen_ns = 0;  // receive time of the first stored report
  int64_t last_seen_ns = 0;   // receive time of the newest stored report
  uint64_t reports = 0;     // reports ever stored (retention does not lower it)
  uint64_t latest_seq = 0;  // the highest stored seq ...
  int64_t latest_rowid = 0;  // ... and its row
  SeqRuns seqs;              // every stored seq (or where to ask for it)
  bool changed = false;      // since the last HostLedger::ClearChanged
};

class HostLedger {
 public:
  // Whether (host, seq) is stored, or whether to ask the store (SeqRuns).
  SeqRuns::Answer Find(absl::string_view host, uint64_t seq) const;

  // Records a newly stored row and marks the host changed. Appends to
  // `*spilled` the seq runs the store must hold from now on (SeqRuns::Insert).
  void Record(absl::string_view host, uint64_t seq, int64_t received_at_ns,
              int64_t rowid, std::vector<SeqRuns::Run>* spilled);

  // Sets a host's entry as read from a checkpoint (not marked changed).
  void Restore(std::string host, LedgerEntry entry);

  // nullptr when the host has no stored report.
  const LedgerEntry* Find(absl::string_view host) const;

  // Calls fn(host, entry) for each host changed since the last ClearChanged.
  template <typename Fn>
  void ForEachChanged(Fn fn) const {
    for (const std::string& host : changed_) fn(host, hosts_.at(host));
  }
  size_t changed() const { return changed_.size(); }
  void ClearChanged();

  template <typename Fn>
  void ForEach(Fn fn) const {
    for (const auto& [host, entry] : hosts_) fn(host, entry);
  }

  size_t size() const { return hosts_.size(); }
  void Clear();

 private:
  absl::flat_hash_map<std::string, LedgerEntry> hosts_;
  std::vector<std::string> changed_;  // the hosts with entry.changed set
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_HOST_LEDGER_H_
