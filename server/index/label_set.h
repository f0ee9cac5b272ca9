// LabelSet: a host's labels in one string (each key and value with its
// length, sorted by key), the form the host index keeps per host: one
// allocation instead of a node per label, and cheap to copy.
//
// Thread safety: a plain value.
#ifndef TRACEHEALTH_SERVER_INDEX_LABEL_SET_H_
#define TRACEHEALTH_SERVER_INDEX_LABEL_SET_H_

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "google/protobuf/map.h"

namespace tracehealth::server {

class LabelSet {
 public:
  LabelSet() = default;

  // The labels of a report (a key appears once in a protobuf map).
  static LabelSet Of(
      const google::protobuf::Map<std::string, std::string>& labels);
  static LabelSet Of(const std::map<std::string, std::string>& labels);

  // The value of `key`; nullopt when the host has no such label.
  std::optional<absl::string_view> Find(absl::string_view key) const;

  // Calls fn(key, value) for each label, in key order.
  template <typename Fn>
  void ForEach(Fn fn) const {
    size_t pos = 0;
    absl::string_view key, value;
    while (Next(&pos, &key, &value)) fn(key, value);
  }

  size_t size() const;
  bool empty() const { return data_.empty(); }
  std::map<std::string, std::string> ToMap() const;
  void ToProto(google::protobuf::Map<std::string, std::string>* out) const;

  bool operator==(const LabelSet& o) const { return data_ == o.data_; }
  bool operator!=(const LabelSet& o) const { return data_ != o.data_; }

  // Bytes held beyond the object itself (for memory accounting).
  size_t heap_bytes() const {
    return data_.capacity() > 15 ? data_.capacity() + 1 : 0;
  }

 private:
  // Reads the label at `*pos` and advances it; false at the end.
  bool Next(size_t* pos, absl::string_view* key,
            absl::string_view* value) const;
  void Append(absl::string_view key, absl::string_view value);

  // Per label: varint key length, key, varint value length, value.
  std::string data_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_INDEX_LABEL_SET_H_
