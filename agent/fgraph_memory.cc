#include "agent/fgraph_memory.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/state_file.h"
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

FgraphMemory::FgraphMemory(std::string state_dir)
    : path_(state_dir.empty() ? "" : state_dir + "/fgraph_last_active") {}

absl::Status FgraphMemory::Load() {
  if (path_.empty()) return absl::OkStatus();
  absl::StatusOr<std::string> text = ReadWholeFile(path_);
  if (absl::IsNotFound(text.status())) return absl::OkStatus();
  if (!text.ok()) return text.status();
  auto kv = ParseKeyValues(*text);
  if (!kv.ok()) return Annotate(kv.status(), path_);
  BootIdentity boot;
  int64_t at_unix_ns = 0;
  uint64_t forks = 0;
  int64_t btime = 0;
  auto get = [&](const char* k) -> const std::string* {
    auto it = kv->find(k);
    return it == kv->end() ? nullptr : &it->second;
  };
  if (const std::string* v = get("boot_id")) boot.boot_id = *v;
  if (const std::string* v = get("btime"); v && absl::SimpleAtoi(*v, &btime)) {
    boot.btime = btime;
  }
  const std::string* at = get("last_active_unix_ns");
  const std::string* f = get("forks_at_last_active");
  if (at == nullptr || f == nullptr || !absl::SimpleAtoi(*at, &at_unix_ns) ||
      !absl::SimpleAtoi(*f, &forks) || !boot.known()) {
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
  kv["boot_id"] = boot_.boot_id;
  if (boot_.btime.has_value()) kv["btime"] = absl::StrCat(*boot_.btime);
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
  if (active.value_or(false)) {
    if (forks.has_value() && boot.known()) {
      boot_ = boot;
      last_active_at_ = now;
      forks_at_last_active_ = forks;
      *persist_error = Save();
    }
    return NullBound{0, "fgraph active now"};
  }
  if (!threads_total.has_value()) return std::nullopt;
  std::string caveat =
      active.has_value() ? "" : " (fgraph activity partly unknown)";
  if (last_active_at_.has_value() && forks.has_value() &&
      *forks >= *forks_at_last_active_) {
    uint64_t delta = *forks - *forks_at_last_active_;
    return NullBound{
        std::min(*threads_total, delta),
        absl::StrCat("fork delta since fgraph last active at ",
                     absl::FormatTime(absl::RFC3339_sec, *last_active_at_,
                                      absl::UTCTimeZone()),
                     caveat)};
  }
  return NullBound{*threads_total,
                   absl::StrCat("never seen active since boot", caveat)};
}

}  // namespace tracehealth::agent
