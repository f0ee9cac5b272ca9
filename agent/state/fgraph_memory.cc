#include "agent/state/fgraph_memory.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/state/state_file.h"
#include "common/status.h"

namespace tracehealth::agent {

bool BootIdentity::Same(const BootIdentity& other) const {
  if (!boot_id.empty() && !other.boot_id.empty()) {
    return boot_id == other.boot_id;
  }
  if (btime.has_value() && other.btime.has_value()) {
    return std::llabs(*btime - *other.btime) <= 2;
  }
  return false;
}

void PutBootIdentity(const BootIdentity& boot,
                     std::map<std::string, std::string>* kv) {
  (*kv)["boot_id"] = boot.boot_id;
  if (boot.btime.has_value()) (*kv)["btime"] = absl::StrCat(*boot.btime);
}

BootIdentity GetBootIdentity(const std::map<std::string, std::string>& kv) {
  BootIdentity boot;
  if (auto it = kv.find("boot_id"); it != kv.end()) boot.boot_id = it->second;
  int64_t btime;
  if (auto it = kv.find("btime");
      it != kv.end() && absl::SimpleAtoi(it->second, &btime)) {
    boot.btime = btime;
  }
  return boot;
}

FgraphMemory::FgraphMemory(std::string state_dir)
    : path_(state_dir.empty() ? "" : state_dir + "/fgraph_last_active") {}

absl::Status FgraphMemory::Load() {
  if (path_.empty()) return absl::OkStatus();
  absl::StatusOr<std::optional<std::map<std::string, std::string>>> kv =
      ReadKeyValueFile(path_);
  if (!kv.ok()) return kv.status();
  if (!kv->has_value()) return absl::OkStatus();
  const std::map<std::string, std::string>& values = **kv;
  BootIdentity boot = GetBootIdentity(values);
  int64_t at_unix_ns = 0;
  uint64_t forks = 0;
  auto at = values.find("last_active_unix_ns");
  auto f = values.find("forks_at_last_active");
  if (at == values.end() || f == values.end() ||
      !absl::SimpleAtoi(at->second, &at_unix_ns) ||
      !absl::SimpleAtoi(f->second, &forks) || !boot.known()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": incomplete record, ignored"));
  }
  boot_ = std::move(boot);
  last_active_at_ = absl::FromUnixNanos(at_unix_ns);
  forks_at_last_active_ = forks;
  return absl::OkStatus();
}

absl::Status FgraphMemory::Save() {
  if (path_.empty()) return absl::OkStatus();
  std::map<std::string, std::string> kv;
  PutBootIdentity(boot_, &kv);
  kv["last_active_unix_ns"] = absl::StrCat(absl::ToUnixNanos(*last_active_at_));
  kv["forks_at_last_active"] = absl::StrCat(*forks_at_last_active_);
  size_t slash = path_.rfind('/');
  TH_RETURN_IF_ERROR(MakeDirs(path_.substr(0, slash)));
  return WriteFileAtomically(path_, FormatKeyValues(kv));
}

std::optional<NullBound> FgraphMemory::Observe(
    const BootIdentity& boot, std::optional<bool> active, absl::Time now,
    std::optional<uint64_t> threads_total, std::optional<uint64_t> forks,
    absl::Status* persist_error) {
  *persist_error = absl::OkStatus();
  // A record from another boot says nothing about this one.
  if (last_active_at_.has_value() && !(boot.known() && boot_.Same(boot))) {
    last_active_at_.reset();
    forks_at_last_active_.reset();
  }
  if (active.value_or(false) && forks.has_value() && boot.known()) {
    boot_ = boot;
    last_active_at_ = now;
    forks_at_last_active_ = forks;
    *persist_error = Save();
  }
  return BoundNullThreads(active, threads_total, forks, last_active_at_,
                          forks_at_last_active_);
}

std::optional<NullBound> BoundNullThreads(
    std::optional<bool> active, std::optional<uint64_t> threads_total,
    std::optional<uint64_t> forks, std::optional<absl::Time> last_active_at,
    std::optional<uint64_t> forks_at_last_active) {
  if (active.value_or(false)) return NullBound{0, "fgraph active now"};
  if (!threads_total.has_value()) return std::nullopt;
  std::string caveat =
      active.has_value() ? "" : " (fgraph activity partly unknown)";
  if (last_active_at.has_value() && forks_at_last_active.has_value() &&
      forks.has_value() && *forks >= *forks_at_last_active) {
    uint64_t delta = *forks - *forks_at_last_active;
    return NullBound{
        std::min(*threads_total, delta),
        absl::StrCat("fork delta since fgraph last active at ",
                     absl::FormatTime(absl::RFC3339_sec, *last_active_at,
                                      absl::UTCTimeZone()),
                     caveat)};
  }
  return NullBound{*threads_total,
                   absl::StrCat("never seen active since boot", caveat)};
}

}  // namespace tracehealth::agent
