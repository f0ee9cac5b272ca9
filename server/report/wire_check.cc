#include "server/report/wire_check.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/report/wire_reader.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/stubs/common.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth::server {
namespace {

using google::protobuf::FieldDescriptor;
using wire::Malformed;
using wire::ReadVarint;

constexpr int kMaxDepth = 16;
// Repeated fields are counted per message by field index; no message of the
// contract has more fields than this (fields beyond it are not counted).
constexpr int kMaxCountedFields = 64;

// What the walk needs to know about one field number of one message type,
// resolved once (descriptor calls are not free, and this runs for every
// field of every report).
struct WireMessage;
struct WireField {
  enum Kind : uint8_t {
    kUnknown,  // not in the contract: skipped by wire type
    kPlain,    // bytes, or a scalar with nothing to check
    kDouble,
    kFloat,
    kString,        // UTF-8
    kMessage,       // walked (map entries too)
    kPackedVarint,  // repeated integer/bool/enum: a packed payload is walked
    kPackedFixed32,
    kPackedFixed64,
  };
  const FieldDescriptor* field = nullptr;
  Kind kind = kUnknown;
  bool may_be_negative = false;
  // An enum (singular or repeated): only the values it defines. Bit n of
  // enum_values says whether n (0 <= n < 64) is one.
  bool is_enum = false;
  uint64_t enum_values = 0;
  // A string with a documented bound, in bytes (0: none).
  size_t max_bytes = 0;
  bool counted = false;  // repeated, with an index below kMaxCountedFields
  int index = 0;
  const WireMessage* message = nullptr;  // for kMessage
};
struct WireMessage {
  std::vector<WireField> by_number;  // indexed by field number
  const WireField& Find(uint64_t number) const {
    static const WireField kUnknown;
    return number < by_number.size() ? by_number[number] : kUnknown;
  }
};

WireField::Kind KindOf(const FieldDescriptor* f) {
  switch (f->type()) {
    case FieldDescriptor::TYPE_DOUBLE:
      return WireField::kDouble;
    case FieldDescriptor::TYPE_FLOAT:
      return WireField::kFloat;
    case FieldDescriptor::TYPE_STRING:
      return WireField::kString;
    case FieldDescriptor::TYPE_MESSAGE:
      return WireField::kMessage;
    case FieldDescriptor::TYPE_FIXED32:
    case FieldDescriptor::TYPE_SFIXED32:
      return f->is_repeated() ? WireField::kPackedFixed32 : WireField::kPlain;
    case FieldDescriptor::TYPE_FIXED64:
    case FieldDescriptor::TYPE_SFIXED64:
      return f->is_repeated() ? WireField::kPackedFixed64 : WireField::kPlain;
    case FieldDescriptor::TYPE_BYTES:
    case FieldDescriptor::TYPE_GROUP:
      return WireField::kPlain;
    default:  // the varint types
      return f->is_repeated() ? WireField::kPackedVarint : WireField::kPlain;
  }
}

// Bounds the contract documents for string fields, by full field name.
struct StringBound {
  const char* field;
  size_t max_bytes;
};
constexpr StringBound kStringBounds[] = {
    {"tracehealth.v1.KernelInfo.cmdline", 4096},  // snapshot.proto
};

void DescribeEnum(const FieldDescriptor* f, WireField& w) {
  if (f->type() != FieldDescriptor::TYPE_ENUM) return;
  w.is_enum = true;
  const google::protobuf::EnumDescriptor* e = f->enum_type();
  for (int i = 0; i < e->value_count(); ++i) {
    const int n = e->value(i)->number();
    if (n >= 0 && n < 64) w.enum_values |= uint64_t{1} << n;
  }
}

// The table of HostReport, linked to those of every message type below it;
// built on first use.
const WireMessage& ReportTable() {
  using Tables = std::map<const google::protobuf::Descriptor*,
                          std::unique_ptr<WireMessage>>;
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
        if (f->number() >= 1024)
          continue;  // none in the contract; walked as unknown
        if (static_cast<size_t>(f->number()) >= m.by_number.size()) {
          m.by_number.resize(f->number() + 1);
        }
        WireField& w = m.by_number[f->number()];
        w.field = f;
        w.kind = KindOf(f);
        w.may_be_negative = f->name() == "growth_pools_per_second";
        w.counted = f->is_repeated() && f->index() < kMaxCountedFields;
        w.index = f->index();
        DescribeEnum(f, w);
        for (const StringBound& b : kStringBounds) {
          if (f->full_name() == b.field) w.max_bytes = b.max_bytes;
        }
        if (w.kind == WireField::kMessage &&
            t->find(f->message_type()) == t->end()) {
          (*t)[f->message_type()] = std::make_unique<WireMessage>();
          todo.push_back(f->message_type());
        }
      }
    }
    // Sub-message links, now that every table exists.
    for (auto& [d, m] : *t) {
      for (WireField& w : m->by_number) {
        if (w.kind == WireField::kMessage)
          w.message = t->at(w.field->message_type()).get();
      }
    }
    return t;
  }();
  return *tables->at(root);
}

// Fields from the report down to the message being walked, for messages.
using Path = const FieldDescriptor * [kMaxDepth + 1];

std::string Join(const Path& path, int depth, const FieldDescriptor* f) {
  std::string out;
  for (int i = 0; i < depth; ++i) absl::StrAppend(&out, path[i]->name(), ".");
  absl::StrAppend(&out, f->name());
  return out;
}

// A little-endian double (width 8) or float (width 4).
inline double ReadFloating(const uint8_t* p, size_t width) {
  if (width == 8) {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

// The common case inline; the error is built out of line.
inline bool ValueOk(double v, const WireField& w) {
  return std::isfinite(v) && (v >= 0 || w.may_be_negative);
}

absl::Status BadValue(double v, const WireField& w, const Path& path,
                      int depth) {
  if (!std::isfinite(v)) {
    return absl::InvalidArgumentError(
        absl::StrCat(Join(path, depth, w.field), ": not a finite number"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat(Join(path, depth, w.field), ": negative value ", v));
}

// Whether the varint `v` (read as protobuf reads an enum: its low 32 bits,
// signed) is a value of w's enum.
inline bool EnumOk(const WireField& w, uint64_t v) {
  const int32_t n = static_cast<int32_t>(v);
  if (n >= 0 && n < 64) return (w.enum_values >> n) & 1;
  return w.field->enum_type()->FindValueByNumber(n) != nullptr;
}

absl::Status BadEnum(uint64_t v, const WireField& w, const Path& path,
                     int depth) {
  return absl::InvalidArgumentError(
      absl::StrCat(Join(path, depth, w.field), ": ", static_cast<int32_t>(v),
                   " is not a ", w.field->enum_type()->full_name(), " value"));
}

// Protobuf's check, after an inline pass over the (usual) ASCII bytes.
bool ValidUtf8(absl::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (static_cast<unsigned char>(s[i]) >= 0x80) {
      return google::protobuf::internal::IsStructurallyValidUTF8(
          s.data() + i, static_cast<int>(s.size() - i));
    }
  }
  return true;
}

// The first value problem found; the walk goes on, because bytes that do
// not decode (DataLoss) must be reported as such whatever else is wrong.
struct Found {
  absl::Status invalid;
  void Note(absl::Status st) {
    if (invalid.ok() && !st.ok()) invalid = std::move(st);
  }
};

absl::Status CheckPacked(const WireField& w, absl::string_view bytes,
                         const WireLimits& limits, const Path& path, int depth,
                         Found& found) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint8_t* const end = p + bytes.size();
  const size_t len = bytes.size();
  size_t n = 0;
  switch (w.kind) {
    case WireField::kPackedVarint:
      for (uint64_t v; p < end; ++n) {
        if (!ReadVarint(p, end, &v)) return Malformed(w.field->name());
        if (w.is_enum && !EnumOk(w, v)) {
          found.Note(BadEnum(v, w, path, depth));
        }
      }
      break;
    case WireField::kPackedFixed32:
    case WireField::kPackedFixed64: {
      const size_t width = w.kind == WireField::kPackedFixed32 ? 4 : 8;
      if (len % width != 0) return Malformed(w.field->name());
      n = len / width;
      break;
    }
    case WireField::kDouble:
    case WireField::kFloat: {
      const size_t width = w.kind == WireField::kDouble ? 8 : 4;
      if (len % width != 0) return Malformed(w.field->name());
      n = len / width;
      if (static_cast<int64_t>(n) > limits.max_repeated) break;
      for (; p < end; p += width) {
        const double v = ReadFloating(p, width);
        if (!ValueOk(v, w)) {
          found.Note(BadValue(v, w, path, depth));
          break;  // one report per field is enough
        }
      }
      break;
    }
    default:
      return absl::OkStatus();
  }
  if (static_cast<int64_t>(n) > limits.max_repeated) {
    found.Note(absl::InvalidArgumentError(
        absl::StrCat(Join(path, depth, w.field), ": more than ",
                     limits.max_repeated, " entries")));
  }
  return absl::OkStatus();
}

// Returns DataLoss at once; value problems go to `found`. A hand-written
// loop rather than wire::ForEachField: this runs for every field of every
// report, and the loop is a quarter faster.
absl::Status Walk(const WireMessage& msg, absl::string_view bytes,
                  const WireLimits& limits, Path& path, int depth,
                  Found& found) {
  if (depth > kMaxDepth) return Malformed("nested too deeply");
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint8_t* const end = p + bytes.size();
  int counts[kMaxCountedFields];
  bool counted_any = false;
  while (p < end) {
    uint64_t tag;
    if (!wire::ReadTag(p, end, &tag)) return Malformed("bad tag");
    const WireField& w = msg.Find(tag >> 3);
    if (w.counted) {
      if (!counted_any) {
        std::memset(counts, 0, sizeof(counts));
        counted_any = true;
      }
      if (++counts[w.index] == limits.max_repeated + 1) {
        found.Note(absl::InvalidArgumentError(
            absl::StrCat(Join(path, depth, w.field), ": more than ",
                         limits.max_repeated, " entries")));
      }
    }
    // A known field arriving with another wire type is an unknown field to
    // protobuf: skipped here too, unchecked.
    const int wire_type = static_cast<int>(tag & 7);
    switch (wire_type) {
      case wire::kVarint: {
        uint64_t v;
        if (!ReadVarint(p, end, &v)) return Malformed("truncated varint");
        if (w.is_enum && !EnumOk(w, v)) found.Note(BadEnum(v, w, path, depth));
        break;
      }
      case wire::kFixed64:
      case wire::kFixed32: {
        const size_t width = wire_type == wire::kFixed64 ? 8 : 4;
        if (static_cast<size_t>(end - p) < width)
          return Malformed("truncated fixed field");
        if (w.kind == (width == 8 ? WireField::kDouble : WireField::kFloat)) {
          const double v = ReadFloating(p, width);
          if (!ValueOk(v, w)) found.Note(BadValue(v, w, path, depth));
        }
        p += width;
        break;
      }
      case wire::kLengthDelimited: {
        uint64_t len;
        if (!wire::ReadLength(p, end, &len))
          return Malformed("bad length-delimited field");
        const absl::string_view sub(reinterpret_cast<const char*>(p), len);
        p += len;
        absl::Status st;
        switch (w.kind) {
          case WireField::kMessage:
            path[depth] = w.field;
            st = Walk(*w.message, sub, limits, path, depth + 1, found);
            break;
          case WireField::kString:
            if (!ValidUtf8(sub)) {
              return Malformed(absl::StrCat("invalid UTF-8 in ",
                                            Join(path, depth, w.field)));
            }
            if (w.max_bytes != 0 && sub.size() > w.max_bytes) {
              found.Note(absl::InvalidArgumentError(
                  absl::StrCat(Join(path, depth, w.field), ": ", sub.size(),
                               " bytes (at most ", w.max_bytes, ")")));
            }
            break;
          case WireField::kDouble:
          case WireField::kFloat:
          case WireField::kPackedVarint:
          case WireField::kPackedFixed32:
          case WireField::kPackedFixed64:
            if (w.field->is_repeated())
              st = CheckPacked(w, sub, limits, path, depth, found);
            break;
          default:
            break;
        }
        if (!st.ok()) return st;
        break;
      }
      default:
        return Malformed("unsupported wire type");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckReportWire(absl::string_view wire, const WireLimits& limits) {
  Path path;
  Found found;
  absl::Status st = Walk(ReportTable(), wire, limits, path, 0, found);
  if (!st.ok()) return st;
  return found.invalid;
}

}  // namespace tracehealth::server
