#include "tools/tracehealthctl/model_command.h"

#include <cmath>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/enum_names.h"
#include "common/kernel/release.h"
#include "common/models/evaluate.h"
#include "common/models/fgraph/fgraph_attach.h"
#include "common/models/risk.h"
#include "common/models/stackdepot/stack_depot.h"
#include "common/models/vmap/vmap_purge.h"
#include "google/protobuf/util/json_util.h"

// Numeric flags use -1 for "not given": the model then treats the input as
// unknown or takes its default, exactly as for a host that could not read it.
ABSL_FLAG(std::string, kernel, "", "Kernel release, e.g. 6.18.2 (model: all)");
ABSL_FLAG(std::string, preempt, "",
          "Preemption mode: none|voluntary|full|lazy|rt (model: fgraph, vmap)");
ABSL_FLAG(int64_t, watchdog_thresh, -1, "watchdog_thresh in seconds (default 10)");
ABSL_FLAG(int64_t, rcu_stall_timeout, -1, "rcu_cpu_stall_timeout in seconds (default 21)");
ABSL_FLAG(int64_t, threads, -1, "Threads on the host, N_total (model: fgraph)");
ABSL_FLAG(int64_t, null_threads, -1,
          "Threads without a shadow stack, N_null (default: all when fgraph was "
          "never active) (model: fgraph)");
ABSL_FLAG(std::string, fgraph_active, "", "true|false: fgraph already active (model: fgraph)");
ABSL_FLAG(int64_t, batch, -1, "FTRACE_RETSTACK_ALLOC_SIZE what-if, e.g. 1024 (model: fgraph)");
ABSL_FLAG(double, c_visit_ns, -1, "Per-task visit cost in ns (model: fgraph)");
ABSL_FLAG(std::string, probe, "",
          "Probe kind: function_graph|function_profiler|graph_latency|kprobe_multi|"
          "kprobe_multi_return|kprobe_session|fprobe|fprobe_return|kretprobe|fentry "
          "(default: all) (model: fgraph)");
ABSL_FLAG(int64_t, sites, -1, "Call sites the probe patches (model: fgraph)");
ABSL_FLAG(int64_t, filter_functions, -1,
          "Lines of available_filter_functions (model: fgraph)");
ABSL_FLAG(double, latency_budget, -1,
          "Latency budget in seconds for the inverse prediction (model: fgraph)");
ABSL_FLAG(int64_t, cpus, -1, "Online CPUs (model: vmap)");
ABSL_FLAG(std::string, invlpgb, "", "true|false: CPU has invlpgb (model: vmap)");
ABSL_FLAG(int64_t, unpurged_areas, -1, "Lazily freed vmalloc areas (model: vmap)");
ABSL_FLAG(int64_t, shadow_page_areas, -1,
          "Of those, areas owning a whole KASAN shadow page (model: vmap)");
ABSL_FLAG(int64_t, page_size, -1, "Page size in bytes (default 4096) (model: vmap)");
ABSL_FLAG(int64_t, pools, -1, "Stack depot pools in use (model: stackdepot)");
ABSL_FLAG(int64_t, max_pools, -1, "stack_depot_max_pools (default 8192) (model: stackdepot)");
ABSL_FLAG(int64_t, frames, -1, "CONFIG_STACKDEPOT_MAX_FRAMES (default 64) (model: stackdepot)");
ABSL_FLAG(int64_t, persistent_count, -1, "Persistent stack records (model: stackdepot)");
ABSL_FLAG(int64_t, persistent_bytes, -1, "Persistent record bytes (model: stackdepot)");
ABSL_FLAG(std::string, history, "",
          "Pool samples 'SECONDS:POOLS,...' (oldest first) for growth (model: stackdepot)");
ABSL_FLAG(std::string, show_stacks, "",
          "A page_owner_stacks/show_stacks file to run the trie on (model: stackdepot)");

namespace tracehealth {
namespace {

constexpr char kUsage[] =
    "usage: tracehealthctl model fgraph|stackdepot|vmap [flags] [--json]\n"
    "  fgraph:     --threads N [--null_threads N] [--batch B] [--preempt MODE] "
    "[--kernel REL] [--probe KIND] [--sites N] [--c_visit_ns NS] "
    "[--watchdog_thresh S] [--rcu_stall_timeout S] [--latency_budget S] "
    "[--fgraph_active true|false]\n"
    "  stackdepot: --pools N [--max_pools N] [--frames N] [--persistent_bytes N] "
    "[--persistent_count N] [--history T:P,...] [--show_stacks FILE]\n"
    "  vmap:       --cpus N [--kernel REL] [--unpurged_areas N] "
    "[--shadow_page_areas N] [--invlpgb true|false] [--preempt MODE]\n";

// What the flags built: the snapshot, the options, and which basis inputs
// came from flags (marked OVERRIDDEN in the output).
struct Request {
  v1::HostSnapshot snapshot;
  ModelOptions options;
  std::set<std::string> given;
  std::optional<v1::ProbeKind> probe;
};

absl::StatusOr<std::optional<bool>> BoolFlag(const std::string& name,
                                             const std::string& value) {
  if (value.empty()) return std::optional<bool>();
  bool b = false;
  if (!absl::SimpleAtob(value, &b)) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, ": not a boolean: ", value));
  }
  return std::optional<bool>(b);
}

absl::Status NonNegative(const std::string& name, int64_t value) {
  if (value < -1) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, " must be >= 0"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Request> BuildRequest(const std::string& model) {
  Request r;
  v1::HostSnapshot& s = r.snapshot;
  const std::pair<const char*, int64_t> numeric[] = {
      {"watchdog_thresh", absl::GetFlag(FLAGS_watchdog_thresh)},
      {"rcu_stall_timeout", absl::GetFlag(FLAGS_rcu_stall_timeout)},
      {"threads", absl::GetFlag(FLAGS_threads)},
      {"null_threads", absl::GetFlag(FLAGS_null_threads)},
      {"batch", absl::GetFlag(FLAGS_batch)},
      {"sites", absl::GetFlag(FLAGS_sites)},
      {"filter_functions", absl::GetFlag(FLAGS_filter_functions)},
      {"cpus", absl::GetFlag(FLAGS_cpus)},
      {"unpurged_areas", absl::GetFlag(FLAGS_unpurged_areas)},
      {"shadow_page_areas", absl::GetFlag(FLAGS_shadow_page_areas)},
      {"page_size", absl::GetFlag(FLAGS_page_size)},
      {"pools", absl::GetFlag(FLAGS_pools)},
      {"max_pools", absl::GetFlag(FLAGS_max_pools)},
      {"frames", absl::GetFlag(FLAGS_frames)},
      {"persistent_count", absl::GetFlag(FLAGS_persistent_count)},
      {"persistent_bytes", absl::GetFlag(FLAGS_persistent_bytes)},
  };
  for (const auto& [name, value] : numeric) {
    absl::Status st = NonNegative(name, value);
    if (!st.ok()) return st;
  }
  const std::pair<const char*, double> real[] = {
      {"c_visit_ns", absl::GetFlag(FLAGS_c_visit_ns)},
      {"latency_budget", absl::GetFlag(FLAGS_latency_budget)},
  };
  for (const auto& [name, value] : real) {
    if ((value < 0 && value != -1) || std::isnan(value) || std::isinf(value)) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, " must be >= 0"));
    }
  }

  const std::string kernel = absl::GetFlag(FLAGS_kernel);
  if (!kernel.empty()) {
    absl::StatusOr<KernelRelease> release = ParseKernelRelease(kernel);
    if (!release.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--kernel: ", release.status().message()));
    }
    s.mutable_kernel()->set_release(kernel);
    r.given.insert("kernel.release");
  }
  const std::string preempt = absl::AsciiStrToLower(absl::GetFlag(FLAGS_preempt));
  if (!preempt.empty()) {
    std::optional<v1::PreemptMode> mode = PreemptModeFromName(preempt);
    if (!mode.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--preempt: expected none|voluntary|full|lazy|rt, got ", preempt));
    }
    s.mutable_kernel()->set_preempt_mode(*mode);
    s.mutable_kernel()->set_preempt_source("--preempt");
    r.given.insert("kernel.preempt_mode");
  }
  if (int64_t v = absl::GetFlag(FLAGS_watchdog_thresh); v >= 0) {
    s.mutable_thresholds()->set_watchdog_thresh_seconds(static_cast<uint32_t>(v));
    r.given.insert("thresholds.watchdog_thresh");
  }
  if (int64_t v = absl::GetFlag(FLAGS_rcu_stall_timeout); v >= 0) {
    s.mutable_thresholds()->set_rcu_cpu_stall_timeout_seconds(static_cast<uint32_t>(v));
    r.given.insert("thresholds.rcu_cpu_stall_timeout");
  }

  if (model == "fgraph") {
    if (int64_t v = absl::GetFlag(FLAGS_threads); v >= 0) {
      s.mutable_threads()->set_total(static_cast<uint64_t>(v));
      r.given.insert("threads.total");
    }
    if (int64_t v = absl::GetFlag(FLAGS_null_threads); v >= 0) {
      s.mutable_fgraph()->set_null_threads_bound(static_cast<uint64_t>(v));
      s.mutable_fgraph()->set_null_threads_basis("given by --null_threads");
      r.given.insert("fgraph.null_threads_bound");
    }
    absl::StatusOr<std::optional<bool>> active =
        BoolFlag("fgraph_active", absl::GetFlag(FLAGS_fgraph_active));
    if (!active.ok()) return active.status();
    if (active->has_value()) {
      s.mutable_fgraph()->set_active(**active);
      r.given.insert("fgraph.active");
    }
    if (int64_t v = absl::GetFlag(FLAGS_filter_functions); v >= 0) {
      s.mutable_fgraph()->set_available_filter_functions(static_cast<uint64_t>(v));
      r.given.insert("fgraph.available_filter_functions");
    }
    if (int64_t v = absl::GetFlag(FLAGS_batch); v >= 0) {
      if (v == 0 || v > (1 << 20)) {
        return absl::InvalidArgumentError("--batch must be in 1..1048576");
      }
      r.options.batch = static_cast<uint32_t>(v);
    }
    if (int64_t v = absl::GetFlag(FLAGS_sites); v >= 0) {
      r.options.sites = static_cast<uint64_t>(v);
    }
    if (double v = absl::GetFlag(FLAGS_c_visit_ns); v >= 0) {
      if (v == 0) return absl::InvalidArgumentError("--c_visit_ns must be > 0");
      r.options.c_visit_seconds = v * 1e-9;
    }
    if (double v = absl::GetFlag(FLAGS_latency_budget); v >= 0) {
      r.options.latency_budget_seconds = v;
    }
    const std::string probe = absl::GetFlag(FLAGS_probe);
    if (!probe.empty()) {
      r.probe = ProbeKindFromFlag(probe);
      if (!r.probe) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--probe: unknown kind '", probe, "' (", absl::StrJoin(ProbeKindFlags(), "|"), ")"));
      }
    }
  } else if (model == "vmap") {
    // Asking about the purge presumes a KASAN_VMALLOC kernel.
    s.mutable_kernel()->set_config_kasan_vmalloc(true);
    s.mutable_kernel()->set_config_kasan(true);
    r.given.insert("kernel.config_kasan_vmalloc");
    if (int64_t v = absl::GetFlag(FLAGS_cpus); v >= 0) {
      s.mutable_cpus()->set_online(static_cast<uint32_t>(v));
      r.given.insert("cpus.online");
    }
    absl::StatusOr<std::optional<bool>> invlpgb =
        BoolFlag("invlpgb", absl::GetFlag(FLAGS_invlpgb));
    if (!invlpgb.ok()) return invlpgb.status();
    if (invlpgb->has_value()) {
      s.mutable_cpus()->set_invlpgb(**invlpgb);
      r.given.insert("cpus.invlpgb");
    }
    if (int64_t v = absl::GetFlag(FLAGS_unpurged_areas); v >= 0) {
      s.mutable_vmalloc()->set_unpurged_areas(static_cast<uint64_t>(v));
      r.given.insert("vmalloc.unpurged_areas");
    }
    if (int64_t v = absl::GetFlag(FLAGS_shadow_page_areas); v >= 0) {
      s.mutable_vmalloc()->set_unpurged_shadow_page_areas(static_cast<uint64_t>(v));
      r.given.insert("vmalloc.unpurged_shadow_page_areas");
    }
    if (int64_t v = absl::GetFlag(FLAGS_page_size); v >= 0) {
      if (v == 0) return absl::InvalidArgumentError("--page_size must be > 0");
      s.mutable_kernel()->set_page_size(static_cast<uint32_t>(v));
      r.given.insert("kernel.page_size");
    }
  } else if (model == "stackdepot") {
    s.mutable_kernel()->set_config_stackdepot(true);
    r.given.insert("kernel.config_stackdepot");
    if (int64_t v = absl::GetFlag(FLAGS_pools); v >= 0) {
      s.mutable_stackdepot()->set_pools(static_cast<uint64_t>(v));
      r.given.insert("stackdepot.pools");
    }
    if (int64_t v = absl::GetFlag(FLAGS_max_pools); v >= 0) {
      if (v == 0) return absl::InvalidArgumentError("--max_pools must be > 0");
      s.mutable_stackdepot()->set_max_pools(static_cast<uint64_t>(v));
      s.mutable_stackdepot()->set_max_pools_source("--max_pools");
      r.given.insert("stackdepot.max_pools");
    }
    if (int64_t v = absl::GetFlag(FLAGS_frames); v >= 0) {
      if (v == 0) return absl::InvalidArgumentError("--frames must be > 0");
      s.mutable_kernel()->set_config_stackdepot_max_frames(static_cast<uint32_t>(v));
      r.given.insert("kernel.config_stackdepot_max_frames");
    }
    if (int64_t v = absl::GetFlag(FLAGS_persistent_count); v >= 0) {
      s.mutable_stackdepot()->set_persistent_count(static_cast<uint64_t>(v));
    }
    if (int64_t v = absl::GetFlag(FLAGS_persistent_bytes); v >= 0) {
      s.mutable_stackdepot()->set_persistent_bytes(static_cast<uint64_t>(v));
      r.given.insert("stackdepot.persistent_bytes");
    }
    const std::string history = absl::GetFlag(FLAGS_history);
    if (!history.empty()) {
      for (absl::string_view item : absl::StrSplit(history, ',', absl::SkipEmpty())) {
        std::pair<std::string, std::string> parts = absl::StrSplit(item, ':');
        int64_t at = 0;
        uint64_t pools = 0;
        if (!absl::SimpleAtoi(parts.first, &at) || !absl::SimpleAtoi(parts.second, &pools)) {
          return absl::InvalidArgumentError(
              absl::StrCat("--history: expected SECONDS:POOLS, got '", item, "'"));
        }
        v1::DepotSample* sample = s.add_depot_history();
        sample->mutable_at()->set_seconds(at);
        sample->set_pools(pools);
      }
      r.given.insert("depot_history");
    }
    const std::string show_stacks = absl::GetFlag(FLAGS_show_stacks);
    if (!show_stacks.empty()) {
      std::ifstream in(show_stacks, std::ios::binary);
      if (!in) {
        return absl::NotFoundError(absl::StrCat("--show_stacks: cannot open ", show_stacks));
      }
      std::stringstream text;
      text << in.rdbuf();
      absl::StatusOr<v1::TrieMeasurement> measured = MeasureShowStacks(text.str());
      if (!measured.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(show_stacks, ": ", measured.status().message()));
      }
      *s.mutable_trie() = *measured;
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown model '", model, "'"));
  }
  return r;
}

void MarkOverridden(const std::set<std::string>& given, v1::Basis* basis) {
  for (v1::BasisInput& input : *basis->mutable_inputs()) {
    if (given.count(input.name()) > 0) input.set_source(v1::INPUT_SOURCE_OVERRIDDEN);
  }
}

void PrintChecks(const google::protobuf::RepeatedPtrField<v1::ThresholdCheck>& checks,
                 const char* unit, std::ostream& out) {
  for (const v1::ThresholdCheck& c : checks) {
    out << absl::StrFormat("  check %-15s threshold %-10.6g predicted %-10.6g margin %.3f%s%s\n",
                           CheckKindName(c.kind()), c.threshold(), c.predicted(), c.margin(),
                           c.applies() ? "" : "  (does not apply)",
                           c.panics() ? "  (panics)" : "");
  }
  (void)unit;
}

void PrintBasis(const v1::Basis& basis, std::ostream& out) {
  out << "  basis (confidence " << absl::StrFormat("%.2f", basis.confidence()) << "):\n";
  for (const v1::BasisInput& i : basis.inputs()) {
    out << "    input    " << i.name() << " = " << i.value() << " [" << InputSourceName(i.source())
        << "]\n";
  }
  for (const v1::BasisConstant& c : basis.constants()) {
    out << "    constant " << c.name() << " = " << absl::StrFormat("%.6g", c.value()) << " "
        << c.unit() << " (" << c.origin() << ")\n";
  }
  for (const std::string& row : basis.feature_rows()) out << "    feature  " << row << "\n";
  for (const std::string& note : basis.notes()) out << "    note     " << note << "\n";
}

void PrintAttach(const v1::AttachPrediction& p, std::ostream& out) {
  out << p.summary() << "\n";
  out << absl::StrFormat(
      "  uses fgraph %s, already active %s; threads %d, NULL %d, batch %d\n"
      "  passes %d, visits %.6g, latency %.6g s (walk %.6g s, patch %.6g s for %d sites), "
      "longest pass %.6g s, risk %s\n",
      p.uses_fgraph() ? "yes" : "no", p.fgraph_already_active() ? "yes" : "no",
      p.threads_total(), p.null_threads(), p.batch(), p.passes(), p.visits(),
      p.latency_seconds(), p.walk_seconds(), p.patch_seconds(), p.patch_sites(),
      p.longest_pass_seconds(), RiskName(p.risk()));
  PrintChecks(p.checks(), "s", out);
  if (p.has_threads_at_stall()) {
    out << absl::StrFormat("  stalls from %.0f NULL-stack threads\n", p.threads_at_stall());
  }
  if (p.has_threads_at_latency_budget()) {
    out << absl::StrFormat("  latency budget crossed from %.0f threads\n",
                           p.threads_at_latency_budget());
  }
  PrintBasis(p.basis(), out);
}

void PrintStackDepot(const v1::StackDepotPrediction& p, std::ostream& out) {
  out << p.summary() << "\n";
  out << "  applies " << (p.applies() ? "yes" : "no");
  if (p.has_pools_used()) out << ", pools " << p.pools_used();
  if (p.has_max_pools()) out << " of " << p.max_pools();
  if (p.has_budget_ratio()) out << absl::StrFormat(" (ratio %.3f)", p.budget_ratio());
  out << ", hash record " << p.hash_record_bytes() << " B, risk " << RiskName(p.risk()) << "\n";
  if (p.has_growth_pools_per_second()) {
    out << absl::StrFormat("  growth %.6g pools/s", p.growth_pools_per_second());
    if (p.has_seconds_to_exhaustion()) {
      out << absl::StrFormat(", exhaustion in %.6g s", p.seconds_to_exhaustion());
    }
    out << "\n";
  }
  const v1::TrieEstimate& t = p.trie();
  out << absl::StrFormat(
      "  trie (%s): %d records, hash %d B in %d pools, trie %d B in %d pools, ratio %.3f\n",
      t.source() == v1::TrieEstimate::SOURCE_HOST_TRACES ? "host traces" : "generated",
      t.records(), t.hash_bytes(), t.hash_pools(), t.trie_bytes(), t.trie_pools(), t.ratio());
  PrintChecks(p.checks(), "pools", out);
  PrintBasis(p.basis(), out);
}

void PrintVmap(const v1::VmapPurgePrediction& p, std::ostream& out) {
  out << p.summary() << "\n";
  out << absl::StrFormat(
      "  applies %s, lazy threshold %d pages, flushes %d, combined %s, invlpgb %s, "
      "per flush %.6g s, purge %.6g s, risk %s\n",
      p.applies() ? "yes" : "no", p.lazy_threshold_pages(), p.flushes_per_purge(),
      p.combined_flushes() ? "yes" : "no", p.invlpgb() ? "yes" : "no", p.per_flush_seconds(),
      p.purge_seconds(), RiskName(p.risk()));
  PrintChecks(p.checks(), "s", out);
  PrintBasis(p.basis(), out);
}

bool PrintJson(const google::protobuf::Message& message, std::ostream& out,
               std::ostream& err) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  std::string json;
  auto status = google::protobuf::util::MessageToJsonString(message, &json, options);
  if (!status.ok()) {
    err << "model: cannot render JSON: " << status.ToString() << "\n";
    return false;
  }
  out << json;
  if (json.empty() || json.back() != '\n') out << "\n";
  return true;
}

}  // namespace

int RunModelCommand(const std::vector<std::string>& args, bool json,
                    std::ostream& out, std::ostream& err) {
  if (args.size() != 1) {
    err << (args.empty() ? "model: which model?\n" : "model: one model at a time\n")
        << kUsage;
    return 2;
  }
  const std::string& model = args[0];
  absl::StatusOr<Request> request = BuildRequest(model);
  if (!request.ok()) {
    err << "model: " << request.status().message() << "\n" << kUsage;
    return 2;
  }
  Request& r = *request;

  if (model == "fgraph") {
    v1::Predictions predictions;
    if (r.probe) {
      *predictions.add_attach() = PredictAttach(r.snapshot, *r.probe, r.options);
    } else {
      for (int k = v1::PROBE_KIND_FUNCTION_GRAPH_TRACER; k <= v1::PROBE_KIND_FENTRY_FEXIT; ++k) {
        *predictions.add_attach() =
            PredictAttach(r.snapshot, static_cast<v1::ProbeKind>(k), r.options);
      }
    }
    v1::Risk worst = v1::RISK_UNKNOWN;
    for (v1::AttachPrediction& a : *predictions.mutable_attach()) {
      MarkOverridden(r.given, a.mutable_basis());
      worst = std::max(worst, a.risk());
    }
    predictions.set_worst_risk(worst);
    if (json) return PrintJson(predictions, out, err) ? 0 : 1;
    for (const v1::AttachPrediction& a : predictions.attach()) PrintAttach(a, out);
    return 0;
  }
  if (model == "stackdepot") {
    v1::StackDepotPrediction p = PredictStackDepot(r.snapshot, r.options);
    MarkOverridden(r.given, p.mutable_basis());
    if (json) return PrintJson(p, out, err) ? 0 : 1;
    PrintStackDepot(p, out);
    return 0;
  }
  v1::VmapPurgePrediction p = PredictVmapPurge(r.snapshot, r.options);
  MarkOverridden(r.given, p.mutable_basis());
  if (json) return PrintJson(p, out, err) ? 0 : 1;
  PrintVmap(p, out);
  return 0;
}

}  // namespace tracehealth
