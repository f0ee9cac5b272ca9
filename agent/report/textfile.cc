#include "agent/report/textfile.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/metric_family.h"
#include "prometheus/metric_family.h"
#include "prometheus/text_serializer.h"

namespace tracehealth::agent {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// The server's check label of an attach check kind; nullptr for the kinds
// it does not export.
const char* CheckLabel(v1::ThresholdCheck::Kind kind) {
  switch (kind) {
    case v1::ThresholdCheck::KIND_SOFT_LOCKUP:
      return "soft_lockup";
    case v1::ThresholdCheck::KIND_RCU_STALL:
      return "rcu_stall";
    case v1::ThresholdCheck::KIND_LATENCY:
      return "latency";
    default:
      return nullptr;
  }
}

absl::Status Errno(const std::string& what, const std::string& path) {
  return absl::InternalError(
      absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

}  // namespace

std::string RenderTextfile(const v1::HostReport& report) {
  const std::string& host = report.host_id();
  MetricFamily latency = Family(host_metric::kAttachLatency);
  MetricFamily margin = Family(host_metric::kAttachMargin);
  const v1::Predictions& p = report.predictions();
  for (const v1::AttachPrediction& a : p.attach()) {
    const std::string kind = ProbeKindMetricLabel(a.probe_kind());
    AddGauge(latency, {{"host", host}, {"probe_kind", kind}},
             a.latency_seconds());
    std::vector<const char*> seen;
    for (const v1::ThresholdCheck& c : a.checks()) {
      const char* check = CheckLabel(c.kind());
      if (!c.applies() || check == nullptr) continue;
      bool dup = false;
      for (const char* s : seen) dup |= s == check;
      if (dup) continue;  // the first check of a kind, as the server has it
      seen.push_back(check);
      AddGauge(margin, {{"check", check}, {"host", host}, {"probe_kind", kind}},
               c.margin());
    }
  }
  MetricFamily budget = Family(host_metric::kPoolBudget);
  MetricFamily exhaustion = Family(host_metric::kSecondsToExhaustion);
  const v1::StackDepotPrediction& sd = p.stack_depot();
  if (sd.has_budget_ratio())
    AddGauge(budget, {{"host", host}}, sd.budget_ratio());
  if (sd.has_seconds_to_exhaustion())
    AddGauge(exhaustion, {{"host", host}}, sd.seconds_to_exhaustion());
  MetricFamily purge = Family(host_metric::kPurgeSeconds);
  MetricFamily purge_margin = Family(host_metric::kPurgeMargin);
  const v1::VmapPurgePrediction& vp = p.vmap_purge();
  if (vp.applies()) AddGauge(purge, {{"host", host}}, vp.purge_seconds());
  for (const v1::ThresholdCheck& c : vp.checks()) {
    if (c.applies() && c.kind() == v1::ThresholdCheck::KIND_SOFT_LOCKUP) {
      AddGauge(purge_margin, {{"host", host}}, c.margin());
      break;
    }
  }
  MetricFamily last =
      Family("tracehealth_host_last_report_timestamp_seconds",
             "When the agent took the snapshot of its last report.");
  AddGauge(last, {{"host", host}},
           static_cast<double>(report.observed_at().seconds()) +
               report.observed_at().nanos() * 1e-9);
  MetricFamily interval = Family(host_metric::kReportInterval);
  if (report.interval_seconds() > 0)
    AddGauge(interval, {{"host", host}}, report.interval_seconds());
  MetricFamily threads = Family(host_metric::kThreads);
  if (report.snapshot().threads().has_total()) {
    AddGauge(threads, {{"host", host}},
             static_cast<double>(report.snapshot().threads().total()));
  }
  MetricFamily risk = Family(host_metric::kRisk);
  AddGauge(risk, {{"host", host}}, static_cast<double>(p.worst_risk()));
  MetricFamily dropped = Family(host_metric::kSpoolDropped);
  ClientMetric d;
  d.label = {{"host", host}};
  d.counter.value = static_cast<double>(report.health().spool_dropped_total());
  dropped.metric.push_back(std::move(d));

  std::vector<MetricFamily> families;
  for (MetricFamily* f :
       {&latency, &margin, &budget, &exhaustion, &purge, &purge_margin, &last,
        &interval, &threads, &risk, &dropped}) {
    if (!f->metric.empty()) families.push_back(std::move(*f));
  }
  return prometheus::TextSerializer().Serialize(families);
}

absl::Status WriteTextfile(const std::string& dir,
                           const v1::HostReport& report) {
  const std::string path = absl::StrCat(dir, "/", kTextfileName);
  const std::string tmp = absl::StrCat(dir, "/.", kTextfileName, ".tmp");
  const std::string text = RenderTextfile(report);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot create", tmp);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status s = Errno("cannot write", tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      return s;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    absl::Status s = Errno("cannot write", tmp);
    ::unlink(tmp.c_str());
    return s;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    absl::Status s = Errno("cannot rename to", path);
    ::unlink(tmp.c_str());
    return s;
  }
  return absl::OkStatus();
}

}  // namespace tracehealth::agent
