#include "server/metrics/text_exposition.h"

#include "gtest/gtest.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace tracehealth::server {
namespace {

TEST(TextExpositionTest, EveryCollectableInOrderWithLabelValuesEscaped) {
  auto first = std::make_shared<prometheus::Registry>();
  prometheus::BuildCounter()
      .Name("a_total")
      .Help("A.")
      .Register(*first)
      .Add({{"host", "x\"y\\z\nw"}})
      .Increment(3);
  auto second = std::make_shared<prometheus::Registry>();
  prometheus::BuildGauge().Name("b").Help("B.").Register(*second).Add({}).Set(
      0.5);
  // The label value: x"y\z<newline>w, written x\"y\\z\nw.
  EXPECT_EQ(SerializeMetrics({first, nullptr, second}),
            "# HELP a_total A.\n"
            "# TYPE a_total counter\n"
            "a_total{host=\"x\\\"y\\\\z\\nw\"} 3\n"
            "# HELP b B.\n"
            "# TYPE b gauge\n"
            "b 0.5\n");
  EXPECT_EQ(SerializeMetrics({}), "");
}

}  // namespace
}  // namespace tracehealth::server
