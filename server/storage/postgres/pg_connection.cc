#include "server/storage/postgres/pg_connection.h"

#include <endian.h>

#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "postgresql/libpq-fe.h"

namespace tracehealth::server {

std::string DescribeDsn(const std::string& dsn) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(dsn.c_str(), &err);
  if (opts == nullptr) {
    if (err != nullptr) PQfreemem(err);
    return "(unparsable DSN)";
  }
  static constexpr const char* kShown[] = {
      "host", "hostaddr", "port", "dbname", "user", "target_session_attrs"};
  std::vector<std::string> parts;
  for (const char* key : kShown) {
    for (PQconninfoOption* o = opts; o->keyword != nullptr; ++o) {
      if (std::strcmp(o->keyword, key) != 0) continue;
      if (o->val != nullptr && o->val[0] != '\0') {
        parts.push_back(absl::StrCat(key, "=", o->val));
      }
    }
  }
  PQconninfoFree(opts);
  return parts.empty() ? "(libpq defaults)" : absl::StrJoin(parts, " ");
}

PgParams& PgParams::Add(std::optional<std::string> v, int format) {
  values_.push_back(std::move(v));
  formats_.push_back(format);
  // values_ may have moved its strings: rebuild every pointer.
  pointers_.clear();
  lengths_.clear();
  for (const std::optional<std::string>& s : values_) {
    pointers_.push_back(s.has_value() ? s->data() : nullptr);
    lengths_.push_back(s.has_value() ? static_cast<int>(s->size()) : 0);
  }
  return *this;
}

PgParams& PgParams::Text(std::string v) { return Add(std::move(v), 0); }
PgParams& PgParams::Int(int64_t v) { return Add(absl::StrCat(v), 0); }
PgParams& PgParams::Double(double v) {
  // Shortest text that reads back as the same double.
  char buf[32];
  snprintf(buf, sizeof(buf), "%.17g", v);
  return Add(std::string(buf), 0);
}
PgParams& PgParams::OptInt(const std::optional<int64_t>& v) {
  return v.has_value() ? Int(*v) : Null();
}
PgParams& PgParams::Bytes(std::string v) { return Add(std::move(v), 1); }
PgParams& PgParams::Null() { return Add(std::nullopt, 0); }

std::string PgArray(const std::vector<std::string>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

std::string PgArray(const std::vector<int64_t>& items) {
  return absl::StrCat("{", absl::StrJoin(items, ","), "}");
}

PgResult::PgResult(PGresult* r) : r_(r, PQclear) {}
int PgResult::rows() const { return PQntuples(r_.get()); }
bool PgResult::IsNull(int row, int col) const {
  return PQgetisnull(r_.get(), row, col) != 0;
}
std::string PgResult::Text(int row, int col) const {
  return std::string(PQgetvalue(r_.get(), row, col),
                     PQgetlength(r_.get(), row, col));
}
int64_t PgResult::Int(int row, int col) const {
  if (PQfformat(r_.get(), col) == 1) {
    // Binary int8 (the only integer type the backend reads in binary).
    uint64_t be = 0;
    std::memcpy(&be, PQgetvalue(r_.get(), row, col), sizeof(be));
    return static_cast<int64_t>(be64toh(be));
  }
  int64_t v = 0;
  (void)absl::SimpleAtoi(PQgetvalue(r_.get(), row, col), &v);
  return v;
}
double PgResult::Double(int row, int col) const {
  double v = 0;
  (void)absl::SimpleAtod(PQgetvalue(r_.get(), row, col), &v);
  return v;
}
double PgResult::Float8(int row, int col) const {
  uint64_t be = 0;
  std::memcpy(&be, PQgetvalue(r_.get(), row, col), sizeof(be));
  const uint64_t bits = be64toh(be);
  double v = 0;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

int64_t PgResult::affected() const {
  int64_t v = 0;
  (void)absl::SimpleAtoi(PQcmdTuples(r_.get()), &v);
  return v;
}

absl::Status PgError(PGconn* conn, const PGresult* r, absl::string_view what) {
  const char* state =
      r != nullptr ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  std::string message = r != nullptr ? PQresultErrorMessage(r) : "";
  if (message.empty() && conn != nullptr) message = PQerrorMessage(conn);
  std::string text(absl::StripTrailingAsciiWhitespace(message));
  const std::string sqlstate = state != nullptr ? state : "";
  if (!sqlstate.empty()) absl::StrAppend(&text, " (SQLSTATE ", sqlstate, ")");
  std::string full = absl::StrCat(what, ": ", text);
  const bool gone = conn == nullptr || PQstatus(conn) != CONNECTION_OK;
  // 08: connection exceptions; 57P: operator intervention (shutdown,
  // crash); 25006: read-only transaction (a demoted primary).
  if (gone || absl::StartsWith(sqlstate, "08") ||
      absl::StartsWith(sqlstate, "57P") || sqlstate == "25006") {
    return absl::UnavailableError(full);
  }
  if (sqlstate == "40001" || sqlstate == "40P01" || sqlstate == "55P03" ||
      sqlstate == "57014") {
    return absl::AbortedError(full);
  }
  if (sqlstate == "23505") return absl::AlreadyExistsError(full);
  if (sqlstate == "53100") return absl::ResourceExhaustedError(full);
  return absl::InternalError(full);
}

absl::StatusOr<std::unique_ptr<PgConnection>> PgConnection::Connect(
    const std::string& dsn, const Options& options) {
  // Defaults first: with expand_dbname the DSN's own settings override them.
  const std::string timeout = absl::StrCat(
      std::max<int64_t>(1, absl::ToInt64Seconds(options.connect_timeout)));
  const char* keys[] = {"connect_timeout",
                        "application_name",
                        "keepalives_idle",
                        "keepalives_interval",
                        "keepalives_count",
                        "dbname",
                        nullptr};
  const char* values[] = {
      timeout.c_str(), "tracehealth-server", "5", "2", "3", dsn.c_str(),
      nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (conn == nullptr) {
    return absl::ResourceExhaustedError("postgres: out of memory");
  }
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string msg(absl::StripTrailingAsciiWhitespace(PQerrorMessage(conn)));
    PQfinish(conn);
    return absl::UnavailableError(absl::StrCat("postgres: cannot connect (",
                                               DescribeDsn(dsn), "): ", msg));
  }
  // Notices (CREATE ... IF NOT EXISTS skipping, and the like) are not
  // errors; libpq would print them on stderr.
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  std::unique_ptr<PgConnection> c(new PgConnection(conn));
  std::string setup = "SET synchronous_commit = on";
  auto ms = [](absl::Duration d) { return absl::ToInt64Milliseconds(d); };
  absl::StrAppend(&setup, "; SET lock_timeout = ", ms(options.lock_timeout),
                  "; SET statement_timeout = ", ms(options.statement_timeout));
  if (absl::Status st = c->Run(setup); !st.ok()) return st;
  return c;
}

PgConnection::~PgConnection() { PQfinish(conn_); }

bool PgConnection::healthy() const { return PQstatus(conn_) == CONNECTION_OK; }

absl::StatusOr<PgResult> PgConnection::Exec(const std::string& sql,
                                            const PgParams& params,
                                            bool binary_result) {
  PGresult* r =
      PQexecParams(conn_, sql.c_str(), params.size(), nullptr, params.values(),
                   params.lengths(), params.formats(), binary_result ? 1 : 0);
  ExecStatusType s = r != nullptr ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
    absl::Status st = PgError(conn_, r, "postgres");
    PQclear(r);
    return st;
  }
  return PgResult(r);
}

absl::Status PgConnection::Run(const std::string& sql) {
  PGresult* r = PQexec(conn_, sql.c_str());
  ExecStatusType s = r != nullptr ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  absl::Status st = s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK
                        ? absl::OkStatus()
                        : PgError(conn_, r, "postgres");
  PQclear(r);
  return st;
}

absl::Status PgConnection::CopyIn(const std::string& copy_sql,
                                  absl::string_view data) {
  PGresult* r = PQexec(conn_, copy_sql.c_str());
  if (r == nullptr || PQresultStatus(r) != PGRES_COPY_IN) {
    absl::Status st = PgError(conn_, r, "postgres COPY");
    PQclear(r);
    return st;
  }
  PQclear(r);
  // libpq buffers; large data goes in pieces so no single call is huge.
  constexpr size_t kChunk = 1 << 20;
  for (size_t off = 0; off < data.size(); off += kChunk) {
    const size_t n = std::min(kChunk, data.size() - off);
    if (PQputCopyData(conn_, data.data() + off, static_cast<int>(n)) != 1) {
      return PgError(conn_, nullptr, "postgres COPY data");
    }
  }
  if (PQputCopyEnd(conn_, nullptr) != 1) {
    return PgError(conn_, nullptr, "postgres COPY end");
  }
  absl::Status st;
  while ((r = PQgetResult(conn_)) != nullptr) {
    if (PQresultStatus(r) != PGRES_COMMAND_OK && st.ok()) {
      st = PgError(conn_, r, "postgres COPY");
    }
    PQclear(r);
  }
  return st;
}

absl::Status PgConnection::ExecStreaming(
    const std::string& sql, const PgParams& params, bool binary_result,
    const std::function<void(const PgResult&)>& row) {
  if (PQsendQueryParams(conn_, sql.c_str(), params.size(), nullptr,
                        params.values(), params.lengths(), params.formats(),
                        binary_result ? 1 : 0) != 1) {
    return PgError(conn_, nullptr, "postgres");
  }
  (void)PQsetSingleRowMode(conn_);
  absl::Status st;
  PGresult* r;
  while ((r = PQgetResult(conn_)) != nullptr) {
    ExecStatusType s = PQresultStatus(r);
    if (s == PGRES_SINGLE_TUPLE) {
      PgResult one(r);
      if (st.ok()) row(one);
      continue;
    }
    if (s != PGRES_TUPLES_OK && s != PGRES_COMMAND_OK && st.ok()) {
      st = PgError(conn_, r, "postgres");
    }
    PQclear(r);
  }
  return st;
}

}  // namespace tracehealth::server
