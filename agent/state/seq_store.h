// Per-host report sequence numbers, persisted in the state directory
// ("seq" file, key=value) so they stay strictly increasing across agent
// restarts.
//
// To avoid an fsync per report, the store reserves seqs in blocks: it
// persists "reserved = next + block" before handing out any seq of the
// block, and after a restart continues after the reserved mark. Seqs are
// therefore monotonic and never reused; a crash leaves a gap, which the
// server accepts (it only requires increasing seqs).
//
// Thread safety: not thread-safe; one owner.
#ifndef TRACEHEALTH_AGENT_STATE_SEQ_STORE_H_
#define TRACEHEALTH_AGENT_STATE_SEQ_STORE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace tracehealth::agent {

class SeqStore {
 public:
  // Opens (or creates) the store in `state_dir` for `host_id`. A file written
  // for another host id is not reused: the seq restarts at 1 (a new host
  // identity). Errors: the state dir cannot be created or the file cannot be
  // written; a corrupt file is InvalidArgument (never silently reset, which
  // would reuse seqs).
  static absl::StatusOr<SeqStore> Open(const std::string& state_dir,
                                       const std::string& host_id,
                                       uint64_t block = 64);

  // The next seq (> every seq handed out before, in this and earlier runs).
  absl::StatusOr<uint64_t> Next();

  // The last seq handed out in this run (0 before the first Next()).
  uint64_t last() const { return next_ - 1; }

 private:
  SeqStore(std::string path, std::string host_id, uint64_t next,
           uint64_t reserved, uint64_t block)
      : path_(std::move(path)),
        host_id_(std::move(host_id)),
        next_(next),
        reserved_(reserved),
        block_(block) {}
  absl::Status Reserve(uint64_t upto);

  std::string path_;
  std::string host_id_;
  uint64_t next_;      // next seq to hand out
  uint64_t reserved_;  // seqs < reserved_ are persisted as used
  uint64_t block_;
};

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_STATE_SEQ_STORE_H_
