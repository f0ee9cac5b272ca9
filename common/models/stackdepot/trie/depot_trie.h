// A path-compressed trie of stack traces: the stack depot trie backend of
// seed 003, implemented for real so the models can say what it would use on
// a host's own traces.
//
// Each node holds a run of frames and branches only where traces diverge;
// a trace is the concatenation of the runs from the root down to the node
// where it ends. Frames are stored as 32-bit payloads when the address can
// be rebuilt exactly (x86-64: the upper 32 bits are all ones, payload = low
// 32 bits; arm64: payload = signed 32-bit offset from _text), full-width
// otherwise. A node's run is either all compact or all full-width: a run
// with one frame that cannot be compressed is stored full-width, and after a
// split each part is re-examined (a part may become compact).
//
// Stack IDs are dense (1, 2, 3, ...; 0 is "no handle" as in the kernel) and
// map to the node where their trace ends; fetch walks parent links. A split
// keeps the lower part of the old node in place and inserts a new node for
// the shared prefix above it, so the ID -> node table never changes and old
// IDs fetch the same trace after any topology change.
//
// A node has at most `max_children` (1,024) children: its child array
// (16 bytes per slot: full-width first frame + node pointer) must fit one
// 16 KiB pool. An insert that needs one more child fails with
// ResourceExhausted and changes nothing; so does one that would need more
// pools than `max_pools`.
//
// Memory is accounted as the kernel would allocate it, in depot pools
// (PoolAccounting): a node is a 48-byte header (rcu_head 16, parent 8,
// child array 8, stack id 4, run length / child count / child capacity /
// flags 2 each) plus 4 or 8 bytes per frame, rounded to 16; a child array
// holds `capacity` 16-byte slots, doubling as it fills (the old array is
// freed); the ID table takes 8 bytes per ID in 1 KiB chunks of 128 IDs
// allocated as IDs are handed out (a sparse table). A split
// replaces the old node (freed) with two new ones.
//
// Thread safety: none; callers serialize (the kernel serializes inserts too).
#ifndef TRACEHEALTH_COMMON_MODELS_STACKDEPOT_TRIE_DEPOT_TRIE_H_
#define TRACEHEALTH_COMMON_MODELS_STACKDEPOT_TRIE_DEPOT_TRIE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "common/models/stackdepot/trie/pool_accounting.h"

namespace tracehealth {

enum class FrameArch { kX86_64, kArm64 };

struct DepotTrieOptions {
  FrameArch arch = FrameArch::kX86_64;
  // arm64 _text (compact payloads are signed 32-bit offsets from it).
  uint64_t arm64_text = 0xffff800080000000ull;
  uint32_t max_children = 1024;
  uint64_t pool_bytes = kDepotPoolBytes;
  // 0: unlimited.
  uint64_t max_pools = 0;
  // Longest trace accepted.
  uint32_t max_frames = 1024;
};

struct DepotTrieStats {
  uint64_t records = 0;
  uint64_t nodes = 0;
  uint64_t compact_nodes = 0;
  uint64_t compact_frames = 0;  // frames stored as 32-bit payloads
  uint64_t full_frames = 0;     // frames stored full-width
  uint64_t live_bytes = 0;
  uint64_t pools = 0;
  uint64_t insert_failures = 0;
  uint32_t max_children_seen = 0;
};

class DepotTrie {
 public:
  using StackId = uint32_t;

  // Accounting constants (see the file comment).
  static constexpr uint64_t kNodeHeaderBytes = 48;
  static constexpr uint64_t kChildSlotBytes = 16;
  static constexpr uint64_t kIdEntryBytes = 8;
  static constexpr uint64_t kIdChunkBytes = 1024;

  explicit DepotTrie(DepotTrieOptions options = {});

  // Inserts `frames` (innermost first, as stack_trace_save() returns them)
  // and returns its ID, or the existing ID when the trace is already stored.
  // Errors: InvalidArgument for an empty or too long trace;
  // ResourceExhausted when a node would need child max_children + 1 or the
  // pool budget is exhausted (nothing changes).
  absl::StatusOr<StackId> Insert(absl::Span<const uint64_t> frames);

  // The ID of `frames` when stored.
  std::optional<StackId> Lookup(absl::Span<const uint64_t> frames) const;

  // The exact trace of `id`. NotFound for an ID never handed out. For the
  // tests and models_benchmark (reading back what Insert stored proves the
  // trie lossless); the model only counts nodes.
  absl::StatusOr<std::vector<uint64_t>> Fetch(StackId id) const;

  // Whether `address` has a 32-bit payload on this architecture.
  bool Compressible(uint64_t address) const;

  // Full statistics (walks every node: O(nodes)).
  DepotTrieStats stats() const;
  uint64_t records() const { return id_to_node_.size(); }
  const PoolAccounting& pools() const { return pools_; }

 private:
  struct Child {
    uint64_t first_frame;
    uint32_t node;
  };
  struct Node {
    uint32_t parent = 0;
    StackId id = 0;
    uint32_t offset = 0;  // into compact_ or full_
    uint32_t run = 0;
    bool compact = false;
    uint32_t capacity = 0;        // child array slots (accounting)
    std::vector<Child> children;  // sorted by first_frame
  };
  static constexpr uint32_t kRoot = 0;

  uint64_t Frame(const Node& node, uint32_t i) const;
  uint64_t NodeBytes(uint32_t run, bool compact) const;
  // Stores frames in the matching arena; returns (offset, compact).
  std::pair<uint32_t, bool> StoreRun(absl::Span<const uint64_t> frames);
  bool AllCompressible(absl::Span<const uint64_t> frames) const;
  const Child* FindChild(const Node& node, uint64_t first) const;
  void AddChild(uint32_t parent, uint64_t first, uint32_t child);
  uint64_t GrownCapacity(uint32_t capacity) const;
  // Accounting for a new ID (one ID-table chunk per 128 IDs).
  bool NeedsIdChunk() const;
  StackId NewId(uint32_t node);
  // Counts a failed insert; ResourceExhausted with `why`.
  absl::Status Exhausted(absl::string_view why);
  // Insert's two ways to end: a new leaf holding `rest` under node `cur`,
  // or a split of `child` after its first k frames, where `rest` (the
  // trace from `child`'s first frame on) diverges from it or ends.
  absl::StatusOr<StackId> AddLeaf(uint32_t cur, absl::Span<const uint64_t> rest,
                                  bool id_chunk);
  absl::StatusOr<StackId> Split(uint32_t child, uint32_t k,
                                absl::Span<const uint64_t> rest, bool id_chunk);
  // A leaf holding `run` appended under `parent`; returns its index.
  uint32_t NewLeaf(uint32_t parent, absl::Span<const uint64_t> run);

  DepotTrieOptions options_;
  std::vector<Node> nodes_;
  std::vector<uint32_t> compact_;
  std::vector<uint64_t> full_;
  std::vector<uint32_t> id_to_node_;  // id - 1 -> node
  PoolAccounting pools_;
  uint64_t insert_failures_ = 0;
};

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_STACKDEPOT_TRIE_DEPOT_TRIE_H_
