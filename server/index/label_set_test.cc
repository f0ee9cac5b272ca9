#include "server/index/label_set.h"

#include <string>

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

TEST(LabelSetTest, FindsEveryLabelAndNothingElse) {
  google::protobuf::Map<std::string, std::string> m;
  m["zone"] = "us-east-1a";
  m["role"] = "db";
  m["rack"] = "";
  m[std::string("k\0ey", 4)] = std::string("v\0", 2);
  const LabelSet s = LabelSet::Of(m);
  EXPECT_EQ(s.size(), 4u);
  EXPECT_EQ(s.Find("role"), absl::string_view("db"));
  EXPECT_EQ(s.Find("zone"), absl::string_view("us-east-1a"));
  // Present with an empty value is not absent.
  ASSERT_TRUE(s.Find("rack").has_value());
  EXPECT_EQ(*s.Find("rack"), "");
  EXPECT_EQ(s.Find(std::string("k\0ey", 4)),
            absl::string_view(std::string("v\0", 2)));
  EXPECT_FALSE(s.Find("ro").has_value());
  EXPECT_FALSE(s.Find("zzz").has_value());
  EXPECT_FALSE(s.Find("").has_value());
}

TEST(LabelSetTest, KeyOrderAndRoundTrips) {
  std::map<std::string, std::string> in = {
      {"b", "2"}, {"a", "1"}, {"c", std::string(300, 'x')}};
  const LabelSet s = LabelSet::Of(in);
  std::string order;
  s.ForEach([&](absl::string_view k, absl::string_view) {
    order.append(k.data(), k.size());
  });
  EXPECT_EQ(order, "abc");
  EXPECT_EQ(s.ToMap(), in);
  google::protobuf::Map<std::string, std::string> proto;
  s.ToProto(&proto);
  EXPECT_EQ(LabelSet::Of(proto), s);
  // 300 bytes take a two-byte length: the value is read back whole.
  EXPECT_EQ(s.Find("c")->size(), 300u);
}

TEST(LabelSetTest, Empty) {
  const LabelSet s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.size(), 0u);
  EXPECT_FALSE(s.Find("role").has_value());
  EXPECT_EQ(s, LabelSet::Of(std::map<std::string, std::string>()));
  EXPECT_NE(s, LabelSet::Of(std::map<std::string, std::string>{{"a", ""}}));
}

}  // namespace
}  // namespace tracehealth::server
