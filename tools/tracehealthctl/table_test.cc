#include "tools/tracehealthctl/table.h"

#include <sstream>

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

TEST(TableTest, AlignsColumns) {
  Table t({"HOST", "RISK", "LATENCY"});
  t.AddRow({"db-000001", "stall", "31.20 s"});
  t.AddRow({"a", "none", "1.0 ms"});
  std::ostringstream out;
  t.Print(out);
  EXPECT_EQ(out.str(),
            "HOST       RISK   LATENCY\n"
            "db-000001  stall  31.20 s\n"
            "a          none   1.0 ms\n");
}

}  // namespace
}  // namespace tracehealth::server
