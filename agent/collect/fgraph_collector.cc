#include "agent/collect/fgraph_collector.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/collect/tracefs_users.h"
#include "agent/collect/unknown_input.h"
#include "agent/parsers/fdinfo.h"
#include "agent/parsers/tracefs.h"
#include "common/proto_time.h"

namespace tracehealth::agent {
namespace {

constexpr uint64_t kFunctionListMax = 64ull << 20;

bool AllDigits(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!absl::ascii_isdigit(c)) return false;
  }
  return true;
}

}  // namespace

FgraphCollector::FgraphCollector(const HostFs* fs, const FeatureTable* features,
                                 FgraphCollectorOptions options)
    : fs_(fs), features_(features), options_(options) {}

bool FgraphCollector::ScanFdinfo(const std::optional<KernelRelease>& release,
                                 std::vector<v1::BpfKprobeMultiLink>* links,
                                 std::string* error) {
  scan_truncated_ = false;
  absl::StatusOr<std::vector<std::string>> procs = fs_->ListDir("/proc");
  if (!procs.ok()) {
    *error = std::string(procs.status().message());
    return false;
  }
  std::vector<uint32_t> pids;
  for (const std::string& name : *procs) {
    uint32_t pid;
    if (AllDigits(name) && absl::SimpleAtoi(name, &pid)) pids.push_back(pid);
  }
  std::sort(pids.begin(), pids.end());
  const bool typed_returns =
      release.has_value() &&
      features_->Has(feature::kKretprobeMultiLinkType, *release).present;
  uint64_t files = 0;
  for (uint32_t pid : pids) {
    if (files >= options_.fdinfo_max_files) {
      scan_truncated_ = true;
      break;
    }
    // Which fds are BPF links: /proc/PID/fd/N -> "anon_inode:bpf_link" is
    // one cheap readlink; only those fdinfo files are read. Where the fd
    // links cannot be listed (e.g. a host tree without them), every fdinfo
    // file is read instead.
    const std::string dir = absl::StrCat("/proc/", pid, "/fdinfo");
    const std::string fd_dir = absl::StrCat("/proc/", pid, "/fd");
    absl::StatusOr<std::vector<std::string>> fds =
        fs_->ListDir(fd_dir, 1 << 20);
    const bool filter_by_link = fds.ok();
    // Processes exit and some fdinfo directories are unreadable: skip them.
    if (!filter_by_link) fds = fs_->ListDir(dir, 1 << 20);
    if (!fds.ok()) continue;
    std::vector<uint32_t> fd_numbers;
    for (const std::string& name : *fds) {
      uint32_t fd;
      if (AllDigits(name) && absl::SimpleAtoi(name, &fd)) {
        fd_numbers.push_back(fd);
      }
    }
    std::sort(fd_numbers.begin(), fd_numbers.end());
    std::string comm;
    for (uint32_t fd : fd_numbers) {
      if (files >= options_.fdinfo_max_files) {
        scan_truncated_ = true;
        break;
      }
      ++files;
      if (filter_by_link) {
        absl::StatusOr<std::string> target =
            fs_->ReadLink(absl::StrCat(fd_dir, "/", fd));
        if (!target.ok() || *target != "anon_inode:bpf_link") continue;
      }
      absl::StatusOr<std::string> text =
          fs_->ReadFile(absl::StrCat(dir, "/", fd), 1 << 20);
      if (!text.ok()) continue;
      absl::StatusOr<std::optional<BpfLinkFdinfo>> link =
          ParseBpfLinkFdinfo(*text);
      if (!link.ok() || !link->has_value() || !IsKprobeMultiLink(**link)) {
        continue;
      }
      if (comm.empty()) {
        absl::StatusOr<std::string> c =
            fs_->ReadFile(absl::StrCat("/proc/", pid, "/comm"), 4096);
        comm = c.ok() ? std::string(absl::StripAsciiWhitespace(*c)) : "?";
      }
      v1::BpfKprobeMultiLink out;
      out.set_pid(pid);
      out.set_fd(fd);
      out.set_comm(comm);
      out.set_link_type((*link)->link_type);
      if ((*link)->kprobe_cnt.has_value()) {
        out.set_kprobe_count(*(*link)->kprobe_cnt);
      }
      if ((*link)->link_type == "kretprobe_multi") {
        out.set_is_return(true);
      } else if (typed_returns) {
        out.set_is_return(false);
      }
      links->push_back(std::move(out));
    }
  }
  return true;
}

void FgraphCollector::CountFunctions(const std::string& t, absl::Time now,
                                     v1::FgraphState* fgraph,
                                     UnknownInputs* unknown) {
  if (!last_slow_.has_value() || slow_tracefs_ != t ||
      now - *last_slow_ >= options_.slow_interval) {
    last_slow_ = now;
    slow_tracefs_ = t;
    auto count = [&](const std::string& path, std::optional<uint64_t>* out,
                     std::string* error) {
      uint64_t n = 0;
      absl::StatusOr<uint64_t> lines =
          fs_->ReadLines(path, kFunctionListMax, [&](absl::string_view l) {
            if (IsFunctionLine(l)) ++n;
          });
      if (lines.ok()) {
        *out = n;
        error->clear();
      } else {
        out->reset();
        *error = std::string(lines.status().message());
      }
    };
    count(t + "/available_filter_functions", &available_filter_functions_,
          &available_error_);
    count(t + "/enabled_functions", &enabled_functions_, &enabled_error_);
    // set_ftrace_filter: the functions a function-graph tracer patches.
    uint64_t filtered = 0;
    absl::StatusOr<uint64_t> lines = fs_->ReadLines(
        t + "/set_ftrace_filter", kFunctionListMax,
        [&](absl::string_view l) { filtered += IsFtraceFilterEntry(l); });
    if (lines.ok()) {
      ftrace_filter_functions_ = filtered;
      filter_error_.clear();
    } else {
      ftrace_filter_functions_.reset();
      filter_error_ = std::string(lines.status().message());
    }
  }
  if (ftrace_filter_functions_.has_value()) {
    fgraph->set_ftrace_filter_functions(*ftrace_filter_functions_);
  } else {
    AddUnknown(unknown, "fgraph.ftrace_filter_functions", filter_error_);
  }
  if (available_filter_functions_.has_value()) {
    fgraph->set_available_filter_functions(*available_filter_functions_);
  } else {
    AddUnknown(unknown, "fgraph.available_filter_functions", available_error_);
  }
  if (enabled_functions_.has_value()) {
    fgraph->set_enabled_functions(*enabled_functions_);
  } else {
    AddUnknown(unknown, "fgraph.enabled_functions", enabled_error_);
  }
}

bool FgraphCollector::ReadLinks(const std::optional<KernelRelease>& release,
                                absl::Time now, const FprobeFgraphRule& rule,
                                v1::FgraphState* fgraph,
                                UnknownInputs* unknown) {
  if (!last_scan_.has_value() ||
      now - *last_scan_ >= options_.fdinfo_scan_interval) {
    std::vector<v1::BpfKprobeMultiLink> links;
    std::string error;
    if (ScanFdinfo(release, &links, &error)) {
      links_ = std::move(links);
      scan_error_.clear();
    } else {
      links_.clear();
      scan_error_ = error;
    }
    last_scan_ = now;
  }
  if (!scan_error_.empty()) {
    AddUnknown(unknown, "fgraph.kprobe_multi_links", scan_error_);
    return false;
  }
  bool all_known = true;
  *fgraph->mutable_links_scanned_at() = ToProto(*last_scan_);
  if (scan_truncated_) {
    all_known = false;
    AddUnknown(unknown, "fgraph.kprobe_multi_links",
               absl::StrCat("fdinfo scan stopped after ",
                            options_.fdinfo_max_files, " files"));
  }
  for (const v1::BpfKprobeMultiLink& link : links_) {
    *fgraph->add_kprobe_multi_links() = link;
    std::optional<bool> is_return;
    if (link.has_is_return()) is_return = link.is_return();
    if (!rule.Registers(is_return)) continue;
    v1::FgraphUser* u = fgraph->add_users();
    u->set_kind(is_return.value_or(false)
                    ? v1::FgraphUser::KIND_BPF_KPROBE_MULTI_RETURN
                    : v1::FgraphUser::KIND_BPF_KPROBE_MULTI);
    u->set_where(absl::StrCat("pid ", link.pid(), " fd ", link.fd(), " (",
                              link.comm(), ")"));
  }
  return all_known;
}

void FgraphCollector::Collect(const std::optional<std::string>& tracefs,
                              const std::optional<KernelRelease>& release,
                              const std::string& arch, absl::Time now,
                              v1::FgraphState* fgraph, UnknownInputs* unknown) {
  // Which fprobe-based users sit on fgraph on this kernel.
  const FprobeFgraphRule rule = FprobeFgraphRuleFor(*features_, release, arch);
  bool all_known = true;
  if (!tracefs.has_value()) {
    all_known = false;
    AddUnknown(unknown, "fgraph.tracefs_path",
               "neither tracefs nor debugfs is mounted (/proc/mounts)");
  } else {
    fgraph->set_tracefs_path(*tracefs);
    all_known = ReadTracefsUsers(*fs_, *tracefs, rule, fgraph, unknown);
    CountFunctions(*tracefs, now, fgraph, unknown);
  }
  // BPF kprobe_multi links, on the slow schedule.
  all_known = ReadLinks(release, now, rule, fgraph, unknown) && all_known;
  SetActiveFromUsers(all_known, fgraph, unknown);
}

}  // namespace tracehealth::agent
