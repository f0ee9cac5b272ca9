#include "server/storage/postgres/pg_calibrations.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace tracehealth::server {
namespace {

constexpr char kColumns[] =
    "host_id, hardware_class, measured_at_ns, c_visit_seconds, "
    "fixed_seconds, received_at_ns, calibration";

}  // namespace

absl::StatusOr<bool> PgPutCalibration(PgConnection& conn,
                                      const CalibrationRow& row) {
  PgParams p;
  p.Text(row.host_id).Text(row.hardware_class).Int(row.measured_at_ns);
  p.Double(row.c_visit_seconds).Double(row.fixed_seconds);
  p.Int(row.received_at_ns).Bytes(row.blob);
  TH_ASSIGN_OR_RETURN(
      PgResult r,
      conn.Exec(absl::StrCat("INSERT INTO calibrations (", kColumns,
                             ") VALUES ($1, $2, $3, $4, $5, $6, $7) ON "
                             "CONFLICT (host_id, measured_at_ns) DO NOTHING"),
                p));
  return r.affected() == 1;
}

absl::StatusOr<std::vector<CalibrationRow>> PgListCalibrations(
    PgConnection& conn) {
  TH_ASSIGN_OR_RETURN(
      PgResult r,
      conn.Exec(absl::StrCat("SELECT ", kColumns,
                             " FROM calibrations ORDER BY measured_at_ns, "
                             "host_id"),
                PgParams(), /*binary_result=*/true));
  std::vector<CalibrationRow> out;
  out.reserve(r.rows());
  for (int i = 0; i < r.rows(); ++i) {
    CalibrationRow c;
    c.host_id = r.Text(i, 0);
    c.hardware_class = r.Text(i, 1);
    c.measured_at_ns = r.Int(i, 2);
    c.c_visit_seconds = r.Float8(i, 3);
    c.fixed_seconds = r.Float8(i, 4);
    c.received_at_ns = r.Int(i, 5);
    c.blob = r.Text(i, 6);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace tracehealth::server
