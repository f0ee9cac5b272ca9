#include "common/models/model_inputs.h"

#include <vector>

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

enum class Input { kA, kB, kC };

TEST(ModelInputsTest, ConfidenceDropsPerAssumedInput) {
  EXPECT_DOUBLE_EQ(Confidence(0, 0), 1.0);
  // 1 - 2 * 0.1 = 0.8.
  EXPECT_DOUBLE_EQ(Confidence(2, 0), 0.8);
  // 1 - 2 * 0.1 - 0.3 = 0.5.
  EXPECT_DOUBLE_EQ(Confidence(2, 1), 0.5);
  // 1 - 9 * 0.1 = 0.1, and 0.05 is the floor.
  EXPECT_NEAR(Confidence(9, 0), 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(Confidence(10, 0), 0.05);
  EXPECT_DOUBLE_EQ(Confidence(2, 10), 0.05);
}

TEST(ModelInputsTest, KeepsOrderAndCountsDefaults) {
  ModelInputs<Input, 3> inputs;
  inputs.Add(Input::kB, v1::INPUT_SOURCE_DEFAULT);
  inputs.Add(Input::kA, v1::INPUT_SOURCE_MEASURED);
  inputs.Add(Input::kC, v1::INPUT_SOURCE_OVERRIDDEN);
  inputs.Add(Input::kA, v1::INPUT_SOURCE_DEFAULT);  // beyond 3: dropped
  ASSERT_EQ(inputs.size(), 3u);
  std::vector<Input> order;
  for (const auto& e : inputs) order.push_back(e.id);
  EXPECT_EQ(order, (std::vector<Input>{Input::kB, Input::kA, Input::kC}));
  EXPECT_EQ(inputs.Defaults(), 1);
  EXPECT_EQ((ModelInputs<Input, 3>().Defaults()), 0);
  // Not applicable is no default.
  ModelInputs<Input, 3> na;
  na.Add(Input::kA, v1::INPUT_SOURCE_NOT_APPLICABLE);
  EXPECT_EQ(na.Defaults(), 0);
}

TEST(ModelInputsTest, FindNotApplicable) {
  v1::HostSnapshot s;
  EXPECT_EQ(FindNotApplicable(s, "trie"), nullptr);
  s.add_not_applicable()->set_input("stackdepot.pools");
  s.add_not_applicable()->set_input("trie");
  ASSERT_NE(FindNotApplicable(s, "trie"), nullptr);
  EXPECT_EQ(FindNotApplicable(s, "trie")->input(), "trie");
  EXPECT_EQ(FindNotApplicable(s, "tri"), nullptr);
  // Unknown inputs are not "not applicable".
  s.add_unknown()->set_input("kernel.release");
  EXPECT_EQ(FindNotApplicable(s, "kernel.release"), nullptr);
}

}  // namespace
}  // namespace tracehealth
