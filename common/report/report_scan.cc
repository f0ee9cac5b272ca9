#include "common/report/report_scan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/proto_field_kind.h"
#include "common/report/wire_reader.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/stubs/common.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using wire::Malformed;
using wire::ReadVarint;

constexpr int kMaxDepth = 16;
// Repeated fields are counted per message by field index; no message of the
// contract has more fields than this (fields beyond it are not counted).
constexpr int kMaxCountedFields = 64;

// ---------------------------------------------------------------------------
// The tables.

// The fields of the head, each at its one place in the report
// (DecodeReportHead): a role, and the wire type it is read with.
enum class Head : uint8_t {
  kNone,
  kHostId,
  kSeq,
  kObservedAt,  // message
  kObservedSeconds,
  kObservedNanos,
  kInterval,
  kAgentVersion,
  kModelVersion,
  kLabel,  // message (map entry)
  kLabelKey,
  kLabelValue,
  kPredictions,  // message
  kWorstRisk,
  kAttach,  // message
  kProbeKind,
  kLatency,
  kStackDepot,  // message
  kBudgetRatio,
  kVmapPurge,  // message
  kApplies,
  kPurgeSeconds,
  kFeatureTableOverride,
  kHeartbeat,  // message
  kBaseSeq,
  kSnapshot,  // message
  kThreads,   // message
  kThreadsTotal,
};

// The role of field `f` in a message whose own role is `parent`.
Head HeadRole(Head parent, const FieldDescriptor* f) {
  using R = v1::HostReport;
  using P = v1::Predictions;
  const int n = f->number();
  switch (parent) {
    case Head::kNone:  // the report itself (depth 0)
      switch (n) {
        case R::kHostIdFieldNumber:
          return Head::kHostId;
        case R::kSeqFieldNumber:
          return Head::kSeq;
        case R::kObservedAtFieldNumber:
          return Head::kObservedAt;
        case R::kIntervalSecondsFieldNumber:
          return Head::kInterval;
        case R::kAgentVersionFieldNumber:
          return Head::kAgentVersion;
        case R::kModelVersionFieldNumber:
          return Head::kModelVersion;
        case R::kLabelsFieldNumber:
          return Head::kLabel;
        case R::kPredictionsFieldNumber:
          return Head::kPredictions;
        case R::kFeatureTableOverrideFieldNumber:
          return Head::kFeatureTableOverride;
        case R::kHeartbeatFieldNumber:
          return Head::kHeartbeat;
        case R::kSnapshotFieldNumber:
          return Head::kSnapshot;
      }
      return Head::kNone;
    case Head::kSnapshot:
      return n == v1::HostSnapshot::kThreadsFieldNumber ? Head::kThreads
                                                        : Head::kNone;
    case Head::kThreads:
      return n == v1::ThreadCounts::kTotalFieldNumber ? Head::kThreadsTotal
                                                      : Head::kNone;
    case Head::kObservedAt:
      return n == 1   ? Head::kObservedSeconds
             : n == 2 ? Head::kObservedNanos
                      : Head::kNone;
    case Head::kLabel:
      return n == 1   ? Head::kLabelKey
             : n == 2 ? Head::kLabelValue
                      : Head::kNone;
    case Head::kPredictions:
      switch (n) {
        case P::kWorstRiskFieldNumber:
          return Head::kWorstRisk;
        case P::kAttachFieldNumber:
          return Head::kAttach;
        case P::kStackDepotFieldNumber:
          return Head::kStackDepot;
        case P::kVmapPurgeFieldNumber:
          return Head::kVmapPurge;
      }
      return Head::kNone;
    case Head::kAttach:
      return n == v1::AttachPrediction::kProbeKindFieldNumber ? Head::kProbeKind
             : n == v1::AttachPrediction::kLatencySecondsFieldNumber
                 ? Head::kLatency
                 : Head::kNone;
    case Head::kStackDepot:
      return n == v1::StackDepotPrediction::kBudgetRatioFieldNumber
                 ? Head::kBudgetRatio
                 : Head::kNone;
    case Head::kVmapPurge:
      return n == v1::VmapPurgePrediction::kAppliesFieldNumber ? Head::kApplies
             : n == v1::VmapPurgePrediction::kPurgeSecondsFieldNumber
                 ? Head::kPurgeSeconds
                 : Head::kNone;
    case Head::kHeartbeat:
      return n == v1::HeartbeatForm::kBaseSeqFieldNumber ? Head::kBaseSeq
                                                         : Head::kNone;
    default:
      return Head::kNone;
  }
}

// The head's messages, whose fields it reads.
bool HeadMessage(Head role) {
  switch (role) {
    case Head::kObservedAt:
    case Head::kLabel:
    case Head::kPredictions:
    case Head::kAttach:
    case Head::kStackDepot:
    case Head::kVmapPurge:
    case Head::kHeartbeat:
    case Head::kSnapshot:
    case Head::kThreads:
      return true;
    default:
      return false;
  }
}

// How the wire check treats a field.
enum class Kind : uint8_t {
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

Kind KindOf(const FieldDescriptor* f) {
  switch (f->type()) {
    case FieldDescriptor::TYPE_DOUBLE:
      return Kind::kDouble;
    case FieldDescriptor::TYPE_FLOAT:
      return Kind::kFloat;
    case FieldDescriptor::TYPE_STRING:
      return Kind::kString;
    case FieldDescriptor::TYPE_MESSAGE:
      return Kind::kMessage;
    case FieldDescriptor::TYPE_FIXED32:
    case FieldDescriptor::TYPE_SFIXED32:
      return f->is_repeated() ? Kind::kPackedFixed32 : Kind::kPlain;
    case FieldDescriptor::TYPE_FIXED64:
    case FieldDescriptor::TYPE_SFIXED64:
      return f->is_repeated() ? Kind::kPackedFixed64 : Kind::kPlain;
    case FieldDescriptor::TYPE_BYTES:
    case FieldDescriptor::TYPE_GROUP:
      return Kind::kPlain;
    default:  // the varint types
      return f->is_repeated() ? Kind::kPackedVarint : Kind::kPlain;
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

// What the walk does with one field number of a message at one place in
// the report, worked out once (descriptor calls are not free, and the walk
// runs for every field of every report received).
struct Plan;
struct FieldPlan {
  const FieldDescriptor* field = nullptr;  // null: not in the contract
  const Plan* sub = nullptr;               // message fields
  // The wire check.
  uint64_t enum_values = 0;  // is_enum: bit n says whether n (< 64) is one
  uint32_t max_bytes = 0;    // a string's documented bound (0: none)
  Kind kind = Kind::kUnknown;
  bool is_enum = false;
  bool may_be_negative = false;
  bool counted = false;  // repeated, with an index below kMaxCountedFields
  uint8_t index = 0;
  // The material content (material.h).
  bool moving = false;
  bool tolerant_number = false;  // a number inside predictions
  bool is_map = false;
  bool repeated = false;
  FieldDescriptor::Type type = FieldDescriptor::TYPE_BYTES;
  // The head.
  Head head = Head::kNone;
  bool head_below = false;  // a head message: the head reads fields in it
};
// A field number the contract does not define.
constexpr FieldPlan kUnknownField{};
struct Plan {
  std::vector<FieldPlan> by_number;  // indexed by field number
  const FieldPlan& Find(uint64_t number) const {
    return number < by_number.size() ? by_number[number] : kUnknownField;
  }
};

const absl::flat_hash_set<std::string>& MovingSet() {
  static const auto* set = [] {
    const std::vector<std::string> names = MovingFieldNames();
    return new absl::flat_hash_set<std::string>(names.begin(), names.end());
  }();
  return *set;
}

const Plan* BuildPlan(const Descriptor* d, bool tolerant, Head role,
                      std::vector<std::unique_ptr<Plan>>& all, int depth) {
  all.push_back(std::make_unique<Plan>());
  Plan* p = all.back().get();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (p->by_number.size() <= static_cast<size_t>(f->number()))
      p->by_number.resize(f->number() + 1);
    FieldPlan& fp = p->by_number[f->number()];
    fp.field = f;
    fp.kind = KindOf(f);
    fp.may_be_negative = f->name() == "growth_pools_per_second";
    fp.counted = f->is_repeated() && f->index() < kMaxCountedFields;
    fp.index = static_cast<uint8_t>(fp.counted ? f->index() : 0);
    if (f->type() == FieldDescriptor::TYPE_ENUM) {
      fp.is_enum = true;
      const google::protobuf::EnumDescriptor* e = f->enum_type();
      for (int j = 0; j < e->value_count(); ++j) {
        const int n = e->value(j)->number();
        if (n >= 0 && n < 64) fp.enum_values |= uint64_t{1} << n;
      }
    }
    for (const StringBound& b : kStringBounds) {
      if (f->full_name() == b.field)
        fp.max_bytes = static_cast<uint32_t>(b.max_bytes);
    }
    fp.moving = MovingSet().contains(f->full_name());
    fp.repeated = f->is_repeated();
    fp.is_map = f->is_map();
    fp.type = f->type();
    fp.head =
        depth == 0 || role != Head::kNone ? HeadRole(role, f) : Head::kNone;
    const bool sub_tolerant =
        tolerant || f->full_name() == "tracehealth.v1.HostReport.predictions";
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      fp.head_below = HeadMessage(fp.head);
      if (depth < kMaxDepth) {
        fp.sub =
            BuildPlan(f->message_type(), sub_tolerant,
                      fp.head_below ? fp.head : Head::kNone, all, depth + 1);
      }
    } else {
      fp.tolerant_number = sub_tolerant && IsNumberField(f);
    }
  }
  return p;
}

const Plan& ReportPlan() {
  // Every plan, the report's first, for the life of the process.
  static const std::vector<std::unique_ptr<Plan>>* const all = [] {
    auto* plans = new std::vector<std::unique_ptr<Plan>>();
    BuildPlan(v1::HostReport::descriptor(), false, Head::kNone, *plans, 0);
    return plans;
  }();
  return *all->front();
}

// ---------------------------------------------------------------------------
// The material digest.

// A running 64-bit digest of what counts: every value is mixed in, in
// order, by a 64x64->128-bit multiply folded to 64 bits (wyhash's mixing
// step), byte strings by their std::hash first; any change of a value or
// of the order changes the digest but with chance about 2^-64.
// Deterministic across processes and builds (no per-process seed).
class Digest {
 public:
  void Mix(uint64_t v) {
    const unsigned __int128 m =
        static_cast<unsigned __int128>(h_ ^ 0xa0761d6478bd642fULL) *
        (v ^ 0xe7037ed1a0b428dbULL);
    h_ = static_cast<uint64_t>(m) ^ static_cast<uint64_t>(m >> 64);
    ++values_;
  }
  void MixBytes(absl::string_view b) {
    Mix(b.size());
    Mix(std::hash<std::string_view>{}(std::string_view(b.data(), b.size())));
  }
  void MixTag(uint32_t number, int wire_type) {
    Mix((static_cast<uint64_t>(number) << 3) |
        static_cast<uint32_t>(wire_type));
  }
  uint64_t value() const { return h_; }
  // How many values were mixed in.
  size_t values() const { return values_; }

 private:
  uint64_t h_ = 0x6a09e667f3bcc908ULL;
  size_t values_ = 0;
};

// A number of type `type` as its wire value gives it.
float NumberOf(FieldDescriptor::Type type, uint64_t v) {
  switch (type) {
    case FieldDescriptor::TYPE_DOUBLE: {
      double d;
      std::memcpy(&d, &v, 8);
      return static_cast<float>(d);
    }
    case FieldDescriptor::TYPE_FLOAT: {
      const uint32_t u = static_cast<uint32_t>(v);
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    }
    case FieldDescriptor::TYPE_INT32:
    case FieldDescriptor::TYPE_INT64:
    case FieldDescriptor::TYPE_SFIXED64:
      return static_cast<float>(static_cast<int64_t>(v));
    case FieldDescriptor::TYPE_SFIXED32:
      return static_cast<float>(static_cast<int32_t>(v));
    case FieldDescriptor::TYPE_SINT32:
    case FieldDescriptor::TYPE_SINT64:
      return static_cast<float>(
          static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1)));
    default:  // unsigned
      return static_cast<float>(v);
  }
}

// The packed numbers of a tolerant field, appended to `numbers`; false when
// they do not decode.
bool PackedNumbers(const FieldPlan& f, absl::string_view bytes,
                   std::vector<float>& numbers) {
  const auto* q = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint8_t* const qend = q + bytes.size();
  while (q < qend) {
    uint64_t v = 0;
    if (f.type == FieldDescriptor::TYPE_DOUBLE ||
        f.type == FieldDescriptor::TYPE_FIXED64 ||
        f.type == FieldDescriptor::TYPE_SFIXED64) {
      if (qend - q < 8) return false;
      std::memcpy(&v, q, 8);
      q += 8;
    } else if (f.type == FieldDescriptor::TYPE_FLOAT ||
               f.type == FieldDescriptor::TYPE_FIXED32 ||
               f.type == FieldDescriptor::TYPE_SFIXED32) {
      if (qend - q < 4) return false;
      uint32_t u;
      std::memcpy(&u, q, 4);
      v = u;
      q += 4;
    } else if (!ReadVarint(q, qend, &v)) {
      return false;
    }
    numbers.push_back(NumberOf(f.type, v));
  }
  return true;
}

// ---------------------------------------------------------------------------
// The wire check's verdicts.

// Fields from the report down to the message being walked.
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
inline bool ValueOk(double v, const FieldPlan& w) {
  return std::isfinite(v) && (v >= 0 || w.may_be_negative);
}

absl::Status BadValue(double v, const FieldPlan& w, const Path& path,
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
inline bool EnumOk(const FieldPlan& w, uint64_t v) {
  const int32_t n = static_cast<int32_t>(v);
  if (n >= 0 && n < 64) return (w.enum_values >> n) & 1;
  return w.field->enum_type()->FindValueByNumber(n) != nullptr;
}

absl::Status BadEnum(uint64_t v, const FieldPlan& w, const Path& path,
                     int depth) {
  return absl::InvalidArgumentError(
      absl::StrCat(Join(path, depth, w.field), ": ", static_cast<int32_t>(v),
                   " is not a ", w.field->enum_type()->full_name(), " value"));
}

absl::Status TooMany(const FieldPlan& w, const WireLimits& limits,
                     const Path& path, int depth) {
  return absl::InvalidArgumentError(
      absl::StrCat(Join(path, depth, w.field), ": more than ",
                   limits.max_repeated, " entries"));
}

// Protobuf's check, after an inline pass over the (usual) ASCII bytes,
// eight at a time.
bool ValidUtf8(absl::string_view s) {
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, s.data() + i, 8);
    if (word & 0x8080808080808080ULL) break;
  }
  for (; i < s.size(); ++i) {
    if (static_cast<unsigned char>(s[i]) >= 0x80) {
      return google::protobuf::internal::IsStructurallyValidUTF8(
          s.data() + i, static_cast<int>(s.size() - i));
    }
  }
  return true;
}

// ---------------------------------------------------------------------------
// The walk.

// State of one walk, shared by every level of it.
struct Walk {
  const WireLimits* limits = nullptr;
  // Why the bytes do not decode (set when a level returns false).
  absl::Status malformed;
  // The wire check: the first value problem found; the walk goes on,
  // because bytes that do not decode (DataLoss) must be reported as such
  // whatever else is wrong.
  absl::Status invalid;
  Path path;
  // The head.
  ReportHead* head = nullptr;
  bool purge_applies = false;  // merged over every vmap_purge
  double purge_seconds = 0;
  // The material content; false once its numbers did not decode where the
  // wire check does not look (a singular number sent packed).
  std::vector<float>* numbers = nullptr;
  bool material_ok = true;

  void Note(absl::Status st) {
    if (invalid.ok()) invalid = std::move(st);
  }
  bool Fail(absl::Status st) {
    malformed = std::move(st);
    return false;
  }
};

// The wire check of a packed repeated field's payload: false (w.malformed)
// when it does not decode; value problems and too many entries are noted.
bool CheckPacked(Walk& w, const FieldPlan& f, absl::string_view bytes,
                 int depth) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint8_t* const end = p + bytes.size();
  const size_t len = bytes.size();
  size_t n = 0;
  switch (f.kind) {
    case Kind::kPackedVarint:
      for (uint64_t v; p < end; ++n) {
        if (!ReadVarint(p, end, &v)) return w.Fail(Malformed(f.field->name()));
        if (f.is_enum && !EnumOk(f, v)) w.Note(BadEnum(v, f, w.path, depth));
      }
      break;
    case Kind::kPackedFixed32:
    case Kind::kPackedFixed64: {
      const size_t width = f.kind == Kind::kPackedFixed32 ? 4 : 8;
      if (len % width != 0) return w.Fail(Malformed(f.field->name()));
      n = len / width;
      break;
    }
    case Kind::kDouble:
    case Kind::kFloat: {
      const size_t width = f.kind == Kind::kDouble ? 8 : 4;
      if (len % width != 0) return w.Fail(Malformed(f.field->name()));
      n = len / width;
      if (static_cast<int64_t>(n) > w.limits->max_repeated) break;
      for (; p < end; p += width) {
        const double v = ReadFloating(p, width);
        if (!ValueOk(v, f)) {
          w.Note(BadValue(v, f, w.path, depth));
          break;  // one report per field is enough
        }
      }
      break;
    }
    default:
      return true;
  }
  if (static_cast<int64_t>(n) > w.limits->max_repeated) {
    w.Note(TooMany(f, *w.limits, w.path, depth));
  }
  return true;
}

// The head's per-entry state of one message (a label, an attach entry).
struct Entry {
  absl::string_view key, value;
  int kind = 0;
  double latency = 0;
};

inline double AsDouble(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

// The head's reading of one field (the roles read with another wire type
// are skipped, as protobuf skips them).
inline void HeadScalar(Walk& w, const FieldPlan& f, int wire_type,
                       uint64_t value, absl::string_view bytes, Entry* entry) {
  ReportHead& h = *w.head;
  switch (f.head) {
    case Head::kHostId:
      if (wire_type == wire::kLengthDelimited) h.host_id = bytes;
      break;
    case Head::kSeq:
      if (wire_type == wire::kVarint) h.seq = value;
      break;
    case Head::kObservedSeconds:
      if (wire_type == wire::kVarint)
        h.observed_at_seconds = static_cast<int64_t>(value);
      break;
    case Head::kObservedNanos:
      if (wire_type == wire::kVarint)
        h.observed_at_nanos = static_cast<int32_t>(value);
      break;
    case Head::kInterval:
      if (wire_type == wire::kFixed64) h.interval_seconds = AsDouble(value);
      break;
    case Head::kAgentVersion:
      if (wire_type == wire::kLengthDelimited) h.agent_version = bytes;
      break;
    case Head::kModelVersion:
      if (wire_type == wire::kLengthDelimited) h.model_version = bytes;
      break;
    case Head::kLabelKey:
      if (wire_type == wire::kLengthDelimited) entry->key = bytes;
      break;
    case Head::kLabelValue:
      if (wire_type == wire::kLengthDelimited) entry->value = bytes;
      break;
    case Head::kWorstRisk:
      if (wire_type == wire::kVarint)
        h.worst_risk = static_cast<int32_t>(value);
      break;
    case Head::kProbeKind:
      if (wire_type == wire::kVarint) entry->kind = static_cast<int32_t>(value);
      break;
    case Head::kLatency:
      if (wire_type == wire::kFixed64) entry->latency = AsDouble(value);
      break;
    case Head::kBudgetRatio:
      if (wire_type == wire::kFixed64) h.pool_budget_ratio = AsDouble(value);
      break;
    case Head::kApplies:
      if (wire_type == wire::kVarint) w.purge_applies = value != 0;
      break;
    case Head::kPurgeSeconds:
      if (wire_type == wire::kFixed64) w.purge_seconds = AsDouble(value);
      break;
    case Head::kBaseSeq:
      if (wire_type == wire::kVarint) h.heartbeat_base_seq = value;
      break;
    case Head::kThreadsTotal:
      if (wire_type == wire::kVarint) h.threads_total = value;
      break;
    default:
      break;
  }
}

// Walks the encoded message `bytes` at `plan`, answering what the flags ask:
// kCheck the wire check (a problem of a value to w.invalid), kHead the head
// (fields into w.head; `entry` is this message's per-entry state), kMaterial
// the material content (mixed into `digest`, numbers into w.numbers). A
// level returns false, with the reason in w.malformed, when the bytes do
// not decode: by the wire check's reading with kCheck, else by the head's or
// the material's.
template <bool kCheck, bool kHead, bool kMaterial>
bool WalkMessage(Walk& w, const Plan& plan, absl::string_view bytes, int depth,
                 Digest* digest, Entry* entry) {
  if (kCheck && depth > kMaxDepth)
    return w.Fail(Malformed("nested too deeply"));
  // (field number, entry digest) of the map entries, mixed in at the end.
  absl::InlinedVector<std::pair<uint32_t, uint64_t>, 4> map_entries;
  int counts[kMaxCountedFields];
  bool counted_any = false;
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint8_t* const end = p + bytes.size();
  while (p < end) {
    uint64_t tag;
    if (!wire::ReadTag(p, end, &tag)) return w.Fail(Malformed("bad tag"));
    const auto number = static_cast<uint32_t>(tag >> 3);
    const int wire_type = static_cast<int>(tag & 7);
    const FieldPlan& f = plan.Find(number);
    if (kCheck && f.counted) {
      if (!counted_any) {
        std::memset(counts, 0, sizeof(counts));
        counted_any = true;
      }
      if (++counts[f.index] == w.limits->max_repeated + 1) {
        w.Note(TooMany(f, *w.limits, w.path, depth));
      }
    }
    // Whether the material counts this field: known fields listed as moving
    // do not, whatever their wire type.
    const bool material = kMaterial && !f.moving;
    // A known field arriving with another wire type is an unknown field to
    // protobuf: the wire check and the head skip it; the material content
    // counts it as it comes.
    uint64_t value = 0;  // varint or fixed bits
    absl::string_view sub;
    switch (wire_type) {
      case wire::kVarint:
        if (!ReadVarint(p, end, &value))
          return w.Fail(Malformed("truncated varint"));
        if (kCheck && f.is_enum && !EnumOk(f, value))
          w.Note(BadEnum(value, f, w.path, depth));
        break;
      case wire::kFixed64:
      case wire::kFixed32: {
        const size_t width = wire_type == wire::kFixed64 ? 8 : 4;
        if (static_cast<size_t>(end - p) < width) {
          return w.Fail(Malformed(kCheck       ? "truncated fixed field"
                                  : !kHead     ? "truncated fixed"
                                  : width == 8 ? "truncated fixed64"
                                               : "truncated fixed32"));
        }
        if (width == 8) {
          std::memcpy(&value, p, 8);
        } else {
          uint32_t v;
          std::memcpy(&v, p, 4);
          value = v;
        }
        if (kCheck && f.kind == (width == 8 ? Kind::kDouble : Kind::kFloat)) {
          const double v = ReadFloating(p, width);
          if (!ValueOk(v, f)) w.Note(BadValue(v, f, w.path, depth));
        }
        p += width;
        break;
      }
      case wire::kLengthDelimited: {
        uint64_t len;
        if (!wire::ReadLength(p, end, &len))
          return w.Fail(Malformed("bad length-delimited field"));
        sub = absl::string_view(reinterpret_cast<const char*>(p), len);
        p += len;
        break;
      }
      default:
        return w.Fail(Malformed("unsupported wire type"));
    }

    if (wire_type == wire::kLengthDelimited && f.sub != nullptr) {
      // A message (or a map entry).
      if (kHead && f.head == Head::kFeatureTableOverride)
        w.head->feature_table_override.push_back(sub);
      const bool head = kHead && f.head_below;
      if (!kCheck && !head && !material) continue;
      if (kCheck) w.path[depth] = f.field;
      Digest sub_digest;
      Entry sub_entry;
      const size_t before = material ? w.numbers->size() : 0;
      bool ok;
      if (material) {
        ok = head ? WalkMessage<kCheck, kHead, kMaterial>(
                        w, *f.sub, sub, depth + 1, &sub_digest, &sub_entry)
                  : WalkMessage<kCheck, false, kMaterial>(
                        w, *f.sub, sub, depth + 1, &sub_digest, &sub_entry);
      } else {
        ok = head ? WalkMessage<kCheck, kHead, false>(w, *f.sub, sub, depth + 1,
                                                      nullptr, &sub_entry)
                  : WalkMessage<kCheck, false, false>(w, *f.sub, sub, depth + 1,
                                                      nullptr, &sub_entry);
      }
      if (!ok) return false;
      if (head) {
        ReportHead& h = *w.head;
        switch (f.head) {
          case Head::kObservedAt:
            h.has_observed_at = true;
            break;
          case Head::kLabel:
            h.labels.emplace_back(sub_entry.key, sub_entry.value);
            break;
          case Head::kAttach:
            h.attach_kinds.push_back(sub_entry.kind);
            if (sub_entry.kind == v1::PROBE_KIND_KPROBE_MULTI_RETURN)
              h.attach_latency_seconds = sub_entry.latency;
            break;
          case Head::kHeartbeat:
            h.has_heartbeat = true;
            break;
          default:
            break;
        }
      }
      if (material) {
        if (f.is_map) {
          map_entries.emplace_back(number, sub_digest.value());
        } else if (f.repeated || sub_digest.values() > 0 ||
                   w.numbers->size() != before) {
          digest->MixTag(number, wire_type);
          digest->Mix(sub_digest.value());
        }  // else nothing of it counted
      }
      continue;
    }

    if (kCheck && wire_type == wire::kLengthDelimited) {
      switch (f.kind) {
        case Kind::kString:
          if (!ValidUtf8(sub)) {
            return w.Fail(Malformed(absl::StrCat(
                "invalid UTF-8 in ", Join(w.path, depth, f.field))));
          }
          if (f.max_bytes != 0 && sub.size() > f.max_bytes) {
            w.Note(absl::InvalidArgumentError(
                absl::StrCat(Join(w.path, depth, f.field), ": ", sub.size(),
                             " bytes (at most ", f.max_bytes, ")")));
          }
          break;
        case Kind::kDouble:
        case Kind::kFloat:
        case Kind::kPackedVarint:
        case Kind::kPackedFixed32:
        case Kind::kPackedFixed64:
          if (f.repeated && !CheckPacked(w, f, sub, depth)) return false;
          break;
        default:
          break;
      }
    }
    if (kHead && f.head != Head::kNone) {
      HeadScalar(w, f, wire_type, value, sub, entry);
    }
    if (material) {
      digest->MixTag(number, wire_type);
      if (f.tolerant_number) {
        digest->Mix('#');
        if (wire_type == wire::kLengthDelimited) {  // packed
          if (!PackedNumbers(f, sub, *w.numbers)) {
            // The wire check reads a singular number sent packed as an
            // unknown field, and goes on; the material content is unknown.
            if (!kCheck) return w.Fail(Malformed("bad packed number"));
            w.material_ok = false;
          }
        } else {
          w.numbers->push_back(NumberOf(f.type, value));
        }
      } else if (wire_type == wire::kLengthDelimited) {
        digest->MixBytes(sub);
      } else {
        digest->Mix(value);
      }
    }
  }
  if (kMaterial && !map_entries.empty()) {
    std::sort(map_entries.begin(), map_entries.end());
    for (const auto& [number, entry_digest] : map_entries) {
      digest->MixTag(number, wire::kLengthDelimited);
      digest->Mix(entry_digest);
    }
  }
  return true;
}

}  // namespace

absl::Status CheckReportWire(absl::string_view wire, const WireLimits& limits) {
  Walk w;
  w.limits = &limits;
  if (!WalkMessage<true, false, false>(w, ReportPlan(), wire, 0, nullptr,
                                       nullptr)) {
    return w.malformed;
  }
  return w.invalid;
}

absl::StatusOr<ReportHead> DecodeReportHead(absl::string_view wire) {
  ReportHead head;
  Walk w;
  w.head = &head;
  Entry entry;
  if (!WalkMessage<false, true, false>(w, ReportPlan(), wire, 0, nullptr,
                                       &entry)) {
    return w.malformed;
  }
  if (w.purge_applies) head.purge_seconds = w.purge_seconds;
  return head;
}

Material MaterialOfWire(absl::string_view report) {
  Material out;
  out.numbers.reserve(256);
  Walk w;
  w.numbers = &out.numbers;
  Digest digest;
  if (!WalkMessage<false, false, true>(w, ReportPlan(), report, 0, &digest,
                                       nullptr)) {
    out.numbers.clear();
    return out;  // digest 0: unknown
  }
  out.digest = digest.value() == 0 ? 1 : digest.value();
  return out;
}

ReportScan ScanReport(absl::string_view wire, const WireLimits& limits) {
  ReportScan out;
  Walk w;
  w.limits = &limits;
  w.head = &out.head;
  out.material.numbers.reserve(256);
  w.numbers = &out.material.numbers;
  Digest digest;
  Entry entry;
  if (!WalkMessage<true, true, true>(w, ReportPlan(), wire, 0, &digest,
                                     &entry)) {
    // Bytes that do not decode: the head says so only of what it reads.
    out.check = std::move(w.malformed);
    out.material = Material{};
    absl::StatusOr<ReportHead> head = DecodeReportHead(wire);
    out.head_status = head.status();
    out.head = head.ok() ? *std::move(head) : ReportHead{};
    return out;
  }
  if (w.purge_applies) out.head.purge_seconds = w.purge_seconds;
  out.check = std::move(w.invalid);
  if (out.check.ok() && w.material_ok) {
    out.material.digest = digest.value() == 0 ? 1 : digest.value();
  } else {
    out.material = Material{};
  }
  return out;
}

}  // namespace tracehealth
