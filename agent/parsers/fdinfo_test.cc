#include "agent/parsers/fdinfo.h"

#include <utility>

#include "common/testing/refusal.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

constexpr char kKprobeMulti[] =
    "pos:\t0\n"
    "flags:\t02000000\n"
    "mnt_id:\t15\n"
    "ino:\t2094\n"
    "link_type:\tkprobe_multi\n"
    "link_id:\t3\n"
    "prog_tag:\ta04f5eef06a7f555\n"
    "prog_id:\t20\n"
    "kprobe_cnt:\t2\n"
    "missed:\t0\n"
    "cookie\t func\n"
    "1\t bpf_fentry_test1+0x0/0x20\n"
    "2\t bpf_fentry_test2+0x0/0x20\n";

TEST(FdinfoTest, ParsesKprobeMultiLink) {
  auto r = ParseBpfLinkFdinfo(kKprobeMulti);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->has_value());
  const BpfLinkFdinfo& l = **r;
  EXPECT_EQ(l.link_type, "kprobe_multi");
  EXPECT_TRUE(IsKprobeMultiLink(l));
  EXPECT_EQ(l.link_id, 3u);
  EXPECT_EQ(l.prog_id, 20u);
  EXPECT_EQ(l.kprobe_cnt, 2u);
  EXPECT_EQ(l.missed, 0u);
}

TEST(FdinfoTest, NonLinkFdIsNotALink) {
  auto r = ParseBpfLinkFdinfo("pos:\t0\nflags:\t0100002\nmnt_id:\t26\n");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
}

TEST(FdinfoTest, OtherLinkTypes) {
  auto r = ParseBpfLinkFdinfo(
      "pos:\t0\nlink_type:\ttracing\nlink_id:\t4\nprog_id:\t9\n"
      "attach_type:\t25\ntarget_obj_id:\t1\ntarget_btf_id:\t1234\n");
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->has_value());
  EXPECT_FALSE(IsKprobeMultiLink(**r));
  auto ret =
      ParseBpfLinkFdinfo("link_type:\tkretprobe_multi\nkprobe_cnt:\t7\n");
  EXPECT_TRUE(IsKprobeMultiLink(**ret));
}

TEST(FdinfoTest, RejectsMalformed) {
  const std::pair<const char*, const char*> cases[] = {
      {"link_type:\t\n", "fdinfo: empty link_type"},
      {"link_type:\tkprobe_multi\nkprobe_cnt:\tmany\n",
       "fdinfo: kprobe_cnt 'many' is not a number"},
      {"link_type:\tkprobe_multi\nlink_id:\t-1\n",
       "fdinfo: link_id '-1' is not a number"},
  };
  for (const auto& [text, message] : cases) {
    SCOPED_TRACE(text);
    ExpectRefused(ParseBpfLinkFdinfo(text).status(), message);
  }
}

}  // namespace
}  // namespace tracehealth::agent
