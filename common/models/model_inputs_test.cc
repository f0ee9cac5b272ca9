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
}

}  // namespace
}  // namespace tracehealth
