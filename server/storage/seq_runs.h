// SeqRuns: the set of report sequence numbers stored for one host.
//
// Kept as sorted, disjoint, non-adjacent closed runs [first, last]. An
// agent numbers its reports 1, 2, 3, ... and sends them in order, so a host
// needs one run, plus one per gap (reports its spool dropped before they
// were delivered). Adding the next seq after the newest run is O(1).
//
// Bounded: at most kMaxRuns runs. Past that the two oldest runs merge into
// one, so the seqs of the oldest gap count as seen from then on: a report
// arriving that late is taken for a duplicate. Insert returns how many seqs
// it marked seen that way so callers can count them.
//
// Text form (the hosts table's seq_runs column): "1-500,503,505-900".
#ifndef TRACEHEALTH_SERVER_STORAGE_SEQ_RUNS_H_
#define TRACEHEALTH_SERVER_STORAGE_SEQ_RUNS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth::server {

class SeqRuns {
 public:
  static constexpr size_t kMaxRuns = 64;

  bool Contains(uint64_t seq) const;

  // Adds `seq` (which must not be contained). Returns the number of seqs
  // that a forced merge of the two oldest runs marked as seen (usually 0).
  uint64_t Insert(uint64_t seq);

  size_t runs() const { return runs_.size(); }
  bool empty() const { return runs_.empty(); }

  std::string Encode() const;
  // Parses Encode's form. Runs may come in any order; they must not overlap.
  // More than kMaxRuns runs are merged as Insert would.
  static absl::StatusOr<SeqRuns> Decode(absl::string_view text);

  bool operator==(const SeqRuns& o) const { return runs_ == o.runs_; }

 private:
  // Merges runs while there are more than kMaxRuns; returns the seqs of the
  // gaps closed.
  uint64_t Bound();

  std::vector<std::pair<uint64_t, uint64_t>> runs_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_SEQ_RUNS_H_
