#include "server/storage/postgres/postgres_storage.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/storage/conformance/alert_store_conformance.h"
#include "server/storage/conformance/replica_conformance.h"
#include "server/storage/conformance/report_store_conformance.h"
#include "server/storage/conformance/test_rows.h"
#include "server/storage/postgres/pg_partitions.h"
#include "tests/util/postgres_cluster.h"

namespace tracehealth::server {
namespace {

using testing::PostgresCluster;

// One cluster for the whole test binary; a database per test.
PostgresCluster& Cluster() {
  static PostgresCluster* cluster = [] {
    auto c = PostgresCluster::Start();
    if (!c.ok()) {
      std::fprintf(stderr, "cannot start PostgreSQL: %s\n",
                   c.status().ToString().c_str());
      std::abort();
    }
    return c->release();
  }();
  return *cluster;
}

// Stops the cluster when the binary exits normally.
class ClusterEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { delete &Cluster(); }
};
const auto* const kEnv =
    ::testing::AddGlobalTestEnvironment(new ClusterEnvironment);

absl::StatusOr<std::unique_ptr<PostgresStorage>> OpenNew(
    PostgresOptions o = {}) {
  absl::StatusOr<std::string> dsn = Cluster().CreateDatabase();
  if (!dsn.ok()) return dsn.status();
  o.dsn = *dsn;
  return PostgresStorage::Open(o);
}

std::string DbName(const std::string& dsn) {
  return dsn.substr(dsn.rfind("dbname=") + 7);
}

absl::StatusOr<OpenedReportStore> OpenReports() {
  absl::StatusOr<std::string> dsn = Cluster().CreateDatabase();
  if (!dsn.ok()) return dsn.status();
  PostgresOptions o;
  o.dsn = *dsn;
  absl::StatusOr<std::unique_ptr<PostgresStorage>> s = PostgresStorage::Open(o);
  if (!s.ok()) return s.status();
  OpenedReportStore out;
  out.store = *std::move(s);
  const std::string db = DbName(*dsn);
  // A trigger another session adds; the store's next statements see it.
  out.refuse_insert = [db](const std::string& host, uint64_t seq) {
    auto r = Cluster().Sql(
        db, absl::StrCat(
                "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN IF "
                "NEW.host_id = '",
                host, "' AND NEW.seq = ", seq,
                " THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$ "
                "LANGUAGE plpgsql; CREATE TRIGGER refuse BEFORE INSERT ON "
                "reports FOR EACH ROW EXECUTE FUNCTION refuse()"));
    ASSERT_TRUE(r.ok()) << r.status();
  };
  out.allow_inserts = [db] {
    auto r = Cluster().Sql(
        db, "DROP TRIGGER refuse ON reports; DROP FUNCTION refuse()");
    ASSERT_TRUE(r.ok()) << r.status();
  };
  return out;
}

absl::StatusOr<std::unique_ptr<AlertStore>> OpenAlerts() {
  absl::StatusOr<std::unique_ptr<PostgresStorage>> s = OpenNew();
  if (!s.ok()) return s.status();
  return std::unique_ptr<AlertStore>(*std::move(s));
}

absl::StatusOr<ReplicaDatabase> NewReplicaDatabase() {
  absl::StatusOr<std::string> dsn = Cluster().CreateDatabase();
  if (!dsn.ok()) return dsn.status();
  ReplicaDatabase db;
  db.shared = true;
  db.open = [dsn = *dsn]() -> absl::StatusOr<ReplicaStore> {
    PostgresOptions o;
    o.dsn = dsn;
    absl::StatusOr<std::unique_ptr<PostgresStorage>> s =
        PostgresStorage::Open(o);
    if (!s.ok()) return s.status();
    return AsReplicaStore(std::shared_ptr<PostgresStorage>(*std::move(s)));
  };
  return db;
}

INSTANTIATE_TEST_SUITE_P(Postgres, ReportStoreConformance,
                         ::testing::Values(ReportStoreBackend{"postgres",
                                                              OpenReports}),
                         ReportStoreBackendName);
INSTANTIATE_TEST_SUITE_P(Postgres, AlertStoreConformance,
                         ::testing::Values(AlertStoreBackend{"postgres",
                                                             OpenAlerts}),
                         AlertStoreBackendName);
INSTANTIATE_TEST_SUITE_P(Postgres, ReplicaConformance,
                         ::testing::Values(ReplicaBackend{"postgres",
                                                          NewReplicaDatabase}),
                         ReplicaBackendName);

}  // namespace
}  // namespace tracehealth::server
