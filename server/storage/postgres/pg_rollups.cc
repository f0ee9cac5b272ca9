#include "server/storage/postgres/pg_rollups.h"

#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/status.h"
#include "server/storage/heartbeat_chunk.h"
#include "server/storage/history_window.h"

namespace tracehealth::server {
namespace {

constexpr char kColumns[] =
    "host_id, hour_start_ns, reports, first_seq, last_seq, threads_min, "
    "threads_max, threads_last, attach_latency_seconds_min, "
    "attach_latency_seconds_max, attach_latency_seconds_last, "
    "pool_budget_ratio_min, pool_budget_ratio_max, pool_budget_ratio_last, "
    "purge_seconds_min, purge_seconds_max, purge_seconds_last, "
    "worst_risk_max, worst_risk_last";
constexpr int kColumnCount = 19;

// A column value as array text: "" for absent (NULLIF makes it NULL).
std::string Cell(const std::optional<double>& v) {
  return v.has_value() ? absl::StrFormat("%.17g", *v) : "";
}
std::string Cell(const std::optional<uint64_t>& v) {
  return v.has_value() ? absl::StrCat(*v) : "";
}

std::optional<double> OptDouble(const PgResult& r, int row, int col) {
  if (r.IsNull(row, col)) return std::nullopt;
  return r.Double(row, col);
}
std::optional<uint64_t> OptUint(const PgResult& r, int row, int col) {
  if (r.IsNull(row, col)) return std::nullopt;
  return static_cast<uint64_t>(r.Int(row, col));
}
RollupRange<double> DoubleRange(const PgResult& r, int row, int first) {
  return {OptDouble(r, row, first), OptDouble(r, row, first + 1),
          OptDouble(r, row, first + 2)};
}

absl::StatusOr<std::optional<int64_t>> OptionalInt(PgConnection& conn,
                                                   const std::string& sql) {
  TH_ASSIGN_OR_RETURN(PgResult r, conn.Exec(sql));
  if (r.rows() == 0 || r.IsNull(0, 0)) return std::nullopt;
  return r.Int(0, 0);
}

}  // namespace

absl::StatusOr<std::optional<int64_t>> PgRollupWatermark(PgConnection& conn) {
  return OptionalInt(conn, "SELECT rolled_through_ns FROM rollup_state");
}

absl::StatusOr<std::optional<int64_t>> PgOldestObservation(PgConnection& conn) {
  return OptionalInt(conn,
                     "SELECT least((SELECT min(observed_at_ns) FROM reports), "
                     "(SELECT min(first_observed_ns) FROM heartbeats))");
}

absl::Status PgFoldStoredHours(PgConnection& conn, int64_t from_ns,
                               int64_t to_ns, RollupFolder* folder) {
  // Every column binary.
  TH_RETURN_IF_ERROR(conn.ExecStreaming(
      "SELECT host_id, seq, observed_at_ns, received_at_ns, "
      "worst_risk::bigint, attach_latency_seconds, pool_budget_ratio, "
      "purge_seconds, report FROM reports WHERE observed_at_ns >= $1 AND "
      "observed_at_ns < $2 AND received_at_ns >= $3",
      // A report is received at most an hour before it was observed
      // (ValidateReport's clock skew): the partitions received before
      // that are not read.
      PgParams().Int(from_ns).Int(to_ns).Int(from_ns - kRollupHourNs),
      /*binary_result=*/true, [folder](const PgResult& x) {
        ReportRow r;
        r.host_id = x.Text(0, 0);
        r.seq = static_cast<uint64_t>(x.Int(0, 1));
        r.observed_at_ns = x.Int(0, 2);
        r.received_at_ns = x.Int(0, 3);
        r.worst_risk = static_cast<int>(x.Int(0, 4));
        if (!x.IsNull(0, 5)) r.attach_latency_seconds = x.Float8(0, 5);
        if (!x.IsNull(0, 6)) r.pool_budget_ratio = x.Float8(0, 6);
        if (!x.IsNull(0, 7)) r.purge_seconds = x.Float8(0, 7);
        r.threads = ThreadsOfReport(x.Text(0, 8));
        folder->Add(r);
      }));
  // A chunk's beats lie within ChunkEncoder::kMaxSpanNs of its first, so
  // the chunks of [from, to) start in [from - span, to): an index range.
  // Chunks written before that bound (schema 6: heartbeat_spans) started at
  // or before unbounded_through_ns and are read by the range below it.
  TH_ASSIGN_OR_RETURN(
      std::optional<int64_t> unbounded,
      OptionalInt(conn, "SELECT unbounded_through_ns FROM heartbeat_spans"));
  const std::vector<std::pair<int64_t, int64_t>> ranges =
      ChunkStartRanges(from_ns, to_ns, unbounded);
  absl::Status bad;
  std::vector<HistoryEntry> entries;
  for (const auto& [lo, hi] : ranges) {
    TH_RETURN_IF_ERROR(conn.ExecStreaming(
        "SELECT h.host_id, h.base_seq, h.chunk, r.worst_risk::bigint FROM "
        "heartbeats h LEFT JOIN reports r ON r.host_id = h.host_id AND "
        "r.seq = h.base_seq WHERE h.first_observed_ns >= $3 AND "
        "h.first_observed_ns <= $4 AND h.last_observed_ns >= $1 AND "
        "h.first_observed_ns < $2",
        PgParams().Int(from_ns).Int(to_ns).Int(lo).Int(hi),
        /*binary_result=*/true, [&](const PgResult& x) {
          const std::string host_id = x.Text(0, 0);
          absl::StatusOr<std::vector<Beat>> beats = DecodeChunk(x.Text(0, 2));
          if (!beats.ok()) {
            if (bad.ok()) {
              bad = Annotate(beats.status(),
                             absl::StrCat("heartbeats of ", host_id));
            }
            return;
          }
          entries.clear();
          AddBeatEntries(host_id, *beats, x.Int(0, 1), from_ns, to_ns,
                         &entries);
          // A heartbeat's risk is its full report's (risks count exactly in
          // the material content); 0 when the full report is gone.
          const int risk = x.IsNull(0, 3) ? 0 : static_cast<int>(x.Int(0, 3));
          for (HistoryEntry& e : entries) {
            e.row.worst_risk = risk;
            folder->Add(e.row);
          }
        }));
  }
  return bad;
}

absl::Status PgWriteRollups(PgConnection& conn, std::optional<int64_t> expected,
                            int64_t rolled_through_ns,
                            const std::vector<RollupRow>& rows) {
  TH_RETURN_IF_ERROR(conn.Run("BEGIN"));
  auto body = [&]() -> absl::Status {
    TH_ASSIGN_OR_RETURN(
        PgResult mark,
        conn.Exec("SELECT rolled_through_ns FROM rollup_state FOR UPDATE"));
    std::optional<int64_t> now;
    if (mark.rows() > 0) now = mark.Int(0, 0);
    if (now != expected) {
      return absl::AbortedError(
          "the rollup watermark moved during the pass (another pass ran)");
    }
    if (!rows.empty()) {
      std::vector<std::vector<std::string>> cols(kColumnCount);
      for (const RollupRow& r : rows) {
        const std::string cells[kColumnCount] = {
            r.host_id,
            absl::StrCat(r.hour_start_ns),
            absl::StrCat(r.reports),
            absl::StrCat(r.first_seq),
            absl::StrCat(r.last_seq),
            Cell(r.threads.min),
            Cell(r.threads.max),
            Cell(r.threads.last),
            Cell(r.attach_latency_seconds.min),
            Cell(r.attach_latency_seconds.max),
            Cell(r.attach_latency_seconds.last),
            Cell(r.pool_budget_ratio.min),
            Cell(r.pool_budget_ratio.max),
            Cell(r.pool_budget_ratio.last),
            Cell(r.purge_seconds.min),
            Cell(r.purge_seconds.max),
            Cell(r.purge_seconds.last),
            absl::StrCat(r.max_worst_risk),
            absl::StrCat(r.last_worst_risk)};
        for (int c = 0; c < kColumnCount; ++c) cols[c].push_back(cells[c]);
      }
      PgParams params;
      for (const auto& c : cols) params.Text(PgArray(c));
      // Columns 1: text; 2-5, 18-19: not null; 6-8: bigint; 9-17: double.
      std::string select = "u.c1";
      for (int c = 2; c <= kColumnCount; ++c) {
        const char* type = (c >= 9 && c <= 17) ? "float8" : "bigint";
        if (c >= 6 && c <= 17) {
          absl::StrAppend(&select, ", NULLIF(u.c", c, ", '')::", type);
        } else {
          absl::StrAppend(&select, ", u.c", c, "::bigint");
        }
      }
      std::string from = "unnest($1::text[]";
      std::string names = "c1";
      for (int c = 2; c <= kColumnCount; ++c) {
        absl::StrAppend(&from, ", $", c, "::text[]");
        absl::StrAppend(&names, ", c", c);
      }
      std::string set;
      for (absl::string_view c : absl::StrSplit(kColumns, ", ")) {
        if (c == "host_id" || c == "hour_start_ns") continue;
        absl::StrAppend(&set, set.empty() ? "" : ", ", c, " = EXCLUDED.", c);
      }
      TH_RETURN_IF_ERROR(
          conn.Exec(absl::StrCat("INSERT INTO rollups (", kColumns, ") SELECT ",
                                 select, " FROM ", from, ") AS u(", names,
                                 ") ON CONFLICT (host_id, hour_start_ns) DO "
                                 "UPDATE SET ",
                                 set),
                    params)
              .status());
    }
    TH_RETURN_IF_ERROR(
        conn.Exec("INSERT INTO rollup_state (id, rolled_through_ns) VALUES "
                  "(1, $1) ON CONFLICT (id) DO UPDATE SET rolled_through_ns = "
                  "EXCLUDED.rolled_through_ns",
                  PgParams().Int(rolled_through_ns))
            .status());
    return conn.Run("COMMIT");
  };
  absl::Status st = body();
  if (!st.ok()) {
    (void)conn.Run("ROLLBACK");
    // Two first passes at once: the second's insert of the watermark row
    // conflicts with the first's.
    if (st.code() == absl::StatusCode::kAlreadyExists) {
      return absl::AbortedError(st.message());
    }
  }
  return st;
}

absl::StatusOr<std::vector<RollupRow>> PgReadRollups(PgConnection& conn,
                                                     const std::string& host_id,
                                                     int64_t from_ns,
                                                     int64_t to_ns) {
  TH_ASSIGN_OR_RETURN(
      PgResult r,
      conn.Exec(absl::StrCat("SELECT ", kColumns,
                             " FROM rollups WHERE host_id = $1 AND "
                             "hour_start_ns >= $2 AND hour_start_ns < $3 "
                             "ORDER BY hour_start_ns"),
                PgParams().Text(host_id).Int(from_ns).Int(to_ns)));
  std::vector<RollupRow> out;
  out.reserve(r.rows());
  for (int i = 0; i < r.rows(); ++i) {
    RollupRow x;
    x.host_id = r.Text(i, 0);
    x.hour_start_ns = r.Int(i, 1);
    x.reports = r.Int(i, 2);
    x.first_seq = static_cast<uint64_t>(r.Int(i, 3));
    x.last_seq = static_cast<uint64_t>(r.Int(i, 4));
    x.threads = {OptUint(r, i, 5), OptUint(r, i, 6), OptUint(r, i, 7)};
    x.attach_latency_seconds = DoubleRange(r, i, 8);
    x.pool_budget_ratio = DoubleRange(r, i, 11);
    x.purge_seconds = DoubleRange(r, i, 14);
    x.max_worst_risk = static_cast<int>(r.Int(i, 17));
    x.last_worst_risk = static_cast<int>(r.Int(i, 18));
    out.push_back(std::move(x));
  }
  return out;
}

absl::StatusOr<int64_t> PgDeleteRollups(PgConnection& conn,
                                        int64_t hour_before_ns) {
  TH_ASSIGN_OR_RETURN(PgResult r,
                      conn.Exec("DELETE FROM rollups WHERE hour_start_ns < $1",
                                PgParams().Int(hour_before_ns)));
  return r.affected();
}

}  // namespace tracehealth::server
