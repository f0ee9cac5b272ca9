#include "agent/state/seq_store.h"

#include <map>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/state/state_file.h"
#include "common/status.h"

namespace tracehealth::agent {

absl::StatusOr<SeqStore> SeqStore::Open(const std::string& state_dir,
                                        const std::string& host_id,
                                        uint64_t block) {
  TH_RETURN_IF_ERROR(MakeDirs(state_dir));
  std::string path = state_dir + "/seq";
  uint64_t next = 1;
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (text.ok()) {
    auto kv = ParseKeyValues(*text);
    if (!kv.ok()) return Annotate(kv.status(), path);
    uint64_t reserved;
    auto it = kv->find("reserved");
    if (it == kv->end() || !absl::SimpleAtoi(it->second, &reserved) ||
        reserved == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": no valid 'reserved' value"));
    }
    auto host = kv->find("host_id");
    if (host != kv->end() && host->second == host_id) next = reserved;
  } else if (!absl::IsNotFound(text.status())) {
    return text.status();
  }
  SeqStore store(std::move(path), host_id, next, next, block < 1 ? 1 : block);
  return store;
}

absl::Status SeqStore::Reserve(uint64_t upto) {
  std::map<std::string, std::string> kv = {{"host_id", host_id_},
                                           {"reserved", absl::StrCat(upto)}};
  TH_RETURN_IF_ERROR(WriteFileAtomically(path_, FormatKeyValues(kv)));
  reserved_ = upto;
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> SeqStore::Next() {
  if (next_ >= reserved_) TH_RETURN_IF_ERROR(Reserve(next_ + block_));
  return next_++;
}

}  // namespace tracehealth::agent
