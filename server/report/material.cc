#include "server/report/material.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>

#include "absl/container/flat_hash_set.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"

namespace tracehealth::server {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// The fields that do not count: they move from cycle to cycle on a steady
// host. A heartbeat carries seq, observed_at and threads.total; what the
// others change reaches the predictions, whose numbers count beyond the
// tolerance.
constexpr const char* kMovingFields[] = {
    // Identity of the report, carried by every heartbeat.
    "tracehealth.v1.HostReport.seq",
    "tracehealth.v1.HostReport.observed_at",
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

// What to do with each field of a message type, worked out once: the walk
// below runs on every report received.
struct Plan;
struct FieldPlan {
  const FieldDescriptor* f = nullptr;
  bool tolerant_number = false;  // a number inside predictions
  const Plan* sub = nullptr;     // message fields
  char tag[2] = {0, 0};          // field number, in the exact bytes
};
struct Plan {
  std::vector<FieldPlan> fields;  // the ones that count, by number
};

const Plan* BuildPlan(const google::protobuf::Descriptor* d, bool tolerant,
                      std::vector<std::unique_ptr<Plan>>& all, int depth) {
  all.push_back(std::make_unique<Plan>());
  Plan* p = all.back().get();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (MovingSet().contains(f->full_name())) continue;
    FieldPlan fp;
    fp.f = f;
    fp.tag[0] = static_cast<char>(f->number() & 0xff);
    fp.tag[1] = static_cast<char>((f->number() >> 8) | 0x80);
    const bool sub_tolerant =
        tolerant || f->full_name() == "tracehealth.v1.HostReport.predictions";
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (depth > 12) continue;  // (the schema nests less deeply)
      fp.sub = BuildPlan(f->message_type(), sub_tolerant, all, depth + 1);
    } else {
      fp.tolerant_number = sub_tolerant && IsNumber(f);
    }
    p->fields.push_back(fp);
  }
  std::sort(p->fields.begin(), p->fields.end(),
            [](const FieldPlan& a, const FieldPlan& b) {
              return a.f->number() < b.f->number();
            });
  return p;
}

const Plan& ReportPlan() {
  static const Plan* plan = [] {
    auto* all = new std::vector<std::unique_ptr<Plan>>();
    return BuildPlan(v1::HostReport::descriptor(), false, *all, 0);
  }();
  return *plan;
}

double NumberOf(const Message& m, const Reflection& r, const FieldDescriptor* f,
                int i) {
  const bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return rep ? r.GetRepeatedInt32(m, f, i) : r.GetInt32(m, f);
    case FieldDescriptor::CPPTYPE_INT64:
      return static_cast<double>(rep ? r.GetRepeatedInt64(m, f, i)
                                     : r.GetInt64(m, f));
    case FieldDescriptor::CPPTYPE_UINT32:
      return rep ? r.GetRepeatedUInt32(m, f, i) : r.GetUInt32(m, f);
    case FieldDescriptor::CPPTYPE_UINT64:
      return static_cast<double>(rep ? r.GetRepeatedUInt64(m, f, i)
                                     : r.GetUInt64(m, f));
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return rep ? r.GetRepeatedDouble(m, f, i) : r.GetDouble(m, f);
    case FieldDescriptor::CPPTYPE_FLOAT:
      return rep ? r.GetRepeatedFloat(m, f, i) : r.GetFloat(m, f);
    default:
      return 0;
  }
}

void AppendBits(uint64_t v, std::string& out) {
  char bits[sizeof v];
  std::memcpy(bits, &v, sizeof v);
  out.append(bits, sizeof bits);
}

// Appends the exact encoding of a scalar (not a message) value.
void AppendScalar(const Message& m, const Reflection& r,
                  const FieldDescriptor* f, int i, std::string& scratch,
                  std::string& out) {
  const bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING: {
      const std::string& s =
          rep ? r.GetRepeatedStringReference(m, f, i, &scratch)
              : r.GetStringReference(m, f, &scratch);
      AppendBits(s.size(), out);
      out.append(s);
      return;
    }
    case FieldDescriptor::CPPTYPE_BOOL:
      out.push_back((rep ? r.GetRepeatedBool(m, f, i) : r.GetBool(m, f)) ? 'T'
                                                                         : 'F');
      return;
    case FieldDescriptor::CPPTYPE_ENUM:
      AppendBits(static_cast<uint64_t>(rep ? r.GetRepeatedEnumValue(m, f, i)
                                           : r.GetEnumValue(m, f)),
                 out);
      return;
    default: {
      // Exact numbers by their bits.
      const double v = NumberOf(m, r, f, i);
      uint64_t bits;
      std::memcpy(&bits, &v, sizeof v);
      AppendBits(bits, out);
      return;
    }
  }
}

// Appends what counts of `m` to `exact` and `numbers`; inside predictions
// numbers go to `numbers`, their place to `exact`. A message holding only
// moving fields counts as absent.
void Walk(const Message& m, const Plan& plan, std::string& scratch,
          std::string& exact, std::vector<float>& numbers) {
  const Reflection& r = *m.GetReflection();
  for (const FieldPlan& fp : plan.fields) {
    const FieldDescriptor* f = fp.f;
    int n = 1;
    if (f->is_repeated()) {
      n = r.FieldSize(m, f);
      if (n == 0) continue;
    } else if (!r.HasField(m, f)) {
      continue;
    }
    const size_t mark = exact.size();
    exact.append(fp.tag, 2);
    if (fp.sub != nullptr) {
      if (f->is_map()) {
        // No stable order: the entries' bytes, sorted.
        std::vector<std::string> entries(n);
        for (int i = 0; i < n; ++i) {
          Walk(r.GetRepeatedMessage(m, f, i), *fp.sub, scratch, entries[i],
               numbers);
        }
        std::sort(entries.begin(), entries.end());
        for (const std::string& e : entries) {
          AppendBits(e.size(), exact);
          exact.append(e);
        }
      } else if (f->is_repeated()) {
        for (int i = 0; i < n; ++i) {
          exact.push_back('{');
          Walk(r.GetRepeatedMessage(m, f, i), *fp.sub, scratch, exact, numbers);
          exact.push_back('}');
        }
      } else {
        const size_t before = numbers.size();
        Walk(r.GetMessage(m, f), *fp.sub, scratch, exact, numbers);
        if (exact.size() == mark + 2 && numbers.size() == before) {
          exact.resize(mark);  // nothing of it counted
        }
      }
    } else if (fp.tolerant_number) {
      for (int i = 0; i < n; ++i) {
        exact.push_back('#');
        numbers.push_back(static_cast<float>(NumberOf(m, r, f, i)));
      }
    } else {
      for (int i = 0; i < n; ++i) AppendScalar(m, r, f, i, scratch, exact);
    }
  }
}

}  // namespace

Material MaterialOf(const v1::HostReport& report) {
  Material out;
  thread_local std::string exact;
  thread_local std::string scratch;
  exact.clear();
  Walk(report, ReportPlan(), scratch, exact, out.numbers);
  const uint64_t h = std::hash<std::string>{}(exact);
  out.digest = h == 0 ? 1 : h;
  return out;
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

}  // namespace tracehealth::server
