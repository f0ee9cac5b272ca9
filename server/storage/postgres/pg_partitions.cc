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

absl::StatusOr<int64_t> DropPartitionsBefore(PgConnection& c,
                                             int64_t cutoff_ns) {
  PgConnection* const conn = &c;
  TH_ASSIGN_OR_RETURN(std::vector<ReportPartition> parts,
                      ListPartitions(*conn));
  int64_t dropped = 0;
  for (const ReportPartition& p : parts) {
    if (p.to_ns > cutoff_ns) break;
    // Detached, its hosts' newest reports are copied back into reports,
    // where no range partition covers them any more: reports_default.
    TH_RETURN_IF_ERROR(conn->Run("BEGIN"));
    auto fail = [conn](absl::Status st) {
      (void)conn->Run("ROLLBACK");
      return st;
    };
    absl::StatusOr<PgResult> rows =
        conn->Exec(absl::StrCat("SELECT count(*) FROM ", p.name));
    absl::Status st = rows.status();
    if (st.ok()) {
      st = conn->Run(
          absl::StrCat("ALTER TABLE reports DETACH PARTITION ", p.name));
    }
    absl::StatusOr<PgResult> kept;
    if (st.ok()) {
      // ... and the full reports of the heartbeats kept.
      kept = conn->Exec(absl::StrCat(
          "INSERT INTO reports SELECT r.* FROM ", p.name,
          " r WHERE EXISTS (SELECT 1 FROM hosts h WHERE h.host_id = "
          "r.host_id AND h.latest_seq = r.seq) OR EXISTS (SELECT 1 FROM "
          "heartbeats b WHERE b.host_id = r.host_id AND b.base_seq = r.seq)"));
      st = kept.status();
    }
    if (st.ok()) st = conn->Run(absl::StrCat("DROP TABLE ", p.name));
    if (st.ok()) st = conn->Run("COMMIT");
    if (!st.ok()) return fail(st);
    dropped += rows->Int(0, 0) - kept->affected();
  }
  return dropped;
}

}  // namespace tracehealth::server
