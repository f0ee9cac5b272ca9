#include "server/storage/rollup.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth::server {

int64_t HourStart(int64_t ns) {
  int64_t r = ns % kRollupHourNs;
  if (r < 0) r += kRollupHourNs;
  return ns - r;
}

std::optional<uint64_t> ThreadsOfReport(absl::string_view blob) {
  v1::HostReport report;
  if (!report.ParseFromArray(blob.data(), static_cast<int>(blob.size()))) {
    return std::nullopt;
  }
  if (!report.snapshot().threads().has_total()) return std::nullopt;
  return report.snapshot().threads().total();
}

namespace {

template <typename T>
std::string RangeString(const RollupRange<T>& r) {
  auto one = [](const std::optional<T>& v) {
    return v.has_value() ? absl::StrCat(*v) : std::string("-");
  };
  return absl::StrCat(one(r.min), "/", one(r.max), "/", one(r.last));
}

}  // namespace

std::string RollupRowString(const RollupRow& r) {
  return absl::StrCat(r.host_id, "@", r.hour_start_ns, " n=", r.reports,
                      " seq=", r.first_seq, "..", r.last_seq,
                      " threads=", RangeString(r.threads),
                      " latency=", RangeString(r.attach_latency_seconds),
                      " pool=", RangeString(r.pool_budget_ratio),
                      " purge=", RangeString(r.purge_seconds),
                      " risk=", r.max_worst_risk, "/", r.last_worst_risk);
}

void PrintTo(const RollupRow& row, std::ostream* os) {
  *os << RollupRowString(row);
}

template <typename T>
void RollupFolder::Column<T>::Add(const std::optional<T>& v, const Key& key) {
  if (!v.has_value()) return;
  if (!range.last.has_value()) {
    range.min = range.max = range.last = v;
    last_key = key;
    return;
  }
  range.min = std::min(*range.min, *v);
  range.max = std::max(*range.max, *v);
  if (key >= last_key) {
    range.last = v;
    last_key = key;
  }
}

void RollupFolder::Add(const ReportRow& r) {
  const int64_t hour = HourStart(r.observed_at_ns);
  const Key key{r.observed_at_ns, r.seq};
  auto [it, fresh] = hours_.try_emplace({r.host_id, hour});
  Hour& h = it->second;
  if (fresh) {
    h.row.host_id = r.host_id;
    h.row.hour_start_ns = hour;
    h.row.first_seq = h.row.last_seq = r.seq;
    h.row.max_worst_risk = h.row.last_worst_risk = r.worst_risk;
    h.first_key = h.last_key = key;
  } else {
    if (key < h.first_key) {
      h.first_key = key;
      h.row.first_seq = r.seq;
    }
    if (key >= h.last_key) {
      h.last_key = key;
      h.row.last_seq = r.seq;
      h.row.last_worst_risk = r.worst_risk;
    }
    h.row.max_worst_risk = std::max(h.row.max_worst_risk, r.worst_risk);
  }
  ++h.row.reports;
  h.threads.Add(r.threads, key);
  h.attach.Add(r.attach_latency_seconds, key);
  h.pool.Add(r.pool_budget_ratio, key);
  h.purge.Add(r.purge_seconds, key);
}

std::vector<RollupRow> RollupFolder::Take() {
  std::vector<RollupRow> out;
  out.reserve(hours_.size());
  for (auto& [key, h] : hours_) {
    h.row.threads = h.threads.range;
    h.row.attach_latency_seconds = h.attach.range;
    h.row.pool_budget_ratio = h.pool.range;
    h.row.purge_seconds = h.purge.range;
    out.push_back(std::move(h.row));
  }
  hours_.clear();
  return out;
}

}  // namespace tracehealth::server
