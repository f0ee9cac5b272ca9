// Randomly damaged fixture hosts: files truncated, bytes flipped, garbage
// appended, files removed. The collector must never crash, every unknown
// input must carry a reason, and the models must still answer.
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "agent/collect/collector.h"
#include "common/models/evaluate.h"
#include "common/procfs/host_fs.h"
#include "gtest/gtest.h"
#include "tests/agent/fixture_util.h"

namespace tracehealth::testing {
namespace {

std::vector<std::string> RegularFiles(const std::string& root) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void Damage(const std::string& path, std::mt19937* rng) {
  std::string data = ReadFile(path).value_or("");
  switch ((*rng)() % 5) {
    case 0:  // truncate
      data.resize(data.empty() ? 0 : (*rng)() % data.size());
      break;
    case 1:  // flip bytes
      for (int i = 0; i < 8 && !data.empty(); ++i) {
        data[(*rng)() % data.size()] = static_cast<char>((*rng)() % 256);
      }
      break;
    case 2:  // garbage appended
      for (int i = 0; i < 64; ++i)
        data.push_back(static_cast<char>((*rng)() % 256));
      break;
    case 3:  // emptied
      data.clear();
      break;
    default:  // removed
      std::filesystem::remove(path);
      return;
  }
  ASSERT_TRUE(WriteFile(path, data).ok());
}

TEST(OddHostTest, DamagedFilesNeverCrashTheCollector) {
  std::mt19937 rng(20261129);
  for (const char* fixture :
       {"preempt-none-6.16-240k", "kprobe-multi-6.14", "fgraph-active-6.19",
        "kasan-6.12-256cpu", "no-tracefs"}) {
    for (int round = 0; round < 12; ++round) {
      std::string root = CopyFixture(fixture);
      std::vector<std::string> files = RegularFiles(root);
      const int damaged = 1 + rng() % 8;
      for (int i = 0; i < damaged; ++i) {
        Damage(files[rng() % files.size()], &rng);
      }
      HostFs fs(root);
      absl::Time now = absl::FromUnixSeconds(1796000000);
      agent::Collector c(&fs, agent::CollectorOptions(), [&] { return now; });
      for (int cycle = 0; cycle < 2; ++cycle) {
        v1::HostSnapshot s = c.Collect();
        for (const v1::UnknownInput& u : s.unknown()) {
          EXPECT_FALSE(u.reason().empty()) << fixture << " " << u.input();
        }
        if (s.threads().has_total()) {
          EXPECT_GT(s.threads().total(), 0u);
        }
        EXPECT_EQ(EvaluateAll(s).attach_size(), 10);
        now += absl::Seconds(15);
      }
      std::filesystem::remove_all(root);
    }
  }
}

}  // namespace
}  // namespace tracehealth::testing
