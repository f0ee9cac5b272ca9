#include "tests/server/history_disk_stores.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/storage/postgres/pg_connection.h"
#include "server/storage/postgres/postgres_storage.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/util/postgres_cluster.h"

namespace tracehealth::history_disk {
namespace {

testing::PostgresCluster* cluster = nullptr;

int64_t FileBytes(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? st.st_size : 0;
}

int64_t Int(sqlite3* db, const char* sql) {
  sqlite3_stmt* st = nullptr;
  int64_t v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    v = sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  return v;
}

std::string Tables(sqlite3* db) {
  std::string out;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db,
                         "SELECT name, sum(pgsize) FROM dbstat GROUP BY name "
                         "HAVING sum(pgsize) > 65536 ORDER BY 2 DESC",
                         -1, &st, nullptr) != SQLITE_OK) {
    return "(dbstat unavailable)";
  }
  while (sqlite3_step(st) == SQLITE_ROW) {
    absl::StrAppendFormat(
        &out, "%s %.1f MB  ",
        reinterpret_cast<const char*>(sqlite3_column_text(st, 0)),
        sqlite3_column_int64(st, 1) / 1e6);
  }
  sqlite3_finalize(st);
  return out;
}

testing::PostgresCluster& Cluster() {
  if (cluster == nullptr)
    cluster = [] {
      auto c = testing::PostgresCluster::Start();
      if (!c.ok()) {
        std::fprintf(stderr, "postgres: %s\n", c.status().ToString().c_str());
        std::exit(1);
      }
      return c->release();
    }();
  return *cluster;
}

// The one-row, one-column `sql` on `conn`, as an integer (-1 on an error).
int64_t PgInt(server::PgConnection& conn, const std::string& sql) {
  auto r = conn.Exec(sql);
  return r.ok() && r->rows() == 1 ? r->Int(0, 0) : -1;
}

}  // namespace

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

DrivenStore OpenSqlite(absl::Duration interval) {
  DrivenStore d;
  d.dir = std::make_shared<testing::ScopedTempDir>("history_disk");
  const std::string path = d.dir->path() + "/h.db";
  server::SqliteOptions opts;
  opts.full_report_interval = interval;
  auto store = server::SqliteStorage::Open(path, opts);
  if (!store.ok()) {
    std::fprintf(stderr, "open: %s\n", store.status().ToString().c_str());
    std::exit(1);
  }
  d.store = *std::move(store);
  d.measure = [path](StoreFigures& f) {
    f.file_bytes = FileBytes(path) + FileBytes(path + "-wal");
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) ==
        SQLITE_OK) {
      f.full_rows = Int(db, "SELECT count(*) FROM reports");
      f.tables = Tables(db);
      f.rollup_bytes = Int(db,
                           "SELECT sum(pgsize) FROM dbstat WHERE name IN "
                           "('rollups', 'rollups_hour')");
    }
    sqlite3_close(db);
  };
  return d;
}

DrivenStore OpenPostgres(absl::Duration interval) {
  absl::StatusOr<std::string> dsn = Cluster().CreateDatabase();
  server::PostgresOptions opts;
  if (dsn.ok()) opts.dsn = *dsn;
  opts.full_report_interval = interval;
  auto store = dsn.ok()
                   ? server::PostgresStorage::Open(opts)
                   : absl::StatusOr<std::unique_ptr<server::PostgresStorage>>(
                         dsn.status());
  if (!store.ok()) {
    std::fprintf(stderr, "open: %s\n", store.status().ToString().c_str());
    std::exit(1);
  }
  DrivenStore d;
  d.store = *std::move(store);
  d.measure = [dsn = *dsn](StoreFigures& f) {
    auto conn = server::PgConnection::Connect(dsn);
    if (!conn.ok() || !(*conn)->Run("VACUUM").ok() ||
        !(*conn)->Run("CHECKPOINT").ok()) {
      std::fprintf(stderr, "postgres: cannot vacuum\n");
      std::exit(1);
    }
    constexpr char kTables[] =
        " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = 'public' AND c.relkind = 'r'";
    f.file_bytes =
        PgInt(**conn,
              absl::StrCat("SELECT sum(pg_total_relation_size(c.oid))::bigint",
                           kTables));
    f.full_rows = PgInt(**conn, "SELECT count(*) FROM reports");
    f.rollup_bytes = PgInt(**conn, "SELECT pg_total_relation_size('rollups')");
    auto r = (*conn)->Exec(absl::StrCat(
        "SELECT c.relname, pg_total_relation_size(c.oid)", kTables,
        " AND pg_total_relation_size(c.oid) > 65536 ORDER BY 2 DESC"));
    if (!r.ok()) return;
    for (int i = 0; i < r->rows(); ++i) {
      absl::StrAppendFormat(&f.tables, "%s %.1f MB  ", r->Text(i, 0),
                            r->Int(i, 1) / 1e6);
    }
  };
  return d;
}
void StopPostgres() {
  delete cluster;
  cluster = nullptr;
}

}  // namespace tracehealth::history_disk
