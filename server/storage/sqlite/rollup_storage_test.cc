// Hourly rollups in the SQLite store, through SqliteStorage on real files:
// the rollup conformance suite (server/storage/conformance/
// rollup_conformance.h).
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "server/storage/conformance/rollup_conformance.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/sqlite/sqlite_test_util.h"

namespace tracehealth::server {
namespace {

absl::StatusOr<std::unique_ptr<ReportStore>> OpenPath(const std::string& path) {
  SqliteOptions opts;
  opts.background_checkpoint = false;
  auto s = SqliteStorage::Open(path, opts);
  if (!s.ok()) return s.status();
  return std::unique_ptr<ReportStore>(*std::move(s));
}

absl::StatusOr<OpenedRollupStore> OpenForConformance() {
  const std::string path = NewDbPath();
  OpenedRollupStore out;
  absl::StatusOr<std::unique_ptr<ReportStore>> s = OpenPath(path);
  if (!s.ok()) return s.status();
  out.store = *std::move(s);
  out.reopen = [path] { return OpenPath(path); };
  return out;
}

INSTANTIATE_TEST_SUITE_P(Sqlite, RollupConformance,
                         ::testing::Values(RollupBackend{"sqlite",
                                                         OpenForConformance}),
                         RollupBackendName);

}  // namespace
}  // namespace tracehealth::server
