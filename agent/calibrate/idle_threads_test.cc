#include "agent/calibrate/idle_threads.h"

#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

// "Threads:" of /proc/self/status.
int ThreadsNow() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

TEST(IdleThreadsTest, StartsAndEndsThem) {
  const int before = ThreadsNow();
  ASSERT_GT(before, 0);
  {
    IdleThreads t;
    ASSERT_TRUE(t.Start(25).ok());
    EXPECT_EQ(t.running(), 25u);
    // Each has had its first run: none is left to run in a timed enable.
    EXPECT_EQ(t.waiting(), 25u);
    EXPECT_EQ(ThreadsNow(), before + 25);
    t.Stop();
    EXPECT_EQ(t.running(), 0u);
    EXPECT_EQ(ThreadsNow(), before);
    t.Stop();  // twice: nothing left
  }
  {
    IdleThreads t;
    ASSERT_TRUE(t.Start(3).ok());
  }  // the destructor ends them
  EXPECT_EQ(ThreadsNow(), before);
}

}  // namespace
}  // namespace tracehealth::agent
