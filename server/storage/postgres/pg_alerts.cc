#include "server/storage/postgres/pg_alerts.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "server/storage/labels_json.h"

namespace tracehealth::server {
namespace {

constexpr char kColumns[] =
    "rule, host_id, state, severity, labels_json, annotations_json, value, "
    "active_since_ns, fired_at_ns, resolved_at_ns";

AlertRow ToRow(const PgResult& r, int i) {
  AlertRow a;
  a.rule = r.Text(i, 0);
  a.host_id = r.Text(i, 1);
  a.state = static_cast<int>(r.Int(i, 2));
  a.severity = r.Text(i, 3);
  a.labels = JsonToMap(r.Text(i, 4));
  a.annotations = JsonToMap(r.Text(i, 5));
  a.value = r.Double(i, 6);
  a.active_since_ns = r.Int(i, 7);
  if (!r.IsNull(i, 8)) a.fired_at_ns = r.Int(i, 8);
  if (!r.IsNull(i, 9)) a.resolved_at_ns = r.Int(i, 9);
  return a;
}

absl::StatusOr<std::optional<AlertRow>> Current(PgConnection& conn,
                                                const std::string& rule,
                                                const std::string& host) {
  TH_ASSIGN_OR_RETURN(
      PgResult r,
      conn.Exec(absl::StrCat("SELECT ", kColumns,
                             " FROM alerts WHERE rule = $1 AND host_id = $2 "
                             "ORDER BY active_since_ns DESC LIMIT 1"),
                PgParams().Text(rule).Text(host)));
  if (r.rows() == 0) return std::optional<AlertRow>();
  return std::optional<AlertRow>(ToRow(r, 0));
}

absl::StatusOr<TransitionResult> TransitionLocked(
    PgConnection& conn, const std::optional<AlertEpisode>& expected,
    const AlertRow& next) {
  // hashtextextended: a 64-bit key; two pairs sharing one only wait for
  // each other.
  TH_RETURN_IF_ERROR(
      conn.Exec("SELECT pg_advisory_xact_lock(hashtextextended($1 || '/' || "
                "$2, 0))",
                PgParams().Text(next.rule).Text(next.host_id))
          .status());
  TransitionResult result;
  TH_ASSIGN_OR_RETURN(result.current, Current(conn, next.rule, next.host_id));
  if (!IsExpectedEpisode(expected, result.current) ||
      !IsAllowedTransition(result.current, next)) {
    return result;
  }
  result.applied = true;
  if (next.state != 0) {
    TH_RETURN_IF_ERROR(PgPutAlert(conn, next));
    result.current = next;
    return result;
  }
  if (result.current.has_value()) {
    TH_RETURN_IF_ERROR(
        conn.Exec("DELETE FROM alerts WHERE rule = $1 AND host_id = $2 AND "
                  "active_since_ns = $3",
                  PgParams()
                      .Text(next.rule)
                      .Text(next.host_id)
                      .Int(result.current->active_since_ns))
            .status());
  }
  TH_ASSIGN_OR_RETURN(result.current, Current(conn, next.rule, next.host_id));
  return result;
}

}  // namespace

absl::Status PgPutAlert(PgConnection& conn, const AlertRow& a) {
  PgParams p;
  p.Text(a.rule).Text(a.host_id).Int(a.state).Text(a.severity);
  p.Text(MapToJson(a.labels)).Text(MapToJson(a.annotations)).Double(a.value);
  p.Int(a.active_since_ns).OptInt(a.fired_at_ns).OptInt(a.resolved_at_ns);
  return conn
      .Exec(absl::StrCat(
                "INSERT INTO alerts (", kColumns,
                ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON "
                "CONFLICT (rule, host_id, active_since_ns) DO UPDATE SET "
                "state = EXCLUDED.state, severity = EXCLUDED.severity, "
                "labels_json = EXCLUDED.labels_json, annotations_json = "
                "EXCLUDED.annotations_json, value = EXCLUDED.value, "
                "fired_at_ns = EXCLUDED.fired_at_ns, resolved_at_ns = "
                "EXCLUDED.resolved_at_ns"),
            p)
      .status();
}

absl::StatusOr<std::vector<AlertRow>> PgListAlerts(PgConnection& conn,
                                                   const AlertFilter& filter) {
  std::vector<int64_t> states(filter.states.begin(), filter.states.end());
  if (states.empty()) states = {1, 2};  // pending, firing
  PgParams p;
  p.Text(PgArray(states)).Int(filter.limit == 0 ? 1000 : filter.limit);
  if (!filter.host_id.empty()) p.Text(filter.host_id);
  TH_ASSIGN_OR_RETURN(
      PgResult r,
      conn.Exec(absl::StrCat(
                    "SELECT ", kColumns,
                    " FROM alerts WHERE state = ANY($1::integer[])",
                    filter.host_id.empty() ? "" : " AND host_id = $3",
                    " ORDER BY active_since_ns DESC, rule, host_id LIMIT $2"),
                p));
  std::vector<AlertRow> out;
  out.reserve(r.rows());
  for (int i = 0; i < r.rows(); ++i) out.push_back(ToRow(r, i));
  return out;
}

absl::StatusOr<TransitionResult> PgTransitionAlert(
    PgConnection& conn, const std::optional<AlertEpisode>& expected,
    const AlertRow& next) {
  TH_RETURN_IF_ERROR(conn.Run("BEGIN"));
  absl::StatusOr<TransitionResult> result =
      TransitionLocked(conn, expected, next);
  if (!result.ok()) {
    (void)conn.Run("ROLLBACK");
    return result.status();
  }
  TH_RETURN_IF_ERROR(conn.Run("COMMIT"));
  return result;
}

}  // namespace tracehealth::server
