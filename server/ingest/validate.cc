#include "server/ingest/validate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"

namespace tracehealth::server {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// Double fields that may legitimately be negative.
bool MayBeNegative(const FieldDescriptor* f) {
  return f->name() == "growth_pools_per_second";
}

constexpr int kMaxDepth = 16;
// Repeated fields are counted per message by field index; indexes beyond
// this are not counted (no message of the contract has that many fields).
constexpr int kMaxCountedFields = 64;

// Fields from the report down to the message being checked.
using Path = const FieldDescriptor*[kMaxDepth + 1];

// "a.b.c" for error messages (built only on failure).
std::string Join(const Path& path, int depth, const FieldDescriptor* f) {
  std::string out;
  for (int i = 0; i < depth; ++i) absl::StrAppend(&out, path[i]->name(), ".");
  absl::StrAppend(&out, f->name());
  return out;
}

bool ReadVarint(const uint8_t*& p, const uint8_t* end, uint64_t* v) {
  uint64_t out = 0;
  for (int shift = 0; shift < 64 && p < end; shift += 7) {
    uint8_t b = *p++;
    out |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *v = out;
      return true;
    }
  }
  return false;
}

absl::Status CheckValue(double v, const FieldDescriptor* f, const Path& path, int depth) {
  if (!std::isfinite(v)) {
    return absl::InvalidArgumentError(
        absl::StrCat(Join(path, depth, f), ": not a finite number"));
  }
  if (v < 0 && !MayBeNegative(f)) {
    return absl::InvalidArgumentError(
        absl::StrCat(Join(path, depth, f), ": negative value ", v));
  }
  return absl::OkStatus();
}

// What the wire walk needs to know about one field, resolved once per
// message type (descriptor calls such as type() and is_map() are not free,
// and this runs for every field of every report).
struct WireMessage;
struct WireField {
  const FieldDescriptor* field = nullptr;  // nullptr: unknown number
  bool is_double = false;
  bool is_float = false;
  bool counted = false;  // repeated, with an index below kMaxCountedFields
  int index = 0;
  const WireMessage* message = nullptr;  // a (non-map) sub-message
};
struct WireMessage {
  std::vector<WireField> by_number;  // indexed by field number
  const WireField& Find(uint64_t number) const {
    static const WireField kUnknown;
    return number < by_number.size() ? by_number[number] : kUnknown;
  }
};

// The table of HostReport, linked to those of every message type below it;
// built on first use.
const WireMessage& ReportWireTable() {
  using Tables = std::map<const google::protobuf::Descriptor*, std::unique_ptr<WireMessage>>;
  const google::protobuf::Descriptor* root = v1::HostReport::descriptor();
  static const Tables* tables = [root] {
    auto* t = new Tables();
    std::vector<const google::protobuf::Descriptor*> todo = {root};
    (*t)[root] = std::make_unique<WireMessage>();
    while (!todo.empty()) {
      const google::protobuf::Descriptor* d = todo.back();
      todo.pop_back();
      WireMessage& m = *(*t)[d];
      for (int i = 0; i < d->field_count(); ++i) {
        const FieldDescriptor* f = d->field(i);
        if (f->number() >= 1024) continue;  // none in the contract; walked as unknown
        if (static_cast<size_t>(f->number()) >= m.by_number.size()) {
          m.by_number.resize(f->number() + 1);
        }
        WireField& w = m.by_number[f->number()];
        w.field = f;
        w.is_double = f->type() == FieldDescriptor::TYPE_DOUBLE;
        w.is_float = f->type() == FieldDescriptor::TYPE_FLOAT;
        w.counted = f->is_repeated() && f->index() < kMaxCountedFields;
        w.index = f->index();
        if (f->type() == FieldDescriptor::TYPE_MESSAGE && !f->is_map()) {
          const google::protobuf::Descriptor* sub = f->message_type();
          if (t->find(sub) == t->end()) {
            (*t)[sub] = std::make_unique<WireMessage>();
            todo.push_back(sub);
          }
        }
      }
    }
    // Sub-message links, now that every table exists.
    for (auto& [d, m] : *t) {
      for (WireField& w : m->by_number) {
        if (w.field != nullptr && w.field->type() == FieldDescriptor::TYPE_MESSAGE &&
            !w.field->is_map()) {
          w.message = t->at(w.field->message_type()).get();
        }
      }
    }
    return t;
  }();
  return *tables->at(root);
}

// Walks the wire encoding of a message (table-driven from its descriptor,
// so every double/float field of the contract is covered without a list to
// maintain): every double/float must be finite and (except MayBeNegative)
// non-negative, every repeated field at most max_repeated entries. Walking
// the bytes allocates nothing and is several times cheaper than reflection
// over the parsed message.
absl::Status CheckWire(const WireMessage& msg, const uint8_t* p, const uint8_t* end,
                       const ValidationLimits& limits, Path& path, int depth) {
  if (depth > kMaxDepth) return absl::InvalidArgumentError("report nested too deeply");
  int counts[kMaxCountedFields];
  bool counted_any = false;
  while (p < end) {
    uint64_t tag;
    if (!ReadVarint(p, end, &tag)) return absl::InvalidArgumentError("malformed report");
    const int wire_type = static_cast<int>(tag & 7);
    const WireField& w = msg.Find(tag >> 3);
    if (w.counted) {
      if (!counted_any) {
        std::fill(std::begin(counts), std::end(counts), 0);
        counted_any = true;
      }
      if (++counts[w.index] > limits.max_repeated) {
        return absl::InvalidArgumentError(absl::StrCat(
            Join(path, depth, w.field), ": more than ", limits.max_repeated, " entries"));
      }
    }
    switch (wire_type) {
      case 0: {
        uint64_t ignored;
        if (!ReadVarint(p, end, &ignored)) {
          return absl::InvalidArgumentError("malformed report");
        }
        break;
      }
      case 1: {
        if (end - p < 8) return absl::InvalidArgumentError("malformed report");
        if (w.is_double) {
          double v;
          std::memcpy(&v, p, 8);
          absl::Status st = CheckValue(v, w.field, path, depth);
          if (!st.ok()) return st;
        }
        p += 8;
        break;
      }
      case 5: {
        if (end - p < 4) return absl::InvalidArgumentError("malformed report");
        if (w.is_float) {
          float v;
          std::memcpy(&v, p, 4);
          absl::Status st = CheckValue(v, w.field, path, depth);
          if (!st.ok()) return st;
        }
        p += 4;
        break;
      }
      case 2: {
        uint64_t len;
        if (!ReadVarint(p, end, &len) || len > static_cast<uint64_t>(end - p)) {
          return absl::InvalidArgumentError("malformed report");
        }
        const uint8_t* sub_end = p + len;
        if (w.message != nullptr) {
          path[depth] = w.field;
          absl::Status st = CheckWire(*w.message, p, sub_end, limits, path, depth + 1);
          if (!st.ok()) return st;
        } else if (w.is_double || w.is_float) {
          // Packed repeated floating-point values.
          const size_t width = w.is_double ? 8 : 4;
          if (len % width != 0 || static_cast<int64_t>(len / width) > limits.max_repeated) {
            return absl::InvalidArgumentError(
                absl::StrCat(Join(path, depth, w.field), ": bad packed values"));
          }
          for (const uint8_t* q = p; q < sub_end; q += width) {
            double v;
            if (width == 8) {
              std::memcpy(&v, q, 8);
            } else {
              float fv;
              std::memcpy(&fv, q, 4);
              v = fv;
            }
            absl::Status st = CheckValue(v, w.field, path, depth);
            if (!st.ok()) return st;
          }
        }
        p = sub_end;
        break;
      }
      default:
        return absl::InvalidArgumentError("malformed report (wire type)");
    }
  }
  return absl::OkStatus();
}

bool IsValidLabelKey(absl::string_view k) {
  if (k.empty()) return false;
  for (size_t i = 0; i < k.size(); ++i) {
    char c = k[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

absl::Status CheckTimestamp(const google::protobuf::Timestamp& ts,
                            absl::string_view name) {
  // 0001-01-01 .. 9999-12-31, like google.protobuf.Timestamp requires.
  if (ts.seconds() < -62135596800LL || ts.seconds() > 253402300799LL ||
      ts.nanos() < 0 || ts.nanos() > 999999999) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": out of range"));
  }
  return absl::OkStatus();
}

}  // namespace

bool IsValidHostId(absl::string_view host_id) {
  if (host_id.empty() || host_id.size() > 253) return false;
  bool only_dots = true;
  for (char c : host_id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
    only_dots = only_dots && c == '.';
  }
  // ".", ".." and the like name no host (and read as paths).
  return !only_dots;
}

absl::Status ValidateReport(const v1::HostReport& report, absl::string_view wire,
                            absl::Time now, const ValidationLimits& limits) {
  const size_t serialized_size = wire.size();
  if (!IsValidHostId(report.host_id())) {
    return absl::InvalidArgumentError(
        "host_id: must match [A-Za-z0-9._-]{1,253}");
  }
  if (report.seq() == 0) return absl::InvalidArgumentError("seq: must be > 0");
  if (report.seq() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return absl::InvalidArgumentError("seq: must be < 2^63");
  }
  if (serialized_size > limits.max_report_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("report is ", serialized_size, " bytes (at most ",
                     limits.max_report_bytes, ")"));
  }
  if (!report.has_observed_at()) {
    return absl::InvalidArgumentError("observed_at: missing");
  }
  absl::Status st = CheckTimestamp(report.observed_at(), "observed_at");
  if (!st.ok()) return st;
  absl::Time observed = absl::FromUnixSeconds(report.observed_at().seconds()) +
                        absl::Nanoseconds(report.observed_at().nanos());
  if (observed > now + limits.max_clock_skew) {
    return absl::InvalidArgumentError(absl::StrCat(
        "observed_at: ", absl::FormatDuration(observed - now),
        " in the future (at most ", absl::FormatDuration(limits.max_clock_skew),
        ")"));
  }
  if (report.agent_version().size() > limits.max_version_bytes ||
      report.model_version().size() > limits.max_version_bytes) {
    return absl::InvalidArgumentError("agent_version/model_version: too long");
  }
  if (report.labels_size() > static_cast<int>(limits.max_labels)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "labels: ", report.labels_size(), " (at most ", limits.max_labels, ")"));
  }
  for (const auto& [k, v] : report.labels()) {
    if (k.size() > limits.max_label_key_bytes || !IsValidLabelKey(k)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "labels: invalid key \"", k.substr(0, 64),
          "\" (must match [A-Za-z_][A-Za-z0-9_]*, at most ",
          limits.max_label_key_bytes, " bytes)"));
    }
    if (v.size() > limits.max_label_value_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("labels[", k, "]: value longer than ",
                       limits.max_label_value_bytes, " bytes"));
    }
  }
  Path path;
  const auto* p = reinterpret_cast<const uint8_t*>(wire.data());
  return CheckWire(ReportWireTable(), p, p + wire.size(), limits, path, 0);
}

}  // namespace tracehealth::server
