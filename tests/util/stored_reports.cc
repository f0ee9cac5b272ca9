#include "tests/util/stored_reports.h"

#include <sqlite3.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/storage/heartbeat_chunk.h"
#include "server/storage/heartbeat_report.h"
#include "server/storage/sqlite/heartbeats.h"

namespace tracehealth::testing {
namespace {

absl::Status Error(sqlite3* db) {
  return absl::InternalError(sqlite3_errmsg(db));
}

}  // namespace

absl::StatusOr<std::vector<uint64_t>> StoredSeqsIn(sqlite3* db,
                                                   const std::string& host_id) {
  std::vector<std::pair<int64_t, uint64_t>> got;  // received, seq
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db,
                         "SELECT received_at_ns, seq FROM reports WHERE "
                         "host_id = ?1 ORDER BY rowid",
                         -1, &st, nullptr) != SQLITE_OK) {
    return Error(db);
  }
  sqlite3_bind_text(st, 1, host_id.c_str(), -1, SQLITE_TRANSIENT);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    got.emplace_back(sqlite3_column_int64(st, 0),
                     static_cast<uint64_t>(sqlite3_column_int64(st, 1)));
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return Error(db);
  // A file from before heartbeats has no such table: no heartbeats.
  if (sqlite3_prepare_v2(db,
                         "SELECT beats FROM heartbeats WHERE host_id = ?1 "
                         "ORDER BY id",
                         -1, &st, nullptr) == SQLITE_OK) {
    sqlite3_bind_text(st, 1, host_id.c_str(), -1, SQLITE_TRANSIENT);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      absl::StatusOr<std::vector<server::Beat>> beats =
          server::DecodeChunk(absl::string_view(
              static_cast<const char*>(sqlite3_column_blob(st, 0)),
              sqlite3_column_bytes(st, 0)));
      if (!beats.ok()) {
        sqlite3_finalize(st);
        return beats.status();
      }
      for (const server::Beat& b : *beats)
        got.emplace_back(b.received_at_ns, b.seq);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return Error(db);
  }
  std::stable_sort(got.begin(), got.end(), [](const auto& a, const auto& b) {
    return a.first < b.first;
  });
  std::vector<uint64_t> out;
  out.reserve(got.size());
  for (const auto& [received, seq] : got) out.push_back(seq);
  return out;
}

absl::StatusOr<std::string> StoredReportIn(sqlite3* db,
                                           const std::string& host_id,
                                           uint64_t seq) {
  auto blob_of = [db](const char* sql, const std::string& host,
                      int64_t key) -> absl::StatusOr<std::string> {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) {
      return Error(db);
    }
    int i = 1;
    if (!host.empty()) {
      sqlite3_bind_text(st, i++, host.c_str(), -1, SQLITE_TRANSIENT);
    }
    sqlite3_bind_int64(st, i, key);
    absl::StatusOr<std::string> out = absl::NotFoundError("no such report");
    const int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      out = std::string(static_cast<const char*>(sqlite3_column_blob(st, 0)),
                        sqlite3_column_bytes(st, 0));
    } else if (rc != SQLITE_DONE) {
      out = Error(db);
    }
    sqlite3_finalize(st);
    return out;
  };
  absl::StatusOr<std::string> whole =
      blob_of("SELECT report FROM reports WHERE host_id = ?1 AND seq = ?2",
              host_id, static_cast<int64_t>(seq));
  if (!absl::IsNotFound(whole.status())) return whole;
  auto beat = server::FindBeat(db, host_id, seq);
  if (!beat.ok() || !beat->has_value()) {
    return absl::NotFoundError(absl::StrCat("no report ", host_id, "/", seq));
  }
  absl::StatusOr<std::string> base =
      blob_of("SELECT report FROM reports WHERE id = ?1", "", (*beat)->first);
  if (!base.ok()) return base.status();
  return server::ReportOfHeartbeat(*base, (*beat)->second);
}

}  // namespace tracehealth::testing
