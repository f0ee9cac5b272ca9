#include "common/report/material.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using Path = std::vector<const FieldDescriptor*>;

// Every leaf field reachable from HostReport (a message type once per path).
void Leaves(const Descriptor* d, Path& path, std::vector<Path>& out) {
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    path.push_back(f);
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      bool seen = false;
      for (size_t j = 0; j + 1 < path.size(); ++j)
        seen |= path[j]->message_type() == f->message_type();
      if (!seen) Leaves(f->message_type(), path, out);
    } else {
      out.push_back(path);
    }
    path.pop_back();
  }
}

std::string Name(const Path& p) {
  std::vector<std::string> parts;
  for (const FieldDescriptor* f : p) parts.push_back(f->name());
  return absl::StrJoin(parts, ".");
}

bool Moving(const Path& p) {
  const std::vector<std::string> moving = MovingFieldNames();
  for (const FieldDescriptor* f : p) {
    for (const std::string& m : moving)
      if (f->full_name() == m) return true;
  }
  return false;
}

bool InPredictions(const Path& p) {
  return p[0]->full_name() == "tracehealth.v1.HostReport.predictions";
}

bool IsNumber(const FieldDescriptor* f) {
  const auto t = f->cpp_type();
  return t == FieldDescriptor::CPPTYPE_INT32 ||
         t == FieldDescriptor::CPPTYPE_INT64 ||
         t == FieldDescriptor::CPPTYPE_UINT32 ||
         t == FieldDescriptor::CPPTYPE_UINT64 ||
         t == FieldDescriptor::CPPTYPE_DOUBLE ||
         t == FieldDescriptor::CPPTYPE_FLOAT;
}

// Moves the leaf at `path` of `m`: by `factor` (numbers; other types change
// whatever the factor). Creates the first element of an empty repeated
// field on the way. Returns the number before, or 0.
double Mutate(Message* m, const Path& path, double factor) {
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    const FieldDescriptor* f = path[i];
    const Reflection& r = *m->GetReflection();
    if (f->is_repeated()) {
      m = r.FieldSize(*m, f) == 0 ? r.AddMessage(m, f)
                                  : r.MutableRepeatedMessage(m, f, 0);
    } else {
      m = r.MutableMessage(m, f);
    }
  }
  const FieldDescriptor* f = path.back();
  const Reflection& r = *m->GetReflection();
  const bool rep = f->is_repeated();
  const bool empty = rep && r.FieldSize(*m, f) == 0;
  auto num = [&](double v) { return v == 0 ? 1000 : v * factor; };
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string s = empty ? ""
                      : rep ? r.GetRepeatedString(*m, f, 0)
                            : r.GetString(*m, f);
      s += "x";
      empty ? r.AddString(m, f, s)
      : rep ? r.SetRepeatedString(m, f, 0, s)
            : r.SetString(m, f, s);
      return 0;
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      const bool b =
          !empty && (rep ? r.GetRepeatedBool(*m, f, 0) : r.GetBool(*m, f));
      empty ? r.AddBool(m, f, !b)
      : rep ? r.SetRepeatedBool(m, f, 0, !b)
            : r.SetBool(m, f, !b);
      return 0;
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      const int v = empty ? 0
                    : rep ? r.GetRepeatedEnumValue(*m, f, 0)
                          : r.GetEnumValue(*m, f);
      const int next =
          f->enum_type()
              ->value((f->enum_type()->FindValueByNumber(v)->index() + 1) %
                      f->enum_type()->value_count())
              ->number();
      empty ? r.AddEnumValue(m, f, next)
      : rep ? r.SetRepeatedEnumValue(m, f, 0, next)
            : r.SetEnumValue(m, f, next);
      return 0;
    }
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT: {
      double v =
          empty ? 0
          : f->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT
              ? (rep ? r.GetRepeatedFloat(*m, f, 0) : r.GetFloat(*m, f))
              : (rep ? r.GetRepeatedDouble(*m, f, 0) : r.GetDouble(*m, f));
      const double next = num(v);
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT) {
        empty ? r.AddFloat(m, f, next)
        : rep ? r.SetRepeatedFloat(m, f, 0, next)
              : r.SetFloat(m, f, next);
      } else {
        empty ? r.AddDouble(m, f, next)
        : rep ? r.SetRepeatedDouble(m, f, 0, next)
              : r.SetDouble(m, f, next);
      }
      return v;
    }
    default: {  // integers
      int64_t v = 0;
      if (!empty) {
        switch (f->cpp_type()) {
          case FieldDescriptor::CPPTYPE_INT32:
            v = rep ? r.GetRepeatedInt32(*m, f, 0) : r.GetInt32(*m, f);
            break;
          case FieldDescriptor::CPPTYPE_INT64:
            v = rep ? r.GetRepeatedInt64(*m, f, 0) : r.GetInt64(*m, f);
            break;
          case FieldDescriptor::CPPTYPE_UINT32:
            v = rep ? r.GetRepeatedUInt32(*m, f, 0) : r.GetUInt32(*m, f);
            break;
          default:
            v = static_cast<int64_t>(rep ? r.GetRepeatedUInt64(*m, f, 0)
                                         : r.GetUInt64(*m, f));
        }
      }
      const int64_t next = static_cast<int64_t>(num(static_cast<double>(v)));
      switch (f->cpp_type()) {
        case FieldDescriptor::CPPTYPE_INT32:
          empty ? r.AddInt32(m, f, next)
          : rep ? r.SetRepeatedInt32(m, f, 0, next)
                : r.SetInt32(m, f, next);
          break;
        case FieldDescriptor::CPPTYPE_INT64:
          empty ? r.AddInt64(m, f, next)
          : rep ? r.SetRepeatedInt64(m, f, 0, next)
                : r.SetInt64(m, f, next);
          break;
        case FieldDescriptor::CPPTYPE_UINT32:
          empty ? r.AddUInt32(m, f, next)
          : rep ? r.SetRepeatedUInt32(m, f, 0, next)
                : r.SetUInt32(m, f, next);
          break;
        default:
          empty ? r.AddUInt64(m, f, next)
          : rep ? r.SetRepeatedUInt64(m, f, 0, next)
                : r.SetUInt64(m, f, next);
      }
      return static_cast<double>(v);
    }
  }
}

bool Same(const v1::HostReport& a, const v1::HostReport& b) {
  const Material ma = MaterialOf(a), mb = MaterialOf(b);
  return SameMaterial(ma.digest, ma.numbers, mb.digest, mb.numbers);
}

v1::HostReport Base() {
  server::SampleHost host = server::FleetHost(3);
  v1::HostReport r =
      server::SampleReport(host, 7, absl::FromUnixSeconds(1700000000));
  (*r.mutable_labels())["zone"] = "z1";
  return r;
}

TEST(MaterialTest, EqualReportsAreTheSame) {
  EXPECT_TRUE(Same(Base(), Base()));
  EXPECT_NE(MaterialOf(Base()).digest, 0u);
}

TEST(MaterialTest, UnknownDigestIsNeverTheSame) {
  EXPECT_FALSE(
      SameMaterial(0, absl::Span<const float>(), 0, absl::Span<const float>()));
  // Bytes that do not decode (a tag, then a cut length) have no digest.
  const std::string cut = std::string(
      "\x42\x05"
      "ab",
      4);
  EXPECT_EQ(MaterialOfWire(cut).digest, 0u);
  EXPECT_EQ(MaterialOfWire(Base().SerializeAsString()).digest,
            MaterialOf(Base()).digest);
}

// Shared numbers: one object under equal known digests is the same without
// a comparison; otherwise the numbers are compared as spans.
TEST(MaterialTest, SharedNumbers) {
  const SharedNumbers a = ShareNumbers({100.0f, 2.0f});
  EXPECT_TRUE(SameMaterial(7, a, 7, a));
  EXPECT_FALSE(SameMaterial(0, a, 0, a)) << "digest unknown";
  EXPECT_FALSE(SameMaterial(7, a, 8, a)) << "digests differ";
  // Another object: compared, within the tolerance or not.
  EXPECT_TRUE(SameMaterial(7, a, 7, ShareNumbers({104.9f, 2.0f})));
  EXPECT_FALSE(SameMaterial(7, a, 7, ShareNumbers({105.3f, 2.0f})));
  EXPECT_FALSE(SameMaterial(7, a, 7, ShareNumbers({100.0f})));
  // None (null) is no numbers.
  EXPECT_TRUE(SameMaterial(7, nullptr, 7, ShareNumbers({})));
  EXPECT_FALSE(SameMaterial(7, nullptr, 7, a));
}

// Every field of the schema, both ways: a field that counts changes the
// material content, a moving one does not; a prediction number counts
// beyond the tolerance only.
TEST(MaterialTest, EveryFieldCountsUnlessListedAsMoving) {
  std::vector<Path> leaves;
  Path path;
  Leaves(v1::HostReport::descriptor(), path, leaves);
  ASSERT_GT(leaves.size(), 200u);
  int counted = 0, moving = 0, tolerant = 0;
  for (const Path& p : leaves) {
    SCOPED_TRACE(Name(p));
    v1::HostReport changed = Base();
    const double before = Mutate(&changed, p, 2.0);
    if (Moving(p)) {
      ++moving;
      EXPECT_TRUE(Same(Base(), changed)) << "a moving field counted";
      continue;
    }
    ++counted;
    EXPECT_FALSE(Same(Base(), changed)) << "a field that counts was folded";
    if (InPredictions(p) && IsNumber(p.back()) && std::abs(before) >= 100) {
      ++tolerant;
      v1::HostReport near = Base();
      Mutate(&near, p, 1.0 + kMaterialTolerance / 2);
      EXPECT_TRUE(Same(Base(), near)) << "within the tolerance";
      v1::HostReport far = Base();
      Mutate(&far, p, 1.0 + kMaterialTolerance * 1.2);
      EXPECT_FALSE(Same(Base(), far)) << "beyond the tolerance";
    }
  }
  EXPECT_GT(moving, 20);
  EXPECT_GT(counted, 150);
  EXPECT_GT(tolerant, 3);
}

TEST(MaterialTest, ToleranceBoundary) {
  const uint64_t d = 42;
  // 5 % of the larger: 100 and 105.26 are 4.9998 % apart, 105.27 5.0071 %.
  EXPECT_TRUE(SameMaterial(d, {100.0f}, d, {105.26f}));
  EXPECT_FALSE(SameMaterial(d, {100.0f}, d, {105.27f}));
  EXPECT_TRUE(SameMaterial(d, {-100.0f}, d, {-105.26f}));
  EXPECT_FALSE(SameMaterial(d, {100.0f}, d, {-100.0f}));
  EXPECT_FALSE(SameMaterial(d, {0.0f}, d, {1e-12f}));
  EXPECT_FALSE(SameMaterial(d, {1.0f}, d, {1.0f, 2.0f}));
  EXPECT_FALSE(SameMaterial(d, {1.0f}, d + 1, {1.0f}));
}

TEST(MaterialTest, LabelOrderDoesNotCountLabelsDo) {
  v1::HostReport a = Base(), b = Base();
  a.mutable_labels()->clear();
  b.mutable_labels()->clear();
  (*a.mutable_labels())["a"] = "1";
  (*a.mutable_labels())["b"] = "2";
  (*b.mutable_labels())["b"] = "2";
  (*b.mutable_labels())["a"] = "1";
  EXPECT_TRUE(Same(a, b));
  (*b.mutable_labels())["a"] = "3";
  EXPECT_FALSE(Same(a, b));
}

TEST(MaterialTest, ThreadsAloneDoNotCount) {
  v1::HostReport a = Base(), b = Base();
  b.set_seq(a.seq() + 1);
  b.mutable_snapshot()->mutable_threads()->set_total(
      a.snapshot().threads().total() + 3);
  EXPECT_TRUE(Same(a, b));
}

}  // namespace
}  // namespace tracehealth
