#include "agent/gate/ftrace_filter.h"

#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

TEST(GlobMatchTest, AsLibGlob) {
  EXPECT_TRUE(GlobMatch("vfs_read", "vfs_read"));
  EXPECT_FALSE(GlobMatch("vfs_read", "vfs_readv"));
  EXPECT_TRUE(GlobMatch("vfs_*", "vfs_read"));
  EXPECT_TRUE(GlobMatch("vfs_*", "vfs_"));
  EXPECT_FALSE(GlobMatch("vfs_*", "vfs"));
  EXPECT_TRUE(GlobMatch("*_read", "vfs_read"));
  EXPECT_FALSE(GlobMatch("*_read", "vfs_readv"));
  EXPECT_TRUE(GlobMatch("*read*", "do_readv_x"));
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_TRUE(GlobMatch("a*b*c", "aXbYbZc"));
  EXPECT_FALSE(GlobMatch("a*b*c", "aXbYbZ"));
  EXPECT_TRUE(GlobMatch("vfs_rea?", "vfs_read"));
  EXPECT_FALSE(GlobMatch("vfs_rea?", "vfs_rea"));
  // Classes: a set, a range, an inverted one, ']' first.
  EXPECT_TRUE(GlobMatch("vfs_[rw]*", "vfs_write"));
  EXPECT_FALSE(GlobMatch("vfs_[rw]*", "vfs_open"));
  EXPECT_TRUE(GlobMatch("x[0-9]", "x7"));
  EXPECT_FALSE(GlobMatch("x[0-9]", "xa"));
  EXPECT_TRUE(GlobMatch("x[!0-9]", "xa"));
  EXPECT_FALSE(GlobMatch("x[!0-9]", "x7"));
  EXPECT_TRUE(GlobMatch("[]]", "]"));
  // A '[' without ']' is a literal; '\' escapes.
  EXPECT_TRUE(GlobMatch("a[b", "a[b"));
  EXPECT_FALSE(GlobMatch("a[b", "ab"));
  EXPECT_TRUE(GlobMatch("a\\*", "a*"));
  EXPECT_FALSE(GlobMatch("a\\*", "ab"));
}

int Count(const FtraceFilter& f,
          const std::vector<std::pair<const char*, const char*>>& fns) {
  int n = 0;
  for (const auto& [name, mod] : fns) n += f.Matches(name, mod);
  return n;
}

TEST(FtraceFilterTest, TokensNegationAndModules) {
  const std::vector<std::pair<const char*, const char*>> fns = {
      {"vfs_read", ""},      {"vfs_write", ""},      {"vfs_open", ""},
      {"ext4_read", "ext4"}, {"ext4_write", "ext4"}, {"xfs_read", "xfs"},
  };
  auto parse = [](const char* text) { return *FtraceFilter::Parse(text); };
  EXPECT_EQ(Count(parse("vfs_*"), fns), 3);
  EXPECT_EQ(Count(parse("vfs_* *_read"), fns), 5);  // union
  EXPECT_EQ(Count(parse("vfs_* !vfs_open"), fns), 2);
  EXPECT_EQ(Count(parse("*_read:mod:ext4"), fns), 1);
  EXPECT_EQ(Count(parse(":mod:ext4"), fns), 2);
  EXPECT_EQ(Count(parse("*:mod:*"), fns), 3);  // module functions only
  EXPECT_EQ(Count(parse("  *  "), fns), 6);
  EXPECT_EQ(parse("  vfs_*\t").text(), "vfs_*");
}

TEST(FtraceFilterTest, RejectsWhatFtraceWouldNotCount) {
  EXPECT_EQ(FtraceFilter::Parse("").status().message(), "empty filter");
  EXPECT_EQ(FtraceFilter::Parse("   ").status().message(), "empty filter");
  EXPECT_EQ(FtraceFilter::Parse(std::string(4097, 'a')).status().message(),
            "longer than 4096 bytes");
  EXPECT_TRUE(FtraceFilter::Parse(std::string(4096, 'a')).ok());
  EXPECT_EQ(FtraceFilter::Parse("vfs\x01").status().message(),
            "control character in the filter");
  EXPECT_EQ(FtraceFilter::Parse("vfs_*:mod:").status().message(),
            "'vfs_*:mod:': :mod: without a module");
  EXPECT_EQ(FtraceFilter::Parse("vfs_read:traceon").status().message(),
            "'vfs_read:traceon': only FUNCTION and FUNCTION:mod:MODULE are "
            "counted (no other :command)");
  EXPECT_EQ(FtraceFilter::Parse("!vfs_read").status().message(),
            "only '!' patterns: nothing selected (ftrace would then trace "
            "every function; give '*' for that)");
  EXPECT_EQ(FtraceFilter::Parse("!").status().message(), "'': empty");
}

TEST(FtraceFilterTest, DirectComparisonsAgreeWithTheGlob) {
  const char* names[] = {"vfs_read", "vfs_readv", "do_vfs_read", "read",
                         "",         "vfs_",      "x*y"};
  const char* patterns[] = {"vfs_read", "vfs_*", "*_read", "*read*",
                            "*",        "**",    "*vfs*_", "v*s_read",
                            "vfs_rea?", "[dv]*", "x\\*y"};
  for (const char* p : patterns) {
    FtraceFilter f = *FtraceFilter::Parse(p);
    for (const char* n : names) {
      EXPECT_EQ(f.Matches(n, ""), GlobMatch(p, n)) << p << " " << n;
    }
  }
}

TEST(FtraceFilterTest, SimpleFilters) {
  std::optional<FtraceFilter::Simple> s =
      FtraceFilter::Parse("vfs_*")->simple();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->literal, "vfs_");
  EXPECT_TRUE(s->prefix);
  s = FtraceFilter::Parse("vfs_read")->simple();
  ASSERT_TRUE(s.has_value());
  EXPECT_FALSE(s->prefix);
  EXPECT_FALSE(FtraceFilter::Parse("vfs_* tcp_*")->simple().has_value());
  EXPECT_FALSE(FtraceFilter::Parse("vfs_* !vfs_read")->simple().has_value());
  EXPECT_FALSE(FtraceFilter::Parse("vfs_*:mod:x")->simple().has_value());
  EXPECT_FALSE(FtraceFilter::Parse("*read")->simple().has_value());
}

}  // namespace
}  // namespace tracehealth::agent
