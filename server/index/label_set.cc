#include "server/index/label_set.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace tracehealth::server {
namespace {

void PutLength(size_t n, std::string* out) {
  while (n >= 0x80) {
    out->push_back(static_cast<char>((n & 0x7f) | 0x80));
    n >>= 7;
  }
  out->push_back(static_cast<char>(n));
}

bool GetLength(const std::string& s, size_t* pos, size_t* n) {
  size_t v = 0;
  for (int shift = 0; *pos < s.size() && shift < 35; shift += 7) {
    const auto b = static_cast<unsigned char>(s[(*pos)++]);
    v |= static_cast<size_t>(b & 0x7f) << shift;
    if (b < 0x80) {
      *n = v;
      return true;
    }
  }
  return false;
}

}  // namespace

LabelSet LabelSet::Of(
    const google::protobuf::Map<std::string, std::string>& labels) {
  // A protobuf map iterates in no particular order.
  std::vector<std::pair<absl::string_view, absl::string_view>> sorted;
  sorted.reserve(labels.size());
  for (const auto& [k, v] : labels) sorted.emplace_back(k, v);
  std::sort(sorted.begin(), sorted.end());
  LabelSet out;
  for (const auto& [k, v] : sorted) out.Append(k, v);
  out.data_.shrink_to_fit();
  return out;
}

LabelSet LabelSet::Of(const std::map<std::string, std::string>& labels) {
  LabelSet out;
  for (const auto& [k, v] : labels) out.Append(k, v);
  out.data_.shrink_to_fit();
  return out;
}

void LabelSet::Append(absl::string_view key, absl::string_view value) {
  PutLength(key.size(), &data_);
  data_.append(key.data(), key.size());
  PutLength(value.size(), &data_);
  data_.append(value.data(), value.size());
}

bool LabelSet::Next(size_t* pos, absl::string_view* key,
                    absl::string_view* value) const {
  size_t n;
  if (*pos >= data_.size() || !GetLength(data_, pos, &n) ||
      n > data_.size() - *pos) {
    return false;
  }
  *key = absl::string_view(data_.data() + *pos, n);
  *pos += n;
  if (!GetLength(data_, pos, &n) || n > data_.size() - *pos) return false;
  *value = absl::string_view(data_.data() + *pos, n);
  *pos += n;
  return true;
}

std::optional<absl::string_view> LabelSet::Find(absl::string_view key) const {
  size_t pos = 0;
  absl::string_view k, v;
  while (Next(&pos, &k, &v)) {
    if (k == key) return v;
    if (k > key) break;  // sorted
  }
  return std::nullopt;
}

size_t LabelSet::size() const {
  size_t n = 0;
  ForEach([&n](absl::string_view, absl::string_view) { ++n; });
  return n;
}

std::map<std::string, std::string> LabelSet::ToMap() const {
  std::map<std::string, std::string> out;
  ForEach([&out](absl::string_view k, absl::string_view v) {
    out.emplace(std::string(k), std::string(v));
  });
  return out;
}

void LabelSet::ToProto(
    google::protobuf::Map<std::string, std::string>* out) const {
  ForEach([out](absl::string_view k, absl::string_view v) {
    (*out)[std::string(k)] = std::string(v);
  });
}

}  // namespace tracehealth::server
