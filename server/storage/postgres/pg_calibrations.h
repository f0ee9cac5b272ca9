// The PostgreSQL store's calibrations table: CalibrationStore's two
// operations as SQL on a connection.
//
// Thread safety: the functions use only the connection passed in, which
// the caller serializes.
#ifndef TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_CALIBRATIONS_H_
#define TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_CALIBRATIONS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "server/storage/calibration_store.h"
#include "server/storage/postgres/pg_connection.h"

namespace tracehealth::server {

// Several replicas storing the same calibration store it once (the primary
// key decides).
absl::StatusOr<bool> PgPutCalibration(PgConnection& conn,
                                      const CalibrationRow& row);
absl::StatusOr<std::vector<CalibrationRow>> PgListCalibrations(
    PgConnection& conn);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_CALIBRATIONS_H_
