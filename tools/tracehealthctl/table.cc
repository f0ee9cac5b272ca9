#include "tools/tracehealthctl/table.h"

#include <algorithm>
#include <utility>

#include "common/escape.h"

namespace tracehealth::server {

void Table::AddRow(std::vector<std::string> row) {
  for (std::string& cell : row) cell = EscapeText(cell);
  rows_.push_back(std::move(row));
}

void Table::Print(std::ostream& out) const {
  std::vector<size_t> width(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  };
  measure(header_);
  for (const auto& r : rows_) measure(r);
  auto print = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      out << row[i];
      if (i + 1 < row.size())
        out << std::string(width[i] - row[i].size() + 2, ' ');
    }
    out << "\n";
  };
  print(header_);
  for (const auto& r : rows_) print(r);
}

}  // namespace tracehealth::server
