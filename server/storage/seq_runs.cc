#include "server/storage/seq_runs.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tracehealth::server {

SeqRuns::Answer SeqRuns::Find(uint64_t seq) const {
  if (Spilled(seq)) return Answer::kAskStore;
  // The first run ending at or after seq.
  auto it = std::lower_bound(
      runs_.begin(), runs_.end(), seq,
      [](const Run& run, uint64_t s) { return run.second < s; });
  return it != runs_.end() && it->first <= seq ? Answer::kStored
                                               : Answer::kAbsent;
}

void SeqRuns::Insert(uint64_t seq, std::vector<Run>* spilled) {
  if (Spilled(seq)) {
    // Below every in-memory run: the store keeps it.
    spilled->emplace_back(seq, seq);
    return;
  }
  if (!runs_.empty() && runs_.back().second + 1 == seq) {  // the usual case
    runs_.back().second = seq;
    return;
  }
  if (runs_.empty() || runs_.back().second < seq) {
    runs_.emplace_back(seq, seq);
    Bound(spilled);
    return;
  }
  auto next = std::lower_bound(
      runs_.begin(), runs_.end(), seq,
      [](const Run& run, uint64_t s) { return run.second < s; });
  // next->first > seq (seq is not contained). Join the neighbours it touches.
  const bool joins_next = next->first == seq + 1;
  const bool joins_prev =
      next != runs_.begin() && std::prev(next)->second + 1 == seq;
  if (joins_prev && joins_next) {
    std::prev(next)->second = next->second;
    runs_.erase(next);
  } else if (joins_prev) {
    std::prev(next)->second = seq;
  } else if (joins_next) {
    next->first = seq;
  } else {
    runs_.insert(next, {seq, seq});
    Bound(spilled);
  }
}

void SeqRuns::Bound(std::vector<Run>* spilled) {
  // The gap after a spilled run stays in memory (absent) until its seqs
  // arrive: only seqs up to the run's last go to the store.
  while (runs_.size() > kMaxRuns) {
    spilled->push_back(runs_.front());
    spilled_through_ = runs_.front().second;
    runs_.erase(runs_.begin());
  }
}

std::string SeqRuns::Encode() const {
  std::string out;
  for (const auto& [first, last] : runs_) {
    if (!out.empty()) out += ',';
    absl::StrAppend(&out, first);
    if (last != first) absl::StrAppend(&out, "-", last);
  }
  return out;
}

absl::StatusOr<SeqRuns> SeqRuns::Decode(absl::string_view text,
                                        uint64_t spilled_through) {
  SeqRuns out;
  out.spilled_through_ = spilled_through;
  if (text.empty()) return out;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    const size_t dash = part.find('-');
    const absl::string_view head = part.substr(0, dash);
    const absl::string_view tail =
        dash == part.npos ? head : part.substr(dash + 1);
    uint64_t first = 0, last = 0;
    if (!absl::SimpleAtoi(head, &first) || !absl::SimpleAtoi(tail, &last) ||
        last < first) {
      return absl::DataLossError(absl::StrCat("bad seq run \"", part, "\""));
    }
    if (first <= spilled_through) {
      return absl::DataLossError(absl::StrCat("seq run \"", part,
                                              "\" not above the spilled seqs ",
                                              spilled_through));
    }
    out.runs_.emplace_back(first, last);
  }
  std::sort(out.runs_.begin(), out.runs_.end());
  std::vector<Run> joined;
  for (const Run& run : out.runs_) {
    if (!joined.empty() && run.first <= joined.back().second) {
      return absl::DataLossError(
          absl::StrCat("overlapping seq runs in \"", text, "\""));
    }
    if (!joined.empty() && run.first == joined.back().second + 1) {
      joined.back().second = run.second;
    } else {
      joined.push_back(run);
    }
  }
  if (joined.size() > kMaxRuns) {
    return absl::DataLossError(absl::StrCat(
        joined.size(), " seq runs, more than ", kMaxRuns, " kept in memory"));
  }
  out.runs_ = std::move(joined);
  return out;
}

}  // namespace tracehealth::server
