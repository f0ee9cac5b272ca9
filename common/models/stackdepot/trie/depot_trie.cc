#include "common/models/stackdepot/trie/depot_trie.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tracehealth {

DepotTrie::DepotTrie(DepotTrieOptions options)
    : options_(options), pools_(options.pool_bytes, options.max_pools) {
  if (options_.max_children == 0) options_.max_children = 1;
  nodes_.emplace_back();  // the root: no frames
  nodes_[kRoot].compact = true;
}

bool DepotTrie::Compressible(uint64_t address) const {
  if (options_.arch == FrameArch::kX86_64) {
    return (address >> 32) == 0xffffffffull;
  }
  const int64_t offset = static_cast<int64_t>(address - options_.arm64_text);
  return offset >= INT32_MIN && offset <= INT32_MAX;
}

bool DepotTrie::AllCompressible(absl::Span<const uint64_t> frames) const {
  for (uint64_t f : frames) {
    if (!Compressible(f)) return false;
  }
  return true;
}

uint64_t DepotTrie::Frame(const Node& node, uint32_t i) const {
  if (!node.compact) return full_[node.offset + i];
  const uint32_t payload = compact_[node.offset + i];
  if (options_.arch == FrameArch::kX86_64) {
    return 0xffffffff00000000ull | payload;
  }
  return options_.arm64_text + static_cast<uint64_t>(static_cast<int64_t>(
                                   static_cast<int32_t>(payload)));
}

uint64_t DepotTrie::NodeBytes(uint32_t run, bool compact) const {
  return Align16(kNodeHeaderBytes + uint64_t{run} * (compact ? 4 : 8));
}

std::pair<uint32_t, bool> DepotTrie::StoreRun(
    absl::Span<const uint64_t> frames) {
  if (AllCompressible(frames)) {
    const uint32_t offset = static_cast<uint32_t>(compact_.size());
    for (uint64_t f : frames) {
      compact_.push_back(
          options_.arch == FrameArch::kX86_64
              ? static_cast<uint32_t>(f)
              : static_cast<uint32_t>(static_cast<int32_t>(
                    static_cast<int64_t>(f - options_.arm64_text))));
    }
    return {offset, true};
  }
  const uint32_t offset = static_cast<uint32_t>(full_.size());
  full_.insert(full_.end(), frames.begin(), frames.end());
  return {offset, false};
}

const DepotTrie::Child* DepotTrie::FindChild(const Node& node,
                                             uint64_t first) const {
  auto it = std::lower_bound(
      node.children.begin(), node.children.end(), first,
      [](const Child& c, uint64_t f) { return c.first_frame < f; });
  if (it == node.children.end() || it->first_frame != first) return nullptr;
  return &*it;
}

void DepotTrie::AddChild(uint32_t parent, uint64_t first, uint32_t child) {
  std::vector<Child>& children = nodes_[parent].children;
  auto it = std::lower_bound(
      children.begin(), children.end(), first,
      [](const Child& c, uint64_t f) { return c.first_frame < f; });
  children.insert(it, Child{first, child});
}

uint64_t DepotTrie::GrownCapacity(uint32_t capacity) const {
  if (capacity == 0) return 1;
  return std::min<uint64_t>(uint64_t{capacity} * 2, options_.max_children);
}

bool DepotTrie::NeedsIdChunk() const {
  const uint64_t per_chunk = kIdChunkBytes / kIdEntryBytes;
  return id_to_node_.size() % per_chunk == 0;
}

DepotTrie::StackId DepotTrie::NewId(uint32_t node) {
  if (NeedsIdChunk()) pools_.Allocate(kIdChunkBytes);
  id_to_node_.push_back(node);
  const StackId id = static_cast<StackId>(id_to_node_.size());
  nodes_[node].id = id;
  return id;
}

absl::Status DepotTrie::Exhausted(absl::string_view why) {
  ++insert_failures_;
  return absl::ResourceExhaustedError(why);
}

absl::StatusOr<DepotTrie::StackId> DepotTrie::Insert(
    absl::Span<const uint64_t> frames) {
  if (frames.empty()) return absl::InvalidArgumentError("empty stack trace");
  if (frames.size() > options_.max_frames) {
    return absl::InvalidArgumentError(
        absl::StrCat("stack trace of ", frames.size(), " frames exceeds ",
                     options_.max_frames));
  }
  const uint32_t n = static_cast<uint32_t>(frames.size());
  const bool id_chunk = NeedsIdChunk();
  uint32_t cur = kRoot;
  uint32_t pos = 0;
  while (true) {
    if (pos == n) {
      // The trace ends exactly where an existing node's run ends.
      if (nodes_[cur].id != 0) return nodes_[cur].id;
      absl::InlinedVector<uint64_t, 1> sizes;
      if (id_chunk) sizes.push_back(kIdChunkBytes);
      if (!pools_.Fits(sizes))
        return Exhausted("stack depot pool budget exhausted");
      return NewId(cur);
    }
    const Child* found = FindChild(nodes_[cur], frames[pos]);
    if (found == nullptr) return AddLeaf(cur, frames.subspan(pos), id_chunk);
    const uint32_t child = found->node;
    const Node& cn = nodes_[child];
    uint32_t k = 1;  // the first frame matched through the child key
    while (k < cn.run && pos + k < n && Frame(cn, k) == frames[pos + k]) ++k;
    if (k < cn.run) return Split(child, k, frames.subspan(pos), id_chunk);
    cur = child;
    pos += k;
  }
}

absl::StatusOr<DepotTrie::StackId> DepotTrie::AddLeaf(
    uint32_t cur, absl::Span<const uint64_t> rest, bool id_chunk) {
  const Node& node = nodes_[cur];
  if (node.children.size() >= options_.max_children) {
    return Exhausted(absl::StrCat("trie node already has ",
                                  node.children.size(), " children (limit ",
                                  options_.max_children, ")"));
  }
  const uint32_t run = static_cast<uint32_t>(rest.size());
  const uint64_t leaf_bytes = NodeBytes(run, AllCompressible(rest));
  absl::InlinedVector<uint64_t, 3> sizes = {leaf_bytes};
  const bool grow = node.children.size() >= node.capacity;
  const uint64_t new_capacity =
      grow ? GrownCapacity(node.capacity) : node.capacity;
  if (grow) sizes.push_back(new_capacity * kChildSlotBytes);
  if (id_chunk) sizes.push_back(kIdChunkBytes);
  if (!pools_.Fits(sizes))
    return Exhausted("stack depot pool budget exhausted");

  pools_.Allocate(leaf_bytes);
  if (grow) {
    pools_.Allocate(new_capacity * kChildSlotBytes);
    if (node.capacity > 0)
      pools_.Free(uint64_t{node.capacity} * kChildSlotBytes);
    nodes_[cur].capacity = static_cast<uint32_t>(new_capacity);
  }
  return NewId(NewLeaf(cur, rest));
}

uint32_t DepotTrie::NewLeaf(uint32_t parent, absl::Span<const uint64_t> run) {
  Node leaf;
  leaf.parent = parent;
  leaf.run = static_cast<uint32_t>(run.size());
  std::tie(leaf.offset, leaf.compact) = StoreRun(run);
  const uint32_t leaf_index = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back(std::move(leaf));
  AddChild(parent, run.front(), leaf_index);
  return leaf_index;
}

absl::StatusOr<DepotTrie::StackId> DepotTrie::Split(
    uint32_t child, uint32_t k, absl::Span<const uint64_t> rest,
    bool id_chunk) {
  // Split `child` after k frames: a new node A takes the shared prefix,
  // `child` keeps the rest (and its ID and children) below A.
  const Node& cn = nodes_[child];
  const uint32_t n = static_cast<uint32_t>(rest.size());
  const bool ends_in_a = k == n;
  const absl::Span<const uint64_t> prefix = rest.subspan(0, k);
  absl::InlinedVector<uint64_t, 32> suffix;
  for (uint32_t i = k; i < cn.run; ++i) suffix.push_back(Frame(cn, i));
  const bool prefix_compact = cn.compact || AllCompressible(prefix);
  const bool suffix_compact = cn.compact || AllCompressible(suffix);
  const uint64_t a_bytes = NodeBytes(k, prefix_compact);
  const uint64_t suffix_bytes = NodeBytes(cn.run - k, suffix_compact);
  const uint64_t old_bytes = NodeBytes(cn.run, cn.compact);
  const uint64_t a_capacity = ends_in_a ? 1 : 2;
  absl::InlinedVector<uint64_t, 5> sizes = {a_bytes, suffix_bytes,
                                            a_capacity * kChildSlotBytes};
  uint64_t leaf_bytes = 0;
  if (!ends_in_a) {
    leaf_bytes = NodeBytes(n - k, AllCompressible(rest.subspan(k)));
    sizes.push_back(leaf_bytes);
  }
  if (id_chunk) sizes.push_back(kIdChunkBytes);
  if (!pools_.Fits(sizes))
    return Exhausted("stack depot pool budget exhausted");

  // New memory first; the replaced node is freed afterwards (after a
  // grace period in the kernel).
  pools_.Allocate(a_bytes);
  pools_.Allocate(suffix_bytes);
  pools_.Allocate(a_capacity * kChildSlotBytes);
  if (!ends_in_a) pools_.Allocate(leaf_bytes);
  pools_.Free(old_bytes);

  Node a;
  a.parent = cn.parent;
  a.run = k;
  a.capacity = static_cast<uint32_t>(a_capacity);
  if (cn.compact || !prefix_compact) {
    a.offset = cn.offset;  // same arena, same frames
    a.compact = cn.compact;
  } else {
    std::tie(a.offset, a.compact) = StoreRun(prefix);
  }
  const uint32_t a_index = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back(std::move(a));
  Node& lower = nodes_[child];
  if (lower.compact || !suffix_compact) {
    lower.offset += k;
  } else {
    std::tie(lower.offset, lower.compact) = StoreRun(suffix);
  }
  lower.run -= k;
  const uint32_t parent = lower.parent;
  lower.parent = a_index;
  // The parent's slot keeps its key (same first frame) and now points at A.
  for (Child& c : nodes_[parent].children) {
    if (c.node == child) {
      c.node = a_index;
      break;
    }
  }
  nodes_[a_index].children.push_back(Child{suffix.front(), child});
  if (ends_in_a) return NewId(a_index);
  return NewId(NewLeaf(a_index, rest.subspan(k)));
}

std::optional<DepotTrie::StackId> DepotTrie::Lookup(
    absl::Span<const uint64_t> frames) const {
  if (frames.empty()) return std::nullopt;
  const uint32_t n = static_cast<uint32_t>(frames.size());
  uint32_t cur = kRoot;
  uint32_t pos = 0;
  while (pos < n) {
    const Child* c = FindChild(nodes_[cur], frames[pos]);
    if (c == nullptr) return std::nullopt;
    const Node& cn = nodes_[c->node];
    if (pos + cn.run > n) return std::nullopt;
    for (uint32_t i = 1; i < cn.run; ++i) {
      if (Frame(cn, i) != frames[pos + i]) return std::nullopt;
    }
    pos += cn.run;
    cur = c->node;
  }
  if (nodes_[cur].id == 0) return std::nullopt;
  return nodes_[cur].id;
}

absl::StatusOr<std::vector<uint64_t>> DepotTrie::Fetch(StackId id) const {
  if (id == 0 || id > id_to_node_.size()) {
    return absl::NotFoundError(absl::StrCat("no stack with id ", id));
  }
  std::vector<uint32_t> path;
  for (uint32_t node = id_to_node_[id - 1]; node != kRoot;
       node = nodes_[node].parent) {
    path.push_back(node);
  }
  std::vector<uint64_t> frames;
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    const Node& node = nodes_[*it];
    for (uint32_t i = 0; i < node.run; ++i) frames.push_back(Frame(node, i));
  }
  return frames;
}

DepotTrieStats DepotTrie::stats() const {
  DepotTrieStats s;
  s.records = id_to_node_.size();
  s.nodes = nodes_.size() - 1;
  for (size_t i = 1; i < nodes_.size(); ++i) {
    const Node& node = nodes_[i];
    if (node.compact) {
      ++s.compact_nodes;
      s.compact_frames += node.run;
    } else {
      s.full_frames += node.run;
    }
  }
  for (const Node& node : nodes_) {
    s.max_children_seen = std::max<uint32_t>(
        s.max_children_seen, static_cast<uint32_t>(node.children.size()));
  }
  s.live_bytes = pools_.live_bytes();
  s.pools = pools_.pools();
  s.insert_failures = insert_failures_;
  return s;
}

}  // namespace tracehealth
