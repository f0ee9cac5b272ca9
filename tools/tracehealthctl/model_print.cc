#include "tools/tracehealthctl/model_print.h"

#include <string>

#include "absl/strings/str_format.h"
#include "common/enum_names.h"
#include "common/escape.h"
#include "common/proto_json.h"

namespace tracehealth {
namespace {

void PrintChecks(
    const google::protobuf::RepeatedPtrField<v1::ThresholdCheck>& checks,
    std::ostream& out) {
  for (const v1::ThresholdCheck& c : checks) {
    out << absl::StrFormat(
        "  check %-15s threshold %-10.6g predicted %-10.6g margin %.3f%s%s\n",
        CheckKindName(c.kind()), c.threshold(), c.predicted(), c.margin(),
        c.applies() ? "" : "  (does not apply)",
        c.panics() ? "  (panics)" : "");
  }
}

}  // namespace

void PrintBasis(const v1::Basis& basis, std::ostream& out) {
  out << "  basis (confidence " << absl::StrFormat("%.2f", basis.confidence())
      << "):\n";
  for (const v1::BasisInput& i : basis.inputs()) {
    out << "    input    " << i.name() << " = " << EscapeText(i.value()) << " ["
        << InputSourceName(i.source()) << "]\n";
  }
  for (const v1::BasisConstant& c : basis.constants()) {
    out << "    constant " << c.name() << " = "
        << absl::StrFormat("%.6g", c.value()) << " " << c.unit() << " ("
        << c.origin() << ")\n";
  }
  for (const std::string& row : basis.feature_rows())
    out << "    feature  " << row << "\n";
  for (const std::string& note : basis.notes())
    out << "    note     " << EscapeText(note) << "\n";
}

void PrintAttach(const v1::AttachPrediction& p, std::ostream& out) {
  out << EscapeText(p.summary()) << "\n";
  out << absl::StrFormat(
      "  uses fgraph %s, already active %s; threads %d, NULL %d, batch %d\n"
      "  passes %d, visits %.6g, latency %.6g s (walk %.6g s, %.6g s with "
      "the NULL threads first; patch %.6g s for %d sites; detach %.6g s), "
      "longest pass %.6g s, without a reschedule point %.6g s, risk %s\n",
      p.uses_fgraph() ? "yes" : "no", p.fgraph_already_active() ? "yes" : "no",
      p.threads_total(), p.null_threads(), p.batch(), p.passes(), p.visits(),
      p.latency_seconds(), p.walk_seconds(), p.walk_seconds_low(),
      p.patch_seconds(), p.patch_sites(), p.detach_seconds(),
      p.longest_pass_seconds(), p.non_yielding_seconds(), RiskName(p.risk()));
  out << absl::StrFormat(
      "  ftrace_lock held %.6g s, fork/exit wait %.6g s, shadow stacks %d B "
      "(%d B each), CPU: %s%s%s\n",
      p.lock_seconds(), p.fork_wait_seconds(), p.shadow_stack_bytes(),
      p.shadow_stack_size(), CpuClassName(p.cpu_class()),
      p.busy() ? "; refused (EBUSY)" : "",
      p.unavailable() ? "; unavailable on this kernel" : "");
  PrintChecks(p.checks(), out);
  if (p.hung_task() != v1::HUNG_TASK_RISK_UNSPECIFIED) {
    out << "  hung tasks (ftrace_lock waiters): "
        << HungTaskRiskName(p.hung_task()) << "\n";
  }
  if (p.has_c_visit_factor_to_stall()) {
    out << absl::StrFormat("  a stall threshold at %.4gx c_visit\n",
                           p.c_visit_factor_to_stall());
  }
  if (p.has_threads_at_stall()) {
    out << absl::StrFormat("  stalls from %.0f threads, all without a stack\n",
                           p.threads_at_stall());
  }
  if (p.has_null_threads_at_stall()) {
    out << absl::StrFormat(
        "  stalls from %.0f NULL-stack threads at this thread count\n",
        p.null_threads_at_stall());
  }
  if (p.has_threads_at_latency_budget()) {
    out << absl::StrFormat("  latency budget crossed from %.0f threads\n",
                           p.threads_at_latency_budget());
  }
  PrintBasis(p.basis(), out);
}

void PrintStackDepot(const v1::StackDepotPrediction& p, std::ostream& out) {
  out << EscapeText(p.summary()) << "\n";
  out << "  applies " << (p.applies() ? "yes" : "no");
  if (p.has_pools_used()) out << ", pools " << p.pools_used();
  if (p.has_max_pools()) out << " of " << p.max_pools();
  if (p.has_budget_ratio())
    out << absl::StrFormat(" (ratio %.3f)", p.budget_ratio());
  out << ", pools of " << p.pool_bytes() << " B, hash record "
      << p.hash_record_bytes() << " B, risk " << RiskName(p.risk()) << "\n";
  if (p.has_growth_pools_per_second()) {
    out << absl::StrFormat("  growth %.6g pools/s",
                           p.growth_pools_per_second());
    if (p.has_seconds_to_exhaustion()) {
      out << absl::StrFormat(", exhaustion in %.6g s",
                             p.seconds_to_exhaustion());
    }
    out << "\n";
  }
  const v1::TrieEstimate& t = p.trie();
  out << absl::StrFormat(
      "  trie (%s): %d records, hash %d B in %d pools, trie %d B in %d pools, "
      "ratio %.3f\n",
      t.source() == v1::TrieEstimate::SOURCE_HOST_TRACES ? "host traces"
                                                         : "generated",
      t.records(), t.hash_bytes(), t.hash_pools(), t.trie_bytes(),
      t.trie_pools(), t.ratio());
  PrintChecks(p.checks(), out);
  PrintBasis(p.basis(), out);
}

void PrintVmap(const v1::VmapPurgePrediction& p, std::ostream& out) {
  out << EscapeText(p.summary()) << "\n";
  out << absl::StrFormat(
      "  applies %s, lazy threshold %d pages, flushes %d, combined %s (%d "
      "vmap nodes), invlpgb %s, broadcast TLBI %s, per flush %.6g s, purge "
      "%.6g s, yields %s, risk %s\n",
      p.applies() ? "yes" : "no", p.lazy_threshold_pages(),
      p.flushes_per_purge(), p.combined_flushes() ? "yes" : "no",
      p.vmap_nodes(), p.invlpgb() ? "yes" : "no",
      p.broadcast_tlbi() ? "yes" : "no", p.per_flush_seconds(),
      p.purge_seconds(), p.yields() ? "yes" : "no", RiskName(p.risk()));
  PrintChecks(p.checks(), out);
  PrintBasis(p.basis(), out);
}

bool PrintJson(const google::protobuf::Message& message, std::ostream& out,
               std::ostream& err) {
  ProtoJsonOptions options;
  options.pretty = true;
  absl::StatusOr<std::string> json = ProtoToJson(message, options);
  if (!json.ok()) {
    err << "model: cannot render JSON: " << json.status().message() << "\n";
    return false;
  }
  out << *json;
  if (json->empty() || json->back() != '\n') out << "\n";
  return true;
}

}  // namespace tracehealth
