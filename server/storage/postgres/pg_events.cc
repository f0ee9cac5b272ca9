#include "server/storage/postgres/pg_events.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace tracehealth::server {
namespace {

constexpr char kColumns[] =
    "host_id, boot_id, kmsg_seq, logged_at_ns, kind, model, predicted, "
    "received_at_ns, event";

// A row of a binary result (every integer column is bigint).
EventRow ToRow(const PgResult& r, int i) {
  EventRow e;
  e.host_id = r.Text(i, 0);
  e.boot_id = r.Text(i, 1);
  e.kmsg_seq = static_cast<uint64_t>(r.Int(i, 2));
  e.logged_at_ns = r.Int(i, 3);
  e.kind = static_cast<int>(r.Int(i, 4));
  e.model = static_cast<int>(r.Int(i, 5));
  e.predicted = static_cast<int>(r.Int(i, 6));
  e.received_at_ns = r.Int(i, 7);
  e.blob = r.Text(i, 8);
  return e;
}

absl::StatusOr<std::vector<bool>> InsertAll(PgConnection& conn,
                                            absl::Span<const EventRow> rows) {
  const std::string sql = absl::StrCat(
      "INSERT INTO events (", kColumns,
      ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (host_id, "
      "boot_id, kmsg_seq) DO NOTHING");
  std::vector<bool> stored;
  stored.reserve(rows.size());
  for (const EventRow& e : rows) {
    PgParams p;
    // bigint is signed: a sequence number past 2^63 is kept as its
    // two's-complement bit pattern and read back the same.
    p.Text(e.host_id).Text(e.boot_id).Int(static_cast<int64_t>(e.kmsg_seq));
    p.Int(e.logged_at_ns).Int(e.kind).Int(e.model).Int(e.predicted);
    p.Int(e.received_at_ns).Bytes(e.blob);
    TH_ASSIGN_OR_RETURN(PgResult r, conn.Exec(sql, p));
    stored.push_back(r.affected() == 1);
  }
  return stored;
}

}  // namespace

absl::StatusOr<std::vector<bool>> PgPutEvents(PgConnection& conn,
                                              absl::Span<const EventRow> rows) {
  if (rows.empty()) return std::vector<bool>();
  TH_RETURN_IF_ERROR(conn.Run("BEGIN"));
  absl::StatusOr<std::vector<bool>> stored = InsertAll(conn, rows);
  absl::Status st = stored.status();
  if (st.ok()) st = conn.Run("COMMIT");
  if (!st.ok()) {
    (void)conn.Run("ROLLBACK");
    return st;
  }
  return stored;
}

absl::StatusOr<std::vector<EventRow>> PgListEvents(PgConnection& conn,
                                                   const EventFilter& filter) {
  PgParams p;
  p.Int(filter.from_ns)
      .Int(filter.to_ns)
      .Int(filter.limit == 0 ? 100 : filter.limit);
  std::string where = "logged_at_ns >= $1 AND logged_at_ns < $2";
  int next = 4;
  if (!filter.host_id.empty()) {
    absl::StrAppend(&where, " AND host_id = $", next++);
    p.Text(filter.host_id);
  }
  if (filter.predicted != 0) {
    absl::StrAppend(&where, " AND predicted = $", next++);
    p.Int(filter.predicted);
  }
  TH_ASSIGN_OR_RETURN(
      PgResult r,
      conn.Exec(absl::StrCat("SELECT ", kColumns, " FROM events WHERE ", where,
                             " ORDER BY logged_at_ns DESC, host_id, boot_id, "
                             "kmsg_seq LIMIT $3"),
                p, /*binary_result=*/true));
  std::vector<EventRow> out;
  out.reserve(r.rows());
  for (int i = 0; i < r.rows(); ++i) out.push_back(ToRow(r, i));
  return out;
}

}  // namespace tracehealth::server
