// SeqRuns: the set of report sequence numbers stored for one host, kept in
// memory as far as it fits.
//
// Kept as sorted, disjoint, non-adjacent closed runs [first, last]. An
// agent numbers its reports 1, 2, 3, ... and sends them in order, so a host
// needs one run, plus one per gap (reports its spool dropped, or reports
// still to come from a replay). Adding the next seq after the newest run is
// O(1).
//
// Bounded: at most kMaxRuns runs in memory. Past that the oldest run is
// *spilled*: Insert hands it to the caller, which keeps it in its store,
// and every seq up to the end of the newest spilled run (spilled_through())
// is answered "ask the store" from then on. A seq at or below it that the
// store does not hold is inserted by handing [seq, seq] to the store too.
// So the set is exact for any number of gaps: memory answers what it can,
// the store the rest.
//
// Seqs start at 1 (ingest refuses 0).
//
// Text form of the in-memory runs (the hosts table's seq_runs column):
// "1-500,503,505-900".
//
// Thread safety: a plain value.
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
  using Run = std::pair<uint64_t, uint64_t>;  // [first, last]

  enum class Answer {
    kAbsent,    // not stored
    kStored,    // stored
    kAskStore,  // at or below spilled_through(): the store knows
  };
  Answer Find(uint64_t seq) const;

  // Adds `seq`, which is not stored (Find said kAbsent, or kAskStore and the
  // store does not hold it). Appends to `*spilled` what the caller's store
  // must hold from now on, in the same transaction as the row: the oldest
  // runs when more than kMaxRuns would be kept, or [seq, seq] for a seq at
  // or below spilled_through(). Usually appends nothing.
  void Insert(uint64_t seq, std::vector<Run>* spilled);

  size_t runs() const { return runs_.size(); }
  bool empty() const { return runs_.empty() && spilled_through_ == 0; }
  // Every seq <= this is answered by the store (0: none).
  uint64_t spilled_through() const { return spilled_through_; }

  // The in-memory runs.
  std::string Encode() const;
  // Parses Encode's form, with the spilled_through() it was saved with.
  // Runs may come in any order; they must not overlap, must lie above
  // `spilled_through`, and may be at most kMaxRuns (DataLoss otherwise).
  static absl::StatusOr<SeqRuns> Decode(absl::string_view text,
                                        uint64_t spilled_through = 0);

  bool operator==(const SeqRuns& o) const {
    return runs_ == o.runs_ && spilled_through_ == o.spilled_through_;
  }

 private:
  bool Spilled(uint64_t seq) const {
    return spilled_through_ > 0 && seq <= spilled_through_;
  }
  // Spills the oldest runs while there are more than kMaxRuns.
  void Bound(std::vector<Run>* spilled);

  std::vector<Run> runs_;  // every first > spilled_through_
  uint64_t spilled_through_ = 0;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_SEQ_RUNS_H_
