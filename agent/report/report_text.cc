#include "agent/report/report_text.h"

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/report/events_text.h"
#include "common/enum_names.h"
#include "common/escape.h"
#include "common/format.h"

namespace tracehealth::agent {
namespace {

// Inputs listed by name under "Reads" (the most bytes first).
constexpr int kInputCostRows = 8;

// The kernel's name, and why the mode matters for a long kernel loop.
std::string ModeName(v1::PreemptMode m) {
  std::string name = PreemptModeName(m);
  if (m == v1::PREEMPT_MODE_NONE) return name + " (non-preemptible)";
  if (m == v1::PREEMPT_MODE_VOLUNTARY)
    return name + " (non-preemptible in kernel loops)";
  return name;
}

// The shared risk name, loud from WARNING up.
std::string RiskText(v1::Risk r) {
  return r >= v1::RISK_WARNING ? absl::AsciiStrToUpper(RiskName(r))
                               : RiskName(r);
}

// A prediction's summary under its section, with its risk.
void AppendSummary(const std::string& summary, v1::Risk risk,
                   std::string* out) {
  if (summary.empty()) return;
  absl::StrAppend(out, "            ", EscapeText(summary), "  [risk ",
                  RiskText(risk), "]\n");
}

std::string Duration(double s) {
  int64_t t = static_cast<int64_t>(s);
  return absl::StrFormat("%dd %02dh %02dm", t / 86400, (t / 3600) % 24,
                         (t / 60) % 60);
}

// Kernel, preemption, config, threads, CPUs and watchdog thresholds.
void AppendHost(const v1::HostSnapshot& s, std::string* out) {
  const v1::KernelInfo& k = s.kernel();
  const v1::ThreadCounts& t = s.threads();
  absl::StrAppend(out, "Kernel      ",
                  k.has_release() ? EscapeText(k.release()) : "release unknown",
                  k.has_arch() ? absl::StrCat(" ", EscapeText(k.arch())) : "",
                  "\n");
  absl::StrAppend(out, "Preemption  ", ModeName(k.preempt_mode()));
  if (!k.preempt_source().empty()) {
    absl::StrAppend(out, "  [from ", EscapeText(k.preempt_source()), "]");
  }
  if (k.has_preempt_dynamic() && k.preempt_dynamic()) {
    absl::StrAppend(out, "  PREEMPT_DYNAMIC");
  }
  absl::StrAppend(out, "\n");
  if (k.has_config_kasan()) {
    absl::StrAppend(
        out, "Config      ", EscapeText(k.config_source()), ": KASAN ",
        k.config_kasan() ? (k.config_kasan_generic() ? "generic" : "on")
                         : "off",
        k.config_kasan_vmalloc() ? " +VMALLOC" : "", ", PAGE_OWNER ",
        k.config_page_owner() ? "on" : "off", ", FUNCTION_GRAPH_TRACER ",
        k.config_function_graph_tracer() ? "on" : "off", ", FPROBE ",
        k.config_fprobe() ? "on" : "off", "\n");
  }
  absl::StrAppend(
      out, "Threads     ", t.has_total() ? absl::StrCat(t.total()) : "unknown",
      t.has_running() ? absl::StrCat(" (", t.running(), " running)") : "",
      t.has_forks_since_boot()
          ? absl::StrCat(", ", t.forks_since_boot(), " forks since boot")
          : "",
      t.has_uptime_seconds()
          ? absl::StrCat(", up ", Duration(t.uptime_seconds()))
          : "",
      "\n");
  if (s.cpus().has_online()) {
    absl::StrAppend(out, "CPUs        ", s.cpus().online(), " online");
    if (s.cpus().has_model_name()) {
      absl::StrAppend(out, ", ", EscapeText(s.cpus().model_name()));
    }
    if (s.cpus().has_invlpgb()) {
      absl::StrAppend(out, ", invlpgb ", s.cpus().invlpgb() ? "yes" : "no");
    }
    absl::StrAppend(out, "\n");
  }
  const v1::Thresholds& th = s.thresholds();
  absl::StrAppend(
      out, "Watchdog    ",
      th.has_watchdog_thresh_seconds()
          ? absl::StrCat("soft lockup after ", 2 * th.watchdog_thresh_seconds(),
                         " s", th.softlockup_panic() ? " (panics)" : "")
          : "watchdog_thresh unknown",
      ", ",
      th.has_rcu_cpu_stall_timeout_seconds()
          ? absl::StrCat("RCU stall after ", th.rcu_cpu_stall_timeout_seconds(),
                         " s", th.panic_on_rcu_stall() ? " (panics)" : "")
          : "rcu_cpu_stall_timeout unknown",
      "\n");
}

void AppendFgraph(const v1::FgraphState& fg, std::string* out) {
  absl::StrAppend(
      out, "fgraph      ",
      !fg.has_active() ? "activity unknown"
      : fg.active()    ? "ACTIVE"
                       : "inactive",
      fg.has_tracefs_path()
          ? absl::StrCat("  [tracefs ", EscapeText(fg.tracefs_path()), "]")
          : "  [tracefs not mounted]",
      "\n");
  for (const v1::FgraphUser& u : fg.users()) {
    absl::StrAppend(out, "            user: ", FgraphUserName(u.kind()),
                    u.where().empty()
                        ? " (top level)"
                        : absl::StrCat(" (", EscapeText(u.where()), ")"),
                    "\n");
  }
  if (fg.has_null_threads_bound()) {
    absl::StrAppend(out, "            threads without a shadow stack <= ",
                    fg.null_threads_bound(), " (",
                    EscapeText(fg.null_threads_basis()), ")\n");
  }
  if (fg.has_available_filter_functions()) {
    absl::StrAppend(out, "            ", fg.available_filter_functions(),
                    " traceable functions, ",
                    fg.has_enabled_functions()
                        ? absl::StrCat(fg.enabled_functions())
                        : "unknown",
                    " patched now\n");
  }
}

void AppendAttachTable(const v1::Predictions& p, std::string* out) {
  absl::StrAppend(out, "\nFirst attach of each probe kind\n");
  absl::StrAppend(
      out, absl::StrFormat("  %-32s %-6s %10s %8s %10s  %s\n", "probe kind",
                           "fgraph", "latency", "passes", "walk", "risk"));
  for (const v1::AttachPrediction& a : p.attach()) {
    absl::StrAppend(
        out,
        absl::StrFormat("  %-32s %-6s %10s %8d %10s  %s\n",
                        ProbeKindLabel(a.probe_kind()),
                        !a.uses_fgraph()            ? "no"
                        : a.fgraph_already_active() ? "active"
                                                    : "yes",
                        FormatSeconds(a.latency_seconds()), a.passes(),
                        FormatSeconds(a.walk_seconds()), RiskText(a.risk())));
  }
  for (const v1::AttachPrediction& a : p.attach()) {
    if (a.probe_kind() == v1::PROBE_KIND_FUNCTION_GRAPH_TRACER ||
        a.probe_kind() == v1::PROBE_KIND_KPROBE_MULTI_RETURN) {
      absl::StrAppend(out, "  ", EscapeText(a.summary()), "\n");
    }
  }
}

void AppendStackDepot(const v1::HostSnapshot& s, const v1::Predictions& p,
                      std::string* out) {
  const v1::StackDepotStats& d = s.stackdepot();
  absl::StrAppend(out, "\nStack depot ");
  if (d.has_pools()) {
    absl::StrAppend(out, d.pools(), " of ",
                    d.has_max_pools() ? absl::StrCat(d.max_pools()) : "unknown",
                    " pools");
    if (d.has_max_pools() && d.max_pools() > 0) {
      absl::StrAppend(
          out, absl::StrFormat(" (%.1f%%)", 100.0 * d.pools() / d.max_pools()));
    }
    if (d.has_persistent_count()) {
      absl::StrAppend(out, ", ", d.persistent_count(), " persistent records");
    }
  } else {
    absl::StrAppend(out, "not readable");
  }
  absl::StrAppend(out, "\n");
  AppendSummary(p.stack_depot().summary(), p.stack_depot().risk(), out);
}

void AppendVmapPurge(const v1::HostSnapshot& s, const v1::Predictions& p,
                     std::string* out) {
  const v1::VmallocState& v = s.vmalloc();
  absl::StrAppend(out, "vmap purge  ");
  if (v.has_unpurged_areas()) {
    absl::StrAppend(out, v.unpurged_areas(), " unpurged areas (",
                    v.unpurged_bytes() / 1024, " KiB)");
    if (v.has_unpurged_shadow_page_areas()) {
      absl::StrAppend(out, ", ", v.unpurged_shadow_page_areas(),
                      " owning a whole shadow page");
    }
  } else if (s.kernel().has_config_kasan_vmalloc() &&
             !s.kernel().config_kasan_vmalloc()) {
    absl::StrAppend(out, "no KASAN vmalloc shadow (vmallocinfo not read)");
  } else {
    absl::StrAppend(out, "unpurged areas unknown");
  }
  absl::StrAppend(out, "\n");
  AppendSummary(p.vmap_purge().summary(), p.vmap_purge().risk(), out);
}

// Bytes for people: "812 B", "301.2 KiB", "31.2 MiB".
std::string Bytes(uint64_t b) {
  if (b < 1024) return absl::StrCat(b, " B");
  if (b < (1 << 20)) return absl::StrCat(FormatFixed(b / 1024.0, 1), " KiB");
  return absl::StrCat(FormatFixed(b / 1048576.0, 1), " MiB");
}

// The cycle's reads: totals, then the most expensive inputs.
void AppendInputCosts(const v1::AgentHealth& h, std::string* out) {
  if (h.input_costs_size() == 0) return;
  uint64_t opens = 0, reads = 0, bytes = 0, syscalls = 0;
  for (const v1::InputCost& c : h.input_costs()) {
    opens += c.opens();
    reads += c.read_calls();
    bytes += c.bytes_read();
    syscalls += c.syscalls();
  }
  absl::StrAppend(out, "Reads       ", h.input_costs_size(), " inputs, ", opens,
                  " opens, ", reads, " read calls, ", Bytes(bytes), ", ",
                  syscalls, " syscalls\n");
  const int shown = std::min(h.input_costs_size(), kInputCostRows);
  for (int i = 0; i < shown; ++i) {
    const v1::InputCost& c = h.input_costs(i);
    absl::StrAppend(out, absl::StrFormat("  %7d reads %10s %7d syscalls  %s\n",
                                         c.read_calls(), Bytes(c.bytes_read()),
                                         c.syscalls(), c.input()));
  }
  if (h.input_costs_size() > shown) {
    absl::StrAppend(out, "  ... ", h.input_costs_size() - shown,
                    " more inputs\n");
  }
}

// Worst risk, unknown inputs and the agent's own cycle.
void AppendFooter(const v1::HostReport& r, std::string* out) {
  const v1::HostSnapshot& s = r.snapshot();
  absl::StrAppend(out, "\nWorst risk  ", RiskText(r.predictions().worst_risk()),
                  "\n");

  if (s.unknown_size() > 0) {
    absl::StrAppend(out, "\nUnknown inputs (", s.unknown_size(), ")\n");
    for (const v1::UnknownInput& u : s.unknown()) {
      absl::StrAppend(out, "  ", EscapeText(u.input()), ": ",
                      EscapeText(u.reason()), "\n");
    }
  }
  if (s.not_applicable_size() > 0) {
    absl::StrAppend(out, "\nNot applicable on this kernel (",
                    s.not_applicable_size(), ")\n");
    for (const v1::NotApplicableInput& n : s.not_applicable()) {
      absl::StrAppend(out, "  ", n.input(), ": ", n.reason(), "\n");
    }
  }
  if (r.has_health()) {
    absl::StrAppend(
        out, "\nCycle       ", FormatSeconds(r.health().cycle_seconds()),
        " wall, ", FormatSeconds(r.health().cycle_cpu_seconds()), " CPU",
        r.health().has_rss_bytes()
            ? absl::StrCat(", RSS ", r.health().rss_bytes() >> 10, " KiB")
            : "",
        "\n");
    AppendInputCosts(r.health(), out);
  }
}

}  // namespace

std::string RenderReportText(const v1::HostReport& r) {
  std::string out;
  absl::StrAppend(&out, "tracehealth ", EscapeText(r.agent_version()),
                  " (models ", EscapeText(r.model_version()), ") - host ",
                  EscapeText(r.host_id()), "\n\n");
  AppendHost(r.snapshot(), &out);
  AppendFgraph(r.snapshot().fgraph(), &out);
  AppendAttachTable(r.predictions(), &out);
  AppendStackDepot(r.snapshot(), r.predictions(), &out);
  AppendVmapPurge(r.snapshot(), r.predictions(), &out);
  AppendKernelLog(r, &out);
  AppendFooter(r, &out);
  return out;
}

}  // namespace tracehealth::agent
