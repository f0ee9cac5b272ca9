#include "server/ingest/heartbeat_bases.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

std::shared_ptr<const v1::HostReport> Report(const std::string& host,
                                             uint64_t seq) {
  auto r = std::make_shared<v1::HostReport>();
  r->set_host_id(host);
  r->set_seq(seq);
  r->set_agent_version("1.0");
  return r;
}

HeartbeatBase Base(const std::string& host, uint64_t seq) {
  HeartbeatBase b;
  b.report = Report(host, seq);
  b.wire_size = b.report->ByteSizeLong();
  b.digest = 42;
  b.numbers = ShareNumbers({1.5f, 2.5f});
  return b;
}

// A store holding (host, seq) for the listed pairs; records every read.
struct FakeStore {
  std::vector<std::pair<std::string, uint64_t>> held;
  std::vector<std::pair<std::string, uint64_t>> reads;
  HeartbeatBases::Read Reader() {
    return [this](const std::string& host,
                  uint64_t seq) -> absl::StatusOr<std::string> {
      reads.emplace_back(host, seq);
      for (const auto& [h, s] : held) {
        if (h == host && s == seq)
          return Report(host, seq)->SerializeAsString();
      }
      if (host == "garbage") return std::string("\xff\xff\xff", 3);
      return absl::NotFoundError("no such report");
    };
  }
};

TEST(HeartbeatBasesTest, APutBaseIsGivenBackWithoutARead) {
  FakeStore store;
  HeartbeatBases bases(1 << 20, store.Reader());
  HeartbeatBase b = Base("a", 7);
  const v1::HostReport* r = b.report.get();
  bases.Put("a", 7, std::move(b));
  absl::StatusOr<std::shared_ptr<const HeartbeatBase>> got = bases.Get("a", 7);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)->report.get(), r);
  EXPECT_EQ((*got)->digest, 42u);
  ASSERT_NE((*got)->numbers, nullptr);
  EXPECT_EQ(*(*got)->numbers, (std::vector<float>{1.5f, 2.5f}));
  EXPECT_TRUE(store.reads.empty());
  EXPECT_EQ(bases.hits(), 1u);
  EXPECT_EQ(bases.reads(), 0u);
}

TEST(HeartbeatBasesTest, AnotherSeqIsReadFromTheStoreAndHeld) {
  FakeStore store;
  store.held = {{"a", 5}};
  HeartbeatBases bases(1 << 20, store.Reader());
  bases.Put("a", 7, Base("a", 7));
  absl::StatusOr<std::shared_ptr<const HeartbeatBase>> got = bases.Get("a", 5);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)->report->seq(), 5u);
  // Read from the store: its material content is worked out from its bytes
  // (a report with host_id, seq and agent_version only: no numbers).
  EXPECT_NE((*got)->digest, 0u);
  ASSERT_NE((*got)->numbers, nullptr);
  EXPECT_TRUE((*got)->numbers->empty());
  EXPECT_EQ((*got)->wire_size, Report("a", 5)->ByteSizeLong());
  ASSERT_EQ(store.reads.size(), 1u);
  EXPECT_EQ(store.reads[0], std::make_pair(std::string("a"), uint64_t{5}));
  // The newer base put before stays held.
  ASSERT_TRUE(bases.Get("a", 7).ok());
  EXPECT_EQ(store.reads.size(), 1u);
  // An older one read when none is held is held.
  HeartbeatBases empty(1 << 20, store.Reader());
  ASSERT_TRUE(empty.Get("a", 5).ok());
  ASSERT_TRUE(empty.Get("a", 5).ok());
  EXPECT_EQ(store.reads.size(), 2u);
  EXPECT_EQ(empty.hits(), 1u);
  EXPECT_EQ(empty.reads(), 1u);
}

TEST(HeartbeatBasesTest, WhatTheStoreDoesNotHaveIsNotFound) {
  FakeStore store;
  HeartbeatBases bases(1 << 20, store.Reader());
  EXPECT_TRUE(absl::IsNotFound(bases.Get("a", 3).status()));
  EXPECT_EQ(bases.hosts(), 0u);
  EXPECT_TRUE(absl::IsDataLoss(bases.Get("garbage", 3).status()));
  EXPECT_EQ(bases.hosts(), 0u);
}

TEST(HeartbeatBasesTest, TheLeastRecentlyUsedGoOverTheBound) {
  FakeStore store;
  size_t one = 0;
  {
    HeartbeatBases probe(1 << 20, store.Reader());
    probe.Put("a", 1, Base("a", 1));
    one = probe.bytes();
  }
  ASSERT_GT(one, 0u);
  // Room for two hosts (same sizes), not three.
  HeartbeatBases bases(2 * one + one / 2, store.Reader());
  bases.Put("a", 1, Base("a", 1));
  bases.Put("b", 1, Base("b", 1));
  EXPECT_EQ(bases.bytes(), 2 * one);
  ASSERT_TRUE(bases.Get("a", 1).ok());  // a is now the most recent
  bases.Put("c", 1, Base("c", 1));
  EXPECT_EQ(bases.hosts(), 2u);
  EXPECT_EQ(bases.bytes(), 2 * one);
  ASSERT_TRUE(bases.Get("a", 1).ok());
  ASSERT_TRUE(bases.Get("c", 1).ok());
  EXPECT_TRUE(store.reads.empty());
  // b went: asked for, it is read (and the store has none).
  EXPECT_TRUE(absl::IsNotFound(bases.Get("b", 1).status()));
  EXPECT_EQ(store.reads.size(), 1u);
  // A base larger than the bound alone is still held.
  HeartbeatBases tiny(1, store.Reader());
  tiny.Put("a", 1, Base("a", 1));
  EXPECT_EQ(tiny.hosts(), 1u);
  tiny.Put("b", 1, Base("b", 1));
  EXPECT_EQ(tiny.hosts(), 1u);
  ASSERT_TRUE(tiny.Get("b", 1).ok());
}

TEST(HeartbeatBasesTest, PutReplacesAHostsBase) {
  FakeStore store;
  HeartbeatBases bases(1 << 20, store.Reader());
  bases.Put("a", 1, Base("a", 1));
  const size_t one = bases.bytes();
  bases.Put("a", 2, Base("a", 2));
  EXPECT_EQ(bases.hosts(), 1u);
  EXPECT_EQ(bases.bytes(), one);
  ASSERT_TRUE(bases.Get("a", 2).ok());
  EXPECT_TRUE(store.reads.empty());
  EXPECT_TRUE(absl::IsNotFound(bases.Get("a", 1).status()));
}

}  // namespace
}  // namespace tracehealth::server
