#include "agent/state/seq_store.h"

#include "agent/state/state_file.h"
#include "agent/testing/test_tmp.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

TEST(SeqStoreTest, MonotonicAcrossRestarts) {
  std::string dir = TestTempDir("seq");
  uint64_t last = 0;
  for (int run = 0; run < 3; ++run) {
    auto store = SeqStore::Open(dir, "host-a", 4);
    ASSERT_TRUE(store.ok()) << store.status();
    for (int i = 0; i < 6; ++i) {
      auto s = store->Next();
      ASSERT_TRUE(s.ok());
      EXPECT_GT(*s, last);
      last = *s;
    }
    EXPECT_EQ(store->last(), last);
  }
  EXPECT_GE(last, 18u);
}

TEST(SeqStoreTest, FirstSeqIsOneAndOtherHostRestarts) {
  std::string dir = TestTempDir("seq");
  auto a = SeqStore::Open(dir, "host-a");
  EXPECT_EQ(*a->Next(), 1u);
  EXPECT_EQ(*a->Next(), 2u);
  auto b = SeqStore::Open(dir, "host-b");
  EXPECT_EQ(*b->Next(), 1u);
}

TEST(SeqStoreTest, CorruptFileIsAnErrorNotAReset) {
  std::string dir = TestTempDir("seq");
  ASSERT_TRUE(WriteFileAtomically(dir + "/seq", "garbage\n").ok());
  EXPECT_FALSE(SeqStore::Open(dir, "host-a").ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/seq", "host_id=host-a\n").ok());
  EXPECT_FALSE(SeqStore::Open(dir, "host-a").ok());
}

}  // namespace
}  // namespace tracehealth::agent
