#include "agent/state/depot_history.h"

#include <map>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "agent/state/state_file.h"
#include "common/proto_time.h"
#include "common/status.h"

namespace tracehealth::agent {

DepotHistory::DepotHistory(std::string state_dir, size_t max_samples,
                           absl::Duration spacing)
    : path_(state_dir.empty() ? "" : state_dir + "/depot_history"),
      max_samples_(max_samples < 2 ? 2 : max_samples),
      spacing_(spacing) {}

absl::Status DepotHistory::Load() {
  if (path_.empty()) return absl::OkStatus();
  absl::StatusOr<std::optional<std::map<std::string, std::string>>> kv =
      ReadKeyValueFile(path_);
  if (!kv.ok()) return kv.status();
  if (!kv->has_value()) return absl::OkStatus();
  BootIdentity boot = GetBootIdentity(**kv);
  std::deque<Sample> samples;
  for (const auto& [key, value] : **kv) {
    if (!absl::StartsWith(key, "sample_")) continue;
    std::vector<absl::string_view> f = absl::StrSplit(value, ',');
    int64_t ns;
    Sample s;
    if (f.size() != 3 || !absl::SimpleAtoi(f[0], &ns) ||
        !absl::SimpleAtoi(f[1], &s.pools) ||
        !absl::SimpleAtoi(f[2], &s.persistent_bytes)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path_, ": malformed ", key, ", history dropped"));
    }
    s.at = absl::FromUnixNanos(ns);
    samples.push_back(s);  // keys sort as zero-padded indexes: in order
  }
  if (!boot.known()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": no boot identity, history dropped"));
  }
  boot_ = std::move(boot);
  samples_ = std::move(samples);
  while (samples_.size() > max_samples_) samples_.pop_front();
  return absl::OkStatus();
}

absl::Status DepotHistory::Save() {
  if (path_.empty()) return absl::OkStatus();
  std::map<std::string, std::string> kv;
  PutBootIdentity(boot_, &kv);
  int i = 0;
  for (const Sample& s : samples_) {
    kv[absl::StrFormat("sample_%06d", i++)] = absl::StrCat(
        absl::ToUnixNanos(s.at), ",", s.pools, ",", s.persistent_bytes);
  }
  return WriteFileAtomically(path_, FormatKeyValues(kv));
}

std::vector<v1::DepotSample> DepotHistory::Observe(
    const BootIdentity& boot, absl::Time at, uint64_t pools,
    uint64_t persistent_bytes, absl::Status* persist_error) {
  *persist_error = absl::OkStatus();
  if (!samples_.empty() && !(boot.known() && boot_.Same(boot))) {
    samples_.clear();  // another boot: the depot started over
  }
  boot_ = boot;
  if (samples_.empty() || at - samples_.back().at >= spacing_) {
    samples_.push_back(Sample{at, pools, persistent_bytes});
    while (samples_.size() > max_samples_) samples_.pop_front();
    if (boot.known()) *persist_error = Save();
  }
  std::vector<v1::DepotSample> out;
  auto add = [&](const Sample& s) {
    v1::DepotSample d;
    *d.mutable_at() = ToProto(s.at);
    d.set_pools(s.pools);
    d.set_persistent_bytes(s.persistent_bytes);
    out.push_back(std::move(d));
  };
  for (const Sample& s : samples_) add(s);
  if (samples_.back().at != at) add(Sample{at, pools, persistent_bytes});
  return out;
}

}  // namespace tracehealth::agent
