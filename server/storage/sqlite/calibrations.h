// The SQLite store's calibrations table: CalibrationStore's two operations
// as SQL on a connection.
//
// Thread safety: the functions use only the connection passed in, which
// the caller serializes.
#ifndef TRACEHEALTH_SERVER_STORAGE_SQLITE_CALIBRATIONS_H_
#define TRACEHEALTH_SERVER_STORAGE_SQLITE_CALIBRATIONS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "server/storage/calibration_store.h"

struct sqlite3;

namespace tracehealth::server {

absl::StatusOr<bool> PutCalibrationRow(sqlite3* db, const CalibrationRow& row);
absl::StatusOr<std::vector<CalibrationRow>> ListCalibrationRows(sqlite3* db);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_SQLITE_CALIBRATIONS_H_
