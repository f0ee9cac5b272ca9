// Helpers for the SQLite backend's tests (tests only).
#ifndef TRACEHEALTH_SERVER_STORAGE_SQLITE_SQLITE_TEST_UTIL_H_
#define TRACEHEALTH_SERVER_STORAGE_SQLITE_SQLITE_TEST_UTIL_H_

#include <cstdint>
#include <string>

namespace tracehealth::server {

// A path for a new database file, in a new temporary directory.
std::string NewDbPath();

// Runs `sql` on the file at `path` through a connection of its own (as an
// operator or another process would); a failure fails the test.
void Sql(const std::string& path, const std::string& sql);

// The integer the one-row, one-column `query` gives on the file at `path`
// (-1 and a failed test when it does not).
int64_t SqlInt(const std::string& path, const std::string& query);

// Size of the file at `path`; -1 when it does not exist.
int64_t FileBytes(const std::string& path);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_SQLITE_SQLITE_TEST_UTIL_H_
