#include "server/index/label_selector.h"

#include <string>
#include <utility>

#include "absl/strings/match.h"
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

// A missing label reads as the empty value, for every operator: it fails
// "= value" and "=~ non-empty", passes "!= value", "!~ non-empty" and
// "= empty".
TEST(LabelSelectorTest, MissingLabelIsEmpty) {
  const std::pair<const char*, bool> cases[] = {
      {"role!=db", true},   {"role=", true},       {"role=db", false},
      {"role=~d.*", false}, {"role=~.*", true},    {"role!~d.*", true},
      {"role!~.*", false},  {"role!=\"\"", false},
  };
  for (const auto& [text, matches] : cases) {
    auto s = LabelSelector::Parse(text);
    ASSERT_TRUE(s.ok()) << text << ": " << s.status();
    EXPECT_EQ(s->Matches(L({})), matches) << text;
    EXPECT_EQ(s->Matches(L({{"other", "db"}})), matches) << text;
  }
  auto e = LabelSelector::Parse("role=");
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e->Matches(L({{"role", "x"}})));
}

TEST(LabelSelectorTest, QuotedValues) {
  auto s = LabelSelector::Parse("note=\"a,b\",x=\"q\\\"\"");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->Matches(L({{"note", "a,b"}, {"x", "q\""}})));
}

TEST(LabelSelectorTest, Errors) {
  auto bad = LabelSelector::Parse("a!b");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "selector: bad operator in \"a!b\"");
  // RE2's reason follows the pattern.
  bad = LabelSelector::Parse("zone=~(unclosed");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "selector: bad regex \"(unclosed\": missing ): (unclosed");
  // A value that is no regex by itself is refused, naming only itself (not
  // read as "^(?:a)|(b)$", which would be a valid regex).
  bad = LabelSelector::Parse("zone=~a)|(b");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "selector: bad regex \"a)|(b\": unexpected ): a)|(b");
}

TEST(LabelSelectorTest, RegexMatchesTheWholeValue) {
  auto sel = LabelSelector::Parse("zone=~a|ab");
  ASSERT_TRUE(sel.ok()) << sel.status();
  // Each alternative anchored at both ends: "ab" matches through the second
  // one, "abc" and "b" match neither.
  EXPECT_TRUE(sel->Matches(L({{"zone", "a"}})));
  EXPECT_TRUE(sel->Matches(L({{"zone", "ab"}})));
  EXPECT_FALSE(sel->Matches(L({{"zone", "abc"}})));
  EXPECT_FALSE(sel->Matches(L({{"zone", "b"}})));
  auto neg = LabelSelector::Parse("zone!~a|ab");
  ASSERT_TRUE(neg.ok()) << neg.status();
  EXPECT_FALSE(neg->Matches(L({{"zone", "ab"}})));
  EXPECT_TRUE(neg->Matches(L({{"zone", "abc"}})));
}

// Each refusal: INVALID_ARGUMENT, and the message says why and where.
TEST(LabelSelectorTest, RefusalsSayWhy) {
  const std::pair<const char*, const char*> cases[] = {
      {"role==db",
       "selector: value \"=db\" in \"role==db\" starts with an operator "
       "character (quote it if it is meant)"},
      {"role=!db",
       "selector: value \"!db\" in \"role=!db\" starts with an operator "
       "character (quote it if it is meant)"},
      {"role=~~x",
       "selector: value \"~x\" in \"role=~~x\" starts with an operator "
       "character (quote it if it is meant)"},
      {"role=db,,",
       "selector: empty matcher (a leading, doubled or trailing comma) in "
       "\"role=db,,\""},
      {"role=db,",
       "selector: empty matcher (a leading, doubled or trailing comma) in "
       "\"role=db,\""},
      {",role=db",
       "selector: empty matcher (a leading, doubled or trailing comma) in "
       "\",role=db\""},
      {"role=db,,rack=r1",
       "selector: empty matcher (a leading, doubled or trailing comma) in "
       "\"role=db,,rack=r1\""},
      {"role", "selector: no operator (=, !=, =~, !~) in \"role\""},
      {"=db", "selector: empty label name in \"=db\""},
      {"ro le=db",
       "selector: bad label name \"ro le\" (must match "
       "[A-Za-z_][A-Za-z0-9_]*)"},
      {"1role=db",
       "selector: bad label name \"1role\" (must match "
       "[A-Za-z_][A-Za-z0-9_]*)"},
      {"a=x\"y\"",
       "selector: stray quote in the value of \"a=x\"y\"\" (quote the whole "
       "value)"},
      {"a=\"open", "selector: unterminated quote in \"a=\"open\""},
  };
  for (const auto& [text, want] : cases) {
    auto s = LabelSelector::Parse(text);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_TRUE(absl::IsInvalidArgument(s.status())) << text;
    EXPECT_EQ(s.status().message(), want) << text;
  }
  // Quoted, such values are values.
  auto q = LabelSelector::Parse("role=\"=db\",note=\"a\\\"b\"");
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_TRUE(q->Matches(L({{"role", "=db"}, {"note", "a\"b"}})));
  // Surrounding whitespace and an empty value stay allowed.
  EXPECT_TRUE(LabelSelector::Parse(" role = db , rack!= ").ok());
}

TEST(LabelSelectorTest, EchoedInputIsBounded) {
  // A 20 kB matcher comes back as 128 bytes and its length.
  const std::string value(20000, 'v');
  auto s = LabelSelector::Parse("role=~(" + value);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StartsWith(
      s.status().message(),
      "selector: bad regex \"(" + std::string(127, 'v') + "…(20001 bytes)\""))
      << s.status().message().substr(0, 300);
  EXPECT_LT(s.status().message().size(), 400u);
  auto n = LabelSelector::Parse(std::string(20000, 'k'));
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().message(),
            "selector: no operator (=, !=, =~, !~) in \"" +
                std::string(128, 'k') + "…(20000 bytes)\"");
}

}  // namespace
}  // namespace tracehealth::server
