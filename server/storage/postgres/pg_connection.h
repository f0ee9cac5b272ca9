// A libpq connection, its results and query parameters, and the error
// mapping every part of the PostgreSQL backend shares.
//
// Parameters travel in binary for bytea and in text otherwise; results are
// read in text (bytea columns in binary, see PgResult). Arrays are built
// with PgArray and passed as one text parameter ('{"a","b"}').
//
// Thread safety: a PgConnection is used by one thread at a time (its owner
// serializes calls); PgResult is a plain value.
#ifndef TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_CONNECTION_H_
#define TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_CONNECTION_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

namespace tracehealth::server {

// The DSN without secrets, for messages: its host, port, dbname and user
// (libpq's keywords; a password is never shown). "(unparsable DSN)" when
// libpq cannot parse it.
std::string DescribeDsn(const std::string& dsn);

class PgParams {
 public:
  PgParams& Text(std::string v);
  PgParams& Int(int64_t v);
  PgParams& Double(double v);
  PgParams& OptInt(const std::optional<int64_t>& v);
  PgParams& Bytes(std::string v);  // bytea, sent in binary
  PgParams& Null();

  int size() const { return static_cast<int>(values_.size()); }
  const char* const* values() const { return pointers_.data(); }
  const int* lengths() const { return lengths_.data(); }
  const int* formats() const { return formats_.data(); }

 private:
  PgParams& Add(std::optional<std::string> v, int format);
  std::vector<std::optional<std::string>> values_;
  std::vector<const char*> pointers_;
  std::vector<int> lengths_;
  std::vector<int> formats_;
};

// A text array literal of `items`, each quoted: '{"a","b\"c"}'.
std::string PgArray(const std::vector<std::string>& items);
std::string PgArray(const std::vector<int64_t>& items);

class PgResult {
 public:
  explicit PgResult(PGresult* r);
  int rows() const;
  bool IsNull(int row, int col) const;
  std::string Text(int row, int col) const;
  int64_t Int(int row, int col) const;
  double Double(int row, int col) const;  // a text column
  double Float8(int row, int col) const;  // a binary double precision column
  // Rows changed by an INSERT/UPDATE/DELETE.
  int64_t affected() const;

 private:
  std::shared_ptr<PGresult> r_;
};

class PgConnection {
 public:
  struct Options {
    absl::Duration connect_timeout = absl::Seconds(5);
    // Set as the session's lock_timeout and statement_timeout (0: none).
    absl::Duration lock_timeout = absl::Seconds(10);
    absl::Duration statement_timeout = absl::ZeroDuration();
  };
  // Connects to `dsn` (a libpq connection string or URI; a multi-host DSN
  // with target_session_attrs=read-write reaches the primary). The DSN's
  // settings win over the defaults of `options`. Errors: Unavailable, with
  // DescribeDsn(dsn) and libpq's message.
  static absl::StatusOr<std::unique_ptr<PgConnection>> Connect(
      const std::string& dsn, const Options& options);
  static absl::StatusOr<std::unique_ptr<PgConnection>> Connect(
      const std::string& dsn) {
    return Connect(dsn, Options());
  }
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs one statement. `binary_result` reads every column in binary (for
  // bytea results: PgResult::Text then gives the raw bytes). Errors: see
  // PgError.
  absl::StatusOr<PgResult> Exec(const std::string& sql,
                                const PgParams& params = PgParams(),
                                bool binary_result = false);
  // Runs statements without parameters or results ("BEGIN", DDL; several
  // separated by ';').
  absl::Status Run(const std::string& sql);
  // COPY ... FROM STDIN with `data` in the statement's format.
  absl::Status CopyIn(const std::string& copy_sql, absl::string_view data);
  // Runs `sql` in single-row mode, calling `row` per row (binary columns
  // when `binary_result`), so that a large result is never held whole.
  absl::Status ExecStreaming(const std::string& sql, const PgParams& params,
                             bool binary_result,
                             const std::function<void(const PgResult&)>& row);

  // False once the connection broke; the owner reconnects.
  bool healthy() const;
  PGconn* raw() { return conn_; }

 private:
  explicit PgConnection(PGconn* conn) : conn_(conn) {}
  PGconn* const conn_;
};

// The error of `r` (or of the connection when `r` is null) as a Status:
// "<what>: <message> (SQLSTATE xxxxx)". Unavailable when the connection is
// gone or the server is shutting down or read-only (a failover), Aborted for
// serialization failures, deadlocks and lock timeouts, AlreadyExists for
// unique violations, ResourceExhausted for a full disk, Internal otherwise.
absl::Status PgError(PGconn* conn, const PGresult* r, absl::string_view what);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_CONNECTION_H_
