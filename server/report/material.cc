#include "server/report/material.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
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

// Appends the exact encoding of a scalar (not a message) value.
void AppendScalar(const Message& m, const Reflection& r,
                  const FieldDescriptor* f, int i, std::string& out) {
  const bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING: {
      const std::string s =
          rep ? r.GetRepeatedString(m, f, i) : r.GetString(m, f);
      absl::StrAppend(&out, s.size(), ":", s);
      return;
    }
    case FieldDescriptor::CPPTYPE_BOOL:
      out.push_back((rep ? r.GetRepeatedBool(m, f, i) : r.GetBool(m, f)) ? 'T'
                                                                         : 'F');
      return;
    case FieldDescriptor::CPPTYPE_ENUM:
      absl::StrAppend(&out, rep ? r.GetRepeatedEnumValue(m, f, i)
                                : r.GetEnumValue(m, f));
      return;
    default: {
      // Exact numbers by their bits.
      const double v = NumberOf(m, r, f, i);
      char bits[sizeof v];
      std::memcpy(bits, &v, sizeof v);
      out.append(bits, sizeof bits);
      return;
    }
  }
}

// Appends what counts of `m` to `exact` and `numbers`; inside predictions
// (`tolerant`) numbers go to `numbers`, their place to `exact`.
void Walk(const Message& m, bool tolerant, std::string& exact,
          std::vector<double>& numbers) {
  const Reflection& r = *m.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r.ListFields(m, &fields);  // set fields, by number
  for (const FieldDescriptor* f : fields) {
    if (MovingSet().contains(f->full_name())) continue;
    const bool sub_tolerant =
        tolerant || f->full_name() == "tracehealth.v1.HostReport.predictions";
    const size_t mark = exact.size();
    absl::StrAppend(&exact, "<", f->number(), ">");
    const int n = f->is_repeated() ? r.FieldSize(m, f) : 1;
    std::vector<std::string> entries;  // a map's, sorted (no stable order)
    for (int i = 0; i < n; ++i) {
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        const Message& sub = f->is_repeated() ? r.GetRepeatedMessage(m, f, i)
                                              : r.GetMessage(m, f);
        if (f->is_map()) {
          std::string entry;
          Walk(sub, sub_tolerant, entry, numbers);
          entries.push_back(std::move(entry));
        } else {
          std::string inner;
          const size_t before = numbers.size();
          Walk(sub, sub_tolerant, inner, numbers);
          // A message holding only moving fields counts as absent.
          if (!f->is_repeated() && inner.empty() && numbers.size() == before)
            continue;
          absl::StrAppend(&exact, "{", inner, "}");
        }
      } else if (sub_tolerant && IsNumber(f)) {
        exact.push_back('#');
        numbers.push_back(NumberOf(m, r, f, i));
      } else {
        AppendScalar(m, r, f, i, exact);
        exact.push_back(',');
      }
    }
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !f->is_repeated() &&
        exact.size() == mark + absl::StrCat("<", f->number(), ">").size()) {
      exact.resize(mark);  // nothing of it counted
      continue;
    }
    std::sort(entries.begin(), entries.end());
    for (const std::string& e : entries) absl::StrAppend(&exact, "{", e, "}");
  }
}

}  // namespace

Material MaterialOf(const v1::HostReport& report) {
  Material out;
  std::string exact;
  exact.reserve(1024);
  Walk(report, false, exact, out.numbers);
  const uint64_t h = std::hash<std::string>{}(exact);
  out.digest = h == 0 ? 1 : h;
  return out;
}

bool SameMaterial(uint64_t digest_a, absl::Span<const double> numbers_a,
                  uint64_t digest_b, absl::Span<const double> numbers_b) {
  if (digest_a == 0 || digest_a != digest_b) return false;
  if (numbers_a.size() != numbers_b.size()) return false;
  for (size_t i = 0; i < numbers_a.size(); ++i) {
    const double a = numbers_a[i], b = numbers_b[i];
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
