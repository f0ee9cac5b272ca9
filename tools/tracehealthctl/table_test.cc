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

TEST(TableTest, CellsCannotAddLinesOrControlTheTerminal) {
  Table t({"HOST", "LABEL"});
  t.AddRow({"web\nfake-host  stall", "\x1b[2J\x07x"});
  std::ostringstream out;
  t.Print(out);
  EXPECT_EQ(out.str(), "HOST" + std::string(19, ' ') +
                           "LABEL\n"  // 21-byte cell + 2

                           "web\\nfake-host  stall  \\x1b[2J\\x07x\n");
}

}  // namespace
}  // namespace tracehealth::server
