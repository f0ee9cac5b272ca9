#include "server/index/label_selector.h"

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

google::protobuf::Map<std::string, std::string> L(
    std::initializer_list<std::pair<const std::string, std::string>> kv) {
  google::protobuf::Map<std::string, std::string> m;
  for (const auto& [k, v] : kv) m[k] = v;
  return m;
}

TEST(LabelSelectorTest, EmptyMatchesAll) {
  auto s = LabelSelector::Parse("  ");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->empty());
  EXPECT_TRUE(s->Matches(L({})));
}

TEST(LabelSelectorTest, AllOperators) {
  auto s = LabelSelector::Parse("role=db, rack!=r7,zone=~us-.*,env!~dev|test");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->matchers().size(), 4u);
  EXPECT_TRUE(
      s->Matches(L({{"role", "db"}, {"rack", "r1"}, {"zone", "us-east"}})));
  EXPECT_FALSE(
      s->Matches(L({{"role", "web"}, {"rack", "r1"}, {"zone", "us-east"}})));
  EXPECT_FALSE(
      s->Matches(L({{"role", "db"}, {"rack", "r7"}, {"zone", "us-east"}})));
  // Regexes are anchored.
  EXPECT_FALSE(s->Matches(L({{"role", "db"}, {"zone", "eu-us-1"}})));
  EXPECT_FALSE(
      s->Matches(L({{"role", "db"}, {"zone", "us-1"}, {"env", "dev"}})));
  EXPECT_TRUE(s->Matches(
      L({{"role", "db"}, {"zone", "us-1"}, {"env", "development"}})));
}

TEST(LabelSelectorTest, MissingLabelIsEmpty) {
  auto s = LabelSelector::Parse("role!=db");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->Matches(L({})));
  auto e = LabelSelector::Parse("role=");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->Matches(L({})));
  EXPECT_FALSE(e->Matches(L({{"role", "x"}})));
}

TEST(LabelSelectorTest, QuotedValues) {
  auto s = LabelSelector::Parse("note=\"a,b\",x=\"q\\\"\"");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->Matches(L({{"note", "a,b"}, {"x", "q\""}})));
}

TEST(LabelSelectorTest, Errors) {
  EXPECT_FALSE(LabelSelector::Parse("role").ok());
  EXPECT_FALSE(LabelSelector::Parse("=db").ok());
  EXPECT_FALSE(LabelSelector::Parse("zone=~(unclosed").ok());
  EXPECT_FALSE(LabelSelector::Parse("a=\"open").ok());
  EXPECT_FALSE(LabelSelector::Parse("a!b").ok());
}

}  // namespace
}  // namespace tracehealth::server
