#include "agent/state/kmsg_cursor.h"

#include <map>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/state/state_file.h"
#include "common/status.h"

namespace tracehealth::agent {

KmsgCursor::KmsgCursor(std::string state_dir)
    : path_(state_dir.empty() ? "" : state_dir + "/kmsg_cursor") {}

absl::Status KmsgCursor::Load() {
  if (path_.empty()) return absl::OkStatus();
  absl::StatusOr<std::optional<std::map<std::string, std::string>>> kv =
      ReadKeyValueFile(path_);
  if (!kv.ok()) return kv.status();
  if (!kv->has_value()) return absl::OkStatus();
  BootIdentity boot = GetBootIdentity(**kv);
  uint64_t seq = 0;
  auto it = (*kv)->find("seq");
  if (it == (*kv)->end() || !absl::SimpleAtoi(it->second, &seq) ||
      !boot.known()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": incomplete record, ignored"));
  }
  boot_ = std::move(boot);
  seq_ = seq;
  return absl::OkStatus();
}

std::optional<uint64_t> KmsgCursor::After(const BootIdentity& boot) const {
  if (!seq_.has_value() || !boot.known() || !boot_.Same(boot)) {
    return std::nullopt;
  }
  return seq_;
}

absl::Status KmsgCursor::Save(const BootIdentity& boot, uint64_t seq) {
  if (seq_ == seq && boot_.Same(boot)) return absl::OkStatus();
  boot_ = boot;
  seq_ = seq;
  if (path_.empty()) return absl::OkStatus();
  std::map<std::string, std::string> kv;
  PutBootIdentity(boot, &kv);
  kv["seq"] = absl::StrCat(seq);
  TH_RETURN_IF_ERROR(MakeDirs(path_.substr(0, path_.rfind('/'))));
  return WriteFileAtomically(path_, FormatKeyValues(kv), /*durable=*/false);
}

}  // namespace tracehealth::agent
