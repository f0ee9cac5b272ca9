#include "common/report/material.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>

#include "absl/container/flat_hash_set.h"
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

void AppendBits(uint64_t v, std::string& out) {
  char bits[sizeof v];
  std::memcpy(bits, &v, sizeof v);
  out.append(bits, sizeof bits);
}

void AppendTag(uint32_t number, int wire_type, std::string& out) {
  const uint32_t tag = (number << 3) | static_cast<uint32_t>(wire_type);
  char b[4];
  std::memcpy(b, &tag, 4);
  out.append(b, 4);
}

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

// Appends what counts of the encoded message `msg` to `exact` and
// `numbers`; inside predictions numbers go to `numbers`, their place to
// `exact`. A singular message holding only moving fields counts as absent;
// a map's entries count in sorted order (the wire has none). Fields the
// schema does not know count exactly. False for bytes that do not decode.
bool Walk(absl::string_view msg, const Plan& plan, std::string& exact,
          std::vector<float>& numbers) {
  std::vector<std::pair<uint32_t, std::string>> map_entries;
  const absl::Status st =
      wire::ForEachField(msg, [&](const wire::Field& f) -> absl::Status {
        const FieldPlan* fp = plan.Find(f.number);
        if (fp != nullptr && fp->moving) return absl::OkStatus();
        const size_t mark = exact.size();
        AppendTag(f.number, f.wire_type, exact);
        if (fp != nullptr && fp->sub != nullptr &&
            f.wire_type == wire::kLengthDelimited) {
          if (fp->is_map) {
            std::string entry;
            if (!Walk(f.bytes, *fp->sub, entry, numbers))
              return wire::Malformed("map entry");
            exact.resize(mark);
            map_entries.emplace_back(f.number, std::move(entry));
            return absl::OkStatus();
          }
          const size_t before = numbers.size();
          exact.push_back('{');
          if (!Walk(f.bytes, *fp->sub, exact, numbers))
            return wire::Malformed("message");
          if (!fp->repeated && exact.size() == mark + 5 &&
              numbers.size() == before) {
            exact.resize(mark);  // nothing of it counted
          } else {
            exact.push_back('}');
          }
          return absl::OkStatus();
        }
        if (fp != nullptr && fp->tolerant_number) {
          exact.push_back('#');
          if (f.wire_type == wire::kLengthDelimited) {  // packed
            const auto* p = reinterpret_cast<const uint8_t*>(f.bytes.data());
            const uint8_t* end = p + f.bytes.size();
            while (p < end) {
              uint64_t v = 0;
              if (fp->type == FieldDescriptor::TYPE_DOUBLE ||
                  fp->type == FieldDescriptor::TYPE_FIXED64 ||
                  fp->type == FieldDescriptor::TYPE_SFIXED64) {
                if (end - p < 8) return wire::Malformed("packed");
                std::memcpy(&v, p, 8);
                p += 8;
              } else if (fp->type == FieldDescriptor::TYPE_FLOAT ||
                         fp->type == FieldDescriptor::TYPE_FIXED32 ||
                         fp->type == FieldDescriptor::TYPE_SFIXED32) {
                if (end - p < 4) return wire::Malformed("packed");
                uint32_t u;
                std::memcpy(&u, p, 4);
                v = u;
                p += 4;
              } else if (!wire::ReadVarint(p, end, &v)) {
                return wire::Malformed("packed");
              }
              numbers.push_back(NumberOf(fp->type, v));
            }
          } else {
            numbers.push_back(NumberOf(
                fp->type, f.wire_type == wire::kVarint ? f.varint : f.fixed));
          }
          return absl::OkStatus();
        }
        switch (f.wire_type) {
          case wire::kVarint:
            AppendBits(f.varint, exact);
            break;
          case wire::kLengthDelimited:
            AppendBits(f.bytes.size(), exact);
            exact.append(f.bytes.data(), f.bytes.size());
            break;
          default:
            AppendBits(f.fixed, exact);
        }
        return absl::OkStatus();
      });
  if (!st.ok()) return false;
  std::sort(map_entries.begin(), map_entries.end());
  for (const auto& [number, entry] : map_entries) {
    AppendTag(number, wire::kLengthDelimited, exact);
    AppendBits(entry.size(), exact);
    exact.append(entry);
  }
  return true;
}

}  // namespace

Material MaterialOfWire(absl::string_view report) {
  Material out;
  out.numbers.reserve(256);
  thread_local std::string exact;
  exact.clear();
  if (!Walk(report, ReportPlan(), exact, out.numbers)) {
    out.numbers.clear();
    return out;  // digest 0: unknown
  }
  const uint64_t h = std::hash<std::string>{}(exact);
  out.digest = h == 0 ? 1 : h;
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
