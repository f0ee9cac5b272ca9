// Plain-text tables with aligned columns for tracehealthctl. Cells hold text
// from hosts and the server (ids, labels, summaries): each is escaped
// (common/escape.h), so that a cell cannot break the table into lines of
// its own or send terminal control sequences.
#ifndef TRACEHEALTH_TOOLS_TRACEHEALTHCTL_TABLE_H_
#define TRACEHEALTH_TOOLS_TRACEHEALTHCTL_TABLE_H_

#include <ostream>
#include <string>
#include <vector>

namespace tracehealth::server {

class Table {
 public:
  explicit Table(std::vector<std::string> header)
      : header_(std::move(header)) {}
  void AddRow(std::vector<std::string> row);
  // Columns padded to their widest cell, two spaces apart; the last column
  // is not padded.
  void Print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_TOOLS_TRACEHEALTHCTL_TABLE_H_
