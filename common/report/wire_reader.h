// Protobuf wire-format primitives for walking encoded messages without
// parsing them (see report_scan.h and server/ingest/report_batch.h).
#ifndef TRACEHEALTH_COMMON_REPORT_WIRE_READER_H_
#define TRACEHEALTH_COMMON_REPORT_WIRE_READER_H_

#include <cstdint>
#include <cstring>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace tracehealth::wire {

enum WireType : int {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kFixed32 = 5
};

// ReadVarint's loop, for values of more than one byte.
ABSL_ATTRIBUTE_NOINLINE inline bool ReadVarintSlow(const uint8_t*& p,
                                                   const uint8_t* end,
                                                   uint64_t* v) {
  uint64_t out = 0;
  for (int shift = 0; shift < 64 && p < end; shift += 7) {
    const uint8_t b = *p++;
    out |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *v = out;
      return true;
    }
  }
  return false;
}

// Reads a varint of at most 10 bytes (as protobuf does) and advances `p`;
// false when truncated or longer. The one-byte case inline: most values of
// a report are one byte.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool ReadVarint(const uint8_t*& p,
                                                    const uint8_t* end,
                                                    uint64_t* v) {
  if (ABSL_PREDICT_TRUE(p < end && *p < 0x80)) {
    *v = *p++;
    return true;
  }
  return ReadVarintSlow(p, end, v);
}

// Protobuf reads tags and lengths in at most 5 bytes (longer encodings of
// small values are malformed to it).
inline bool ReadVarint32(const uint8_t*& p, const uint8_t* end, uint64_t* v) {
  if (ABSL_PREDICT_TRUE(p < end && *p < 0x80)) {
    *v = *p++;
    return true;
  }
  uint64_t out = 0;
  for (int i = 0; i < 5 && p < end; ++i) {
    const uint8_t b = *p++;
    out |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if (b < 0x80) {
      *v = out;
      return true;
    }
  }
  return false;
}

// Reads a tag; false for what protobuf rejects (more than 5 bytes, field
// number 0) and for tags above 32 bits, which it would truncate.
inline bool ReadTag(const uint8_t*& p, const uint8_t* end, uint64_t* tag) {
  return ReadVarint32(p, end, tag) && *tag <= 0xffffffffu && (*tag >> 3) != 0;
}

// Reads the length of a length-delimited field and checks that many bytes
// follow.
inline bool ReadLength(const uint8_t*& p, const uint8_t* end, uint64_t* len) {
  return ReadVarint32(p, end, len) && *len <= static_cast<uint64_t>(end - p);
}

inline absl::Status Malformed(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("malformed report: ", what));
}

// One field of a message: its number, wire type and value.
struct Field {
  uint32_t number = 0;
  int wire_type = 0;
  uint64_t varint = 0;      // kVarint
  uint64_t fixed = 0;       // kFixed64 / kFixed32 bits
  absl::string_view bytes;  // kLengthDelimited

  double AsDouble() const {
    double d;
    std::memcpy(&d, &fixed, sizeof(d));
    return d;
  }
};

// Calls `fn(const Field&)` for each field of the encoded message `msg`, in
// order; `fn` returns absl::Status and a failure stops the walk. DataLoss
// for truncated or malformed fields and for wire types other than 0, 1, 2
// and 5 (groups).
template <typename Fn>
absl::Status ForEachField(absl::string_view msg, Fn fn) {
  const auto* p = reinterpret_cast<const uint8_t*>(msg.data());
  const uint8_t* const end = p + msg.size();
  while (p < end) {
    uint64_t tag;
    if (!ReadTag(p, end, &tag)) return Malformed("bad tag");
    Field f;
    f.number = static_cast<uint32_t>(tag >> 3);
    f.wire_type = static_cast<int>(tag & 7);
    switch (f.wire_type) {
      case kVarint:
        if (!ReadVarint(p, end, &f.varint))
          return Malformed("truncated varint");
        break;
      case kFixed64:
        if (end - p < 8) return Malformed("truncated fixed64");
        std::memcpy(&f.fixed, p, 8);
        p += 8;
        break;
      case kFixed32: {
        if (end - p < 4) return Malformed("truncated fixed32");
        uint32_t v;
        std::memcpy(&v, p, 4);
        f.fixed = v;
        p += 4;
        break;
      }
      case kLengthDelimited: {
        uint64_t len;
        if (!ReadLength(p, end, &len))
          return Malformed("bad length-delimited field");
        f.bytes = absl::string_view(reinterpret_cast<const char*>(p), len);
        p += len;
        break;
      }
      default:
        return Malformed("unsupported wire type");
    }
    absl::Status st = fn(f);
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace tracehealth::wire

#endif  // TRACEHEALTH_COMMON_REPORT_WIRE_READER_H_
