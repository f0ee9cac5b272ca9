#include "common/report/material.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string_view>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "common/report/wire_reader.h"
#include "google/protobuf/descriptor.h"

namespace tracehealth {
namespace {

using google::protobuf::FieldDescriptor;

// The fields that do not count: they move from cycle to cycle on a steady
// host. A heartbeat carries seq, observed_at and threads.total; what the
// others change reaches the predictions, whose numbers count beyond the
// tolerance.
constexpr const char* kMovingFields[] = {
    // Identity of the report, carried by every heartbeat.
    "tracehealth.v1.HostReport.seq",
    "tracehealth.v1.HostReport.observed_at",
    // How the report was sent (whole or in heartbeat form), not what it says.
    "tracehealth.v1.HostReport.heartbeat",
    // Thread and fork counters, uptime: move every cycle (threads.total is
    // carried by the heartbeat; the attach predictions follow it).
    "tracehealth.v1.HostSnapshot.threads",
    // When fgraph was last seen active, links scanned, and the N_null bound
    // derived from the fork counter: times and counters.
    "tracehealth.v1.FgraphState.links_scanned_at",
    "tracehealth.v1.FgraphState.last_active_at",
    "tracehealth.v1.FgraphState.forks_at_last_active",
    "tracehealth.v1.FgraphState.null_threads_bound",
    "tracehealth.v1.FgraphState.null_threads_basis",
    // Stack depot usage counters (the limit, max_pools, counts): the stack
    // depot prediction's numbers follow them.
    "tracehealth.v1.StackDepotStats.pools",
    "tracehealth.v1.StackDepotStats.refcounted_allocations",
    "tracehealth.v1.StackDepotStats.refcounted_frees",
    "tracehealth.v1.StackDepotStats.refcounted_in_use",
    "tracehealth.v1.StackDepotStats.freelist_size",
    "tracehealth.v1.StackDepotStats.persistent_count",
    "tracehealth.v1.StackDepotStats.persistent_bytes",
    "tracehealth.v1.HostSnapshot.depot_history",
    "tracehealth.v1.HostSnapshot.trie",
    // vmalloc usage and when it was read: the vmap purge prediction follows.
    "tracehealth.v1.HostSnapshot.vmalloc",
    // The agent's own cost and progress (its failure counters and the kmsg
    // error count).
    "tracehealth.v1.AgentHealth.cycle_seconds",
    "tracehealth.v1.AgentHealth.cycle_cpu_seconds",
    "tracehealth.v1.AgentHealth.spool_depth",
    "tracehealth.v1.AgentHealth.last_acked_seq",
    "tracehealth.v1.AgentHealth.last_ack_at",
    "tracehealth.v1.AgentHealth.rss_bytes",
    "tracehealth.v1.AgentHealth.input_costs",
    "tracehealth.v1.KmsgHealth.records_total",
    "tracehealth.v1.KmsgHealth.events_total",
    "tracehealth.v1.KmsgHealth.events_pending",
    "tracehealth.v1.KmsgHealth.last_seq",
};

const absl::flat_hash_set<std::string>& MovingSet() {
  static const auto* set = new absl::flat_hash_set<std::string>(
      std::begin(kMovingFields), std::end(kMovingFields));
  return *set;
}

bool IsNumber(const FieldDescriptor* f) {
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64:
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT:
      return true;
    default:
      return false;
  }
}

// What to do with each field of a message type, worked out once from the
// schema: the walk below runs over the wire bytes of every report received
// (no parse, no reflection).
struct Plan;
struct FieldPlan {
  bool known = false;
  bool moving = false;
  bool tolerant_number = false;  // a number inside predictions
  bool is_map = false;
  bool repeated = false;
  FieldDescriptor::Type type = FieldDescriptor::TYPE_BYTES;
  const Plan* sub = nullptr;  // message fields
};
struct Plan {
  std::vector<FieldPlan> by_number;  // indexed by field number
  const FieldPlan* Find(uint32_t n) const {
    return n < by_number.size() && by_number[n].known ? &by_number[n] : nullptr;
  }
};

const Plan* BuildPlan(const google::protobuf::Descriptor* d, bool tolerant,
                      std::vector<std::unique_ptr<Plan>>& all, int depth) {
  all.push_back(std::make_unique<Plan>());
  Plan* p = all.back().get();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (p->by_number.size() <= static_cast<size_t>(f->number()))
      p->by_number.resize(f->number() + 1);
    FieldPlan& fp = p->by_number[f->number()];
    fp.known = true;
    fp.moving = MovingSet().contains(f->full_name());
    fp.repeated = f->is_repeated();
    fp.is_map = f->is_map();
    fp.type = f->type();
    const bool sub_tolerant =
        tolerant || f->full_name() == "tracehealth.v1.HostReport.predictions";
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (depth < 16) {
        fp.sub = BuildPlan(f->message_type(), sub_tolerant, all, depth + 1);
      }
    } else {
      fp.tolerant_number = sub_tolerant && IsNumber(f);
    }
  }
  return p;
}

const Plan& ReportPlan() {
  static const Plan* plan = [] {
    auto* all = new std::vector<std::unique_ptr<Plan>>();
    return BuildPlan(v1::HostReport::descriptor(), false, *all, 0);
  }();
  return *plan;
}

// A running 64-bit digest of what counts: every value is mixed in, in
// order, by a 64x64->128-bit multiply folded to 64 bits (wyhash's mixing
// step), byte strings by their std::hash first; any change of a value or
// of the order changes the digest but with chance about 2^-64.
// Deterministic across processes and builds (no per-process seed).
class Digest {
 public:
  void Mix(uint64_t v) {
    const unsigned __int128 m =
        static_cast<unsigned __int128>(h_ ^ 0xa0761d6478bd642fULL) *
        (v ^ 0xe7037ed1a0b428dbULL);
    h_ = static_cast<uint64_t>(m) ^ static_cast<uint64_t>(m >> 64);
    ++values_;
  }
  void MixBytes(absl::string_view b) {
    Mix(b.size());
    Mix(std::hash<std::string_view>{}(std::string_view(b.data(), b.size())));
  }
  void MixTag(uint32_t number, int wire_type) {
    Mix((static_cast<uint64_t>(number) << 3) |
        static_cast<uint32_t>(wire_type));
  }
  uint64_t value() const { return h_; }
  // How many values were mixed in.
  size_t values() const { return values_; }

 private:
  uint64_t h_ = 0x6a09e667f3bcc908ULL;
  size_t values_ = 0;
};

// A number of type `type` as its wire value gives it.
float NumberOf(FieldDescriptor::Type type, uint64_t v) {
  switch (type) {
    case FieldDescriptor::TYPE_DOUBLE: {
      double d;
      std::memcpy(&d, &v, 8);
      return static_cast<float>(d);
    }
    case FieldDescriptor::TYPE_FLOAT: {
      const uint32_t u = static_cast<uint32_t>(v);
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    }
    case FieldDescriptor::TYPE_INT32:
    case FieldDescriptor::TYPE_INT64:
    case FieldDescriptor::TYPE_SFIXED64:
      return static_cast<float>(static_cast<int64_t>(v));
    case FieldDescriptor::TYPE_SFIXED32:
      return static_cast<float>(static_cast<int32_t>(v));
    case FieldDescriptor::TYPE_SINT32:
    case FieldDescriptor::TYPE_SINT64:
      return static_cast<float>(
          static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1)));
    default:  // unsigned
      return static_cast<float>(v);
  }
}

// Mixes what counts of the encoded message `msg` into `digest`, and the
// numbers inside predictions into `numbers` (their place into `digest`). A
// singular message holding only moving fields counts as absent; a map's
// entries count in sorted order (the wire has none), each by its own
// digest. Fields the schema does not know count exactly. False for bytes
// that do not decode (as wire::ForEachField would say).
bool Walk(absl::string_view msg, const Plan& plan, Digest& digest,
          std::vector<float>& numbers) {
  // (field number, entry digest) of the map entries, mixed in at the end.
  absl::InlinedVector<std::pair<uint32_t, uint64_t>, 4> map_entries;
  const auto* p = reinterpret_cast<const uint8_t*>(msg.data());
  const uint8_t* const end = p + msg.size();
  while (p < end) {
    uint64_t tag;
    if (!wire::ReadTag(p, end, &tag)) return false;
    const auto number = static_cast<uint32_t>(tag >> 3);
    const int wire_type = static_cast<int>(tag & 7);
    uint64_t value = 0;  // varint or fixed bits
    absl::string_view bytes;
    switch (wire_type) {
      case wire::kVarint:
        if (!wire::ReadVarint(p, end, &value)) return false;
        break;
      case wire::kFixed64:
        if (end - p < 8) return false;
        std::memcpy(&value, p, 8);
        p += 8;
        break;
      case wire::kFixed32: {
        if (end - p < 4) return false;
        uint32_t v;
        std::memcpy(&v, p, 4);
        value = v;
        p += 4;
        break;
      }
      case wire::kLengthDelimited: {
        uint64_t len;
        if (!wire::ReadLength(p, end, &len)) return false;
        bytes = absl::string_view(reinterpret_cast<const char*>(p), len);
        p += len;
        break;
      }
      default:
        return false;
    }
    const FieldPlan* fp = plan.Find(number);
    if (fp != nullptr && fp->moving) continue;
    if (fp != nullptr && fp->sub != nullptr &&
        wire_type == wire::kLengthDelimited) {
      Digest sub;
      const size_t before = numbers.size();
      if (!Walk(bytes, *fp->sub, sub, numbers)) return false;
      if (fp->is_map) {
        map_entries.emplace_back(number, sub.value());
      } else if (fp->repeated || sub.values() > 0 || numbers.size() != before) {
        digest.MixTag(number, wire_type);
        digest.Mix(sub.value());
      }  // else nothing of it counted
      continue;
    }
    digest.MixTag(number, wire_type);
    if (fp != nullptr && fp->tolerant_number) {
      digest.Mix('#');
      if (wire_type == wire::kLengthDelimited) {  // packed
        const auto* q = reinterpret_cast<const uint8_t*>(bytes.data());
        const uint8_t* const qend = q + bytes.size();
        while (q < qend) {
          uint64_t v = 0;
          if (fp->type == FieldDescriptor::TYPE_DOUBLE ||
              fp->type == FieldDescriptor::TYPE_FIXED64 ||
              fp->type == FieldDescriptor::TYPE_SFIXED64) {
            if (qend - q < 8) return false;
            std::memcpy(&v, q, 8);
            q += 8;
          } else if (fp->type == FieldDescriptor::TYPE_FLOAT ||
                     fp->type == FieldDescriptor::TYPE_FIXED32 ||
                     fp->type == FieldDescriptor::TYPE_SFIXED32) {
            if (qend - q < 4) return false;
            uint32_t u;
            std::memcpy(&u, q, 4);
            v = u;
            q += 4;
          } else if (!wire::ReadVarint(q, qend, &v)) {
            return false;
          }
          numbers.push_back(NumberOf(fp->type, v));
        }
      } else {
        numbers.push_back(NumberOf(fp->type, value));
      }
      continue;
    }
    if (wire_type == wire::kLengthDelimited) {
      digest.MixBytes(bytes);
    } else {
      digest.Mix(value);
    }
  }
  std::sort(map_entries.begin(), map_entries.end());
  for (const auto& [number, entry] : map_entries) {
    digest.MixTag(number, wire::kLengthDelimited);
    digest.Mix(entry);
  }
  return true;
}

}  // namespace

Material MaterialOfWire(absl::string_view report) {
  Material out;
  out.numbers.reserve(256);
  Digest digest;
  if (!Walk(report, ReportPlan(), digest, out.numbers)) {
    out.numbers.clear();
    return out;  // digest 0: unknown
  }
  out.digest = digest.value() == 0 ? 1 : digest.value();
  return out;
}

Material MaterialOf(const v1::HostReport& report) {
  return MaterialOfWire(report.SerializeAsString());
}

bool SameMaterial(uint64_t digest_a, absl::Span<const float> numbers_a,
                  uint64_t digest_b, absl::Span<const float> numbers_b) {
  if (digest_a == 0 || digest_a != digest_b) return false;
  if (numbers_a.size() != numbers_b.size()) return false;
  for (size_t i = 0; i < numbers_a.size(); ++i) {
    const float a = numbers_a[i], b = numbers_b[i];
    if (a == b) continue;
    if (!std::isfinite(a) || !std::isfinite(b)) return false;
    if (std::fabs(a - b) >
        kMaterialTolerance * std::max(std::fabs(a), std::fabs(b))) {
      return false;
    }
  }
  return true;
}

std::vector<std::string> MovingFieldNames() {
  return {std::begin(kMovingFields), std::end(kMovingFields)};
}

}  // namespace tracehealth
