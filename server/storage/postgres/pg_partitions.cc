#include "server/storage/postgres/pg_partitions.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace tracehealth::server {
namespace {

// The two numbers of "FOR VALUES FROM ('a') TO ('b')" (quoted or not).
bool ParseBound(const std::string& text, int64_t* from, int64_t* to) {
  std::vector<int64_t> nums;
  std::string cur;
  for (char c : text + " ") {
    if (absl::ascii_isdigit(static_cast<unsigned char>(c)) ||
        (c == '-' && cur.empty())) {
      cur += c;
    } else if (!cur.empty()) {
      int64_t v = 0;
      if (cur != "-" && absl::SimpleAtoi(cur, &v)) nums.push_back(v);
      cur.clear();
    }
  }
  if (nums.size() != 2) return false;
  *from = nums[0];
  *to = nums[1];
  return true;
}

}  // namespace

absl::StatusOr<std::vector<ReportPartition>> ListPartitions(
    PgConnection& conn) {
  TH_ASSIGN_OR_RETURN(
      PgResult r,
      conn.Exec("SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM "
                "pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE "
                "i.inhparent = 'reports'::regclass"));
  std::vector<ReportPartition> out;
  for (int i = 0; i < r.rows(); ++i) {
    ReportPartition p;
    p.name = r.Text(i, 0);
    if (!ParseBound(r.Text(i, 1), &p.from_ns, &p.to_ns)) continue;  // DEFAULT
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(),
            [](const ReportPartition& a, const ReportPartition& b) {
              return a.from_ns < b.from_ns;
            });
  return out;
}

absl::StatusOr<int64_t> EnsurePartitions(PgConnection& conn, int64_t from_ns,
                                         int64_t to_ns, absl::Duration span) {
  const int64_t span_ns = absl::ToInt64Nanoseconds(span);
  TH_ASSIGN_OR_RETURN(std::vector<ReportPartition> have, ListPartitions(conn));
  auto covered = [&have](int64_t t) {
    for (const ReportPartition& p : have) {
      if (p.from_ns <= t && t < p.to_ns) return true;
    }
    return false;
  };
  int64_t start = from_ns - ((from_ns % span_ns) + span_ns) % span_ns;
  for (; start < to_ns; start += span_ns) {
    if (covered(start)) continue;
    const std::string name = absl::StrCat("reports_", start / 1000000000);
    absl::Status st =
        conn.Run(absl::StrCat("CREATE TABLE IF NOT EXISTS ", name,
                              " PARTITION OF reports FOR VALUES "
                              "FROM (",
                              start, ") TO (", start + span_ns, ")"));
    // Another replica's partition of the same range (42P07, 42P17 for an
    // overlap) or default rows in the range (23514): rows keep going to the
    // partition that exists, or to reports_default.
    if (!st.ok() && !absl::IsInternal(st)) return st;
  }
  return start;
}

}  // namespace tracehealth::server
