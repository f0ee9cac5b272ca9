#include "server/storage/host_ledger.h"

#include <algorithm>
#include <utility>

namespace tracehealth::server {

SeqRuns::Answer HostLedger::Find(absl::string_view host, uint64_t seq) const {
  auto it = hosts_.find(host);
  return it == hosts_.end() ? SeqRuns::Answer::kAbsent
                            : it->second.seqs.Find(seq);
}

void HostLedger::Record(absl::string_view host, uint64_t seq,
                        int64_t received_at_ns, int64_t rowid,
                        std::vector<SeqRuns::Run>* spilled) {
  auto [it, inserted] = hosts_.try_emplace(host);
  LedgerEntry& e = it->second;
  if (inserted) {
    e.first_seen_ns = received_at_ns;
    e.last_seen_ns = received_at_ns;
  }
  e.first_seen_ns = std::min(e.first_seen_ns, received_at_ns);
  e.last_seen_ns = std::max(e.last_seen_ns, received_at_ns);
  e.reports++;
  if (e.reports == 1 || seq > e.latest_seq) {
    e.latest_seq = seq;
    e.latest_rowid = rowid;
  }
  e.seqs.Insert(seq, spilled);
  if (!e.changed) {
    e.changed = true;
    changed_.emplace_back(host);
  }
}

void HostLedger::Restore(std::string host, LedgerEntry entry) {
  entry.changed = false;
  hosts_.insert_or_assign(std::move(host), std::move(entry));
}

const LedgerEntry* HostLedger::Find(absl::string_view host) const {
  auto it = hosts_.find(host);
  return it == hosts_.end() ? nullptr : &it->second;
}

void HostLedger::ClearChanged() {
  for (const std::string& host : changed_)
    hosts_.find(host)->second.changed = false;
  changed_.clear();
}

void HostLedger::Clear() {
  hosts_.clear();
  changed_.clear();
}

}  // namespace tracehealth::server
