#include "server/storage/postgres/pg_migrations.h"

#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace tracehealth::server {
namespace {

// Ordered schema migrations: entry i brings the schema to version i + 1.
// Never edit a released entry; append a new one.
constexpr const char* kMigrations[] = {
    // 1: hosts, reports partitioned by receive time, alerts, leases.
    //
    // hosts: one row per host, locked (FOR UPDATE) by the transaction that
    // stores its reports, so replicas decide duplicates one at a time per
    // host; change_xid (the last transaction that changed it) and writer
    // (the store instance) feed the other replicas' indexes.
    //
    // reports: the primary key includes the partition key, as PostgreSQL
    // requires; (host_id, seq) is kept unique by the hosts lock. Rows that
    // fall outside every range partition (and each host's newest report
    // when its partition is dropped) live in reports_default.
    R"sql(
CREATE TABLE hosts (
  host_id text PRIMARY KEY,
  first_seen_ns bigint NOT NULL,
  last_seen_ns bigint NOT NULL,
  reports bigint NOT NULL,
  latest_seq bigint NOT NULL,
  latest_received_ns bigint NOT NULL,
  writer bigint NOT NULL,
  change_xid xid8 NOT NULL DEFAULT pg_current_xact_id()
);
CREATE INDEX hosts_change_xid ON hosts (change_xid);
CREATE TABLE reports (
  host_id text NOT NULL,
  seq bigint NOT NULL,
  observed_at_ns bigint NOT NULL,
  received_at_ns bigint NOT NULL,
  worst_risk integer NOT NULL,
  attach_latency_seconds double precision,
  pool_budget_ratio double precision,
  purge_seconds double precision,
  report bytea NOT NULL,
  PRIMARY KEY (host_id, seq, received_at_ns)
) PARTITION BY RANGE (received_at_ns);
CREATE TABLE reports_default PARTITION OF reports DEFAULT;
CREATE TABLE alerts (
  rule text NOT NULL,
  host_id text NOT NULL,
  state integer NOT NULL,
  severity text NOT NULL,
  labels_json text NOT NULL,
  annotations_json text NOT NULL,
  value double precision NOT NULL,
  active_since_ns bigint NOT NULL,
  fired_at_ns bigint,
  resolved_at_ns bigint,
  PRIMARY KEY (rule, host_id, active_since_ns)
);
CREATE INDEX alerts_state ON alerts (state);
CREATE TABLE leases (
  name text PRIMARY KEY,
  holder text NOT NULL,
  expires_at timestamptz NOT NULL
);
)sql",
    // 2: observed kernel events (event_store.h), one per (host, boot, kmsg
    // seq), listed newest logged first. Not partitioned: a fleet logs few.
    R"sql(
CREATE TABLE events (
  host_id text NOT NULL,
  boot_id text NOT NULL,
  kmsg_seq bigint NOT NULL,
  logged_at_ns bigint NOT NULL,
  kind bigint NOT NULL,
  model bigint NOT NULL,
  predicted bigint NOT NULL,
  received_at_ns bigint NOT NULL,
  event bytea NOT NULL,
  PRIMARY KEY (host_id, boot_id, kmsg_seq)
);
CREATE INDEX events_logged_at ON events (logged_at_ns);
)sql",
    // 3: host calibrations (calibration_store.h), one per (host, measured
    // at); the hardware classes' constants are rebuilt from them at start.
    R"sql(
CREATE TABLE calibrations (
  host_id text NOT NULL,
  hardware_class text NOT NULL,
  measured_at_ns bigint NOT NULL,
  c_visit_seconds double precision NOT NULL,
  fixed_seconds double precision NOT NULL,
  received_at_ns bigint NOT NULL,
  calibration bytea NOT NULL,
  PRIMARY KEY (host_id, measured_at_ns)
);
)sql",
    // 4: each report's stored record (ReportRow::record): a restart and the
    // change feed read it instead of the report (which TOAST keeps apart,
    // so it is not read with it). NULL for rows stored before.
    R"sql(
ALTER TABLE reports ADD COLUMN record bytea;
)sql",
    // 5: heartbeats (server/storage/heartbeat_policy.h): one row per chunk
    // (heartbeat_chunk.h) of a host's heartbeats on one full report, the
    // reports row (host_id, base_seq); `beats` counts its heartbeats. Not
    // partitioned: a chunk is a few hundred bytes a host an hour.
    // hosts.latest_base_seq/_received_ns: the full report of the host's
    // newest seq when that is a heartbeat (NULL when it is stored whole),
    // whose record a restart and the change feed read.
    R"sql(
CREATE TABLE heartbeats (
  host_id text NOT NULL,
  first_seq bigint NOT NULL,
  last_seq bigint NOT NULL,
  base_seq bigint NOT NULL,
  first_observed_ns bigint NOT NULL,
  last_observed_ns bigint NOT NULL,
  last_received_ns bigint NOT NULL,
  beats integer NOT NULL,
  chunk bytea NOT NULL,
  PRIMARY KEY (host_id, first_seq)
);
CREATE INDEX heartbeats_base ON heartbeats (host_id, base_seq);
ALTER TABLE hosts ADD COLUMN latest_base_seq bigint,
  ADD COLUMN latest_base_received_ns bigint;
)sql",
    // 6: hourly rollups (pg_rollups.h): per (host, hour) the count, first
    // and last seq, min/max/last of threads and the three prediction
    // columns (NULL: no report of the hour carried it), max/last worst
    // risk; kept longer than the reports, deleted by hour (the index).
    // rollup_state: the pass's watermark, one row (id 1) once a pass ran.
    // From this version a heartbeat chunk spans less than an hour
    // (ChunkEncoder::kMaxSpanNs) and is found by its first beat
    // (heartbeats_first_observed); heartbeat_spans: the newest first beat of
    // a chunk written before, whose span is not bounded (NULL: none).
    R"sql(
CREATE TABLE rollups (
  host_id text NOT NULL,
  hour_start_ns bigint NOT NULL,
  reports bigint NOT NULL,
  first_seq bigint NOT NULL,
  last_seq bigint NOT NULL,
  threads_min bigint,
  threads_max bigint,
  threads_last bigint,
  attach_latency_seconds_min double precision,
  attach_latency_seconds_max double precision,
  attach_latency_seconds_last double precision,
  pool_budget_ratio_min double precision,
  pool_budget_ratio_max double precision,
  pool_budget_ratio_last double precision,
  purge_seconds_min double precision,
  purge_seconds_max double precision,
  purge_seconds_last double precision,
  worst_risk_max integer NOT NULL,
  worst_risk_last integer NOT NULL,
  PRIMARY KEY (host_id, hour_start_ns)
);
CREATE INDEX rollups_hour ON rollups (hour_start_ns);
CREATE TABLE rollup_state (
  id integer PRIMARY KEY CHECK (id = 1),
  rolled_through_ns bigint NOT NULL
);
CREATE INDEX heartbeats_first_observed ON heartbeats (first_observed_ns);
CREATE TABLE heartbeat_spans (unbounded_through_ns bigint);
INSERT INTO heartbeat_spans SELECT max(first_observed_ns) FROM heartbeats;
)sql",
};
constexpr int kLatestVersion = sizeof(kMigrations) / sizeof(kMigrations[0]);

// pg_advisory_xact_lock key of schema migrations ("thschema").
constexpr int64_t kMigrationLock = 0x7468736368656d61;

}  // namespace

int PgLatestSchemaVersion() { return kLatestVersion; }

absl::StatusOr<int> PgSchemaVersion(PgConnection& conn) {
  TH_ASSIGN_OR_RETURN(
      PgResult exists,
      conn.Exec("SELECT to_regclass('schema_version') IS NOT NULL"));
  if (exists.Text(0, 0) != "t") return 0;
  TH_ASSIGN_OR_RETURN(
      PgResult r,
      conn.Exec("SELECT coalesce(max(version), 0) FROM schema_version"));
  return static_cast<int>(r.Int(0, 0));
}

absl::Status PgMigrate(PgConnection& conn, int target) {
  for (;;) {
    TH_RETURN_IF_ERROR(conn.Run("BEGIN"));
    auto fail = [&conn](absl::Status st, int v) {
      (void)conn.Run("ROLLBACK");
      return Annotate(st, absl::StrCat("schema migration to version ", v));
    };
    absl::Status st = conn.Exec("SELECT pg_advisory_xact_lock($1)",
                                PgParams().Int(kMigrationLock))
                          .status();
    if (st.ok()) {
      st = conn.Run(
          "CREATE TABLE IF NOT EXISTS schema_version (version integer NOT "
          "NULL)");
    }
    absl::StatusOr<int> version =
        st.ok() ? PgSchemaVersion(conn) : absl::StatusOr<int>(st);
    if (!version.ok()) return fail(version.status(), 0);
    if (*version > kLatestVersion) {
      (void)conn.Run("ROLLBACK");
      return absl::FailedPreconditionError(
          absl::StrCat("database schema version ", *version,
                       " is newer than this server's (", kLatestVersion, ")"));
    }
    if (*version >= target) return conn.Run("COMMIT");
    const int v = *version + 1;
    st = conn.Run(kMigrations[v - 1]);
    if (st.ok()) {
      st =
          conn.Exec("INSERT INTO schema_version VALUES ($1)", PgParams().Int(v))
              .status();
    }
    if (st.ok()) st = conn.Run("COMMIT");
    if (!st.ok()) return fail(st, v);
  }
}

}  // namespace tracehealth::server
