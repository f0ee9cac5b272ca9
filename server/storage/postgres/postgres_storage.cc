#include "server/storage/postgres/postgres_storage.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "server/storage/postgres/copy_binary.h"
#include "server/storage/postgres/pg_alerts.h"
#include "server/storage/postgres/pg_calibrations.h"
#include "server/storage/postgres/pg_events.h"
#include "server/storage/postgres/pg_heartbeats.h"
#include "server/storage/postgres/pg_hosts.h"
#include "server/storage/postgres/pg_migrations.h"
#include "server/storage/postgres/pg_partitions.h"

namespace tracehealth::server {
namespace {

// A host's newest report's record (a heartbeat's: its full report's)
// joined to its bookkeeping, then the report: at start only for a row
// without a record; the change feed always has it (a replica whose hardware
// class prices the host rebuilds its record from the report). Every column
// binary (see RowToLatest).
#define TH_NEWEST_ROW                                                  \
  " FROM hosts h JOIN reports r ON r.host_id = h.host_id AND r.seq = " \
  "coalesce(h.latest_base_seq, h.latest_seq) AND r.received_at_ns = "  \
  "coalesce(h.latest_base_received_ns, h.latest_received_ns)"
constexpr char kLatestSelect[] =
    "SELECT h.host_id, h.first_seen_ns, h.last_seen_ns, h.reports, "
    "h.latest_seq, r.record, CASE WHEN r.record IS NULL THEN r.report "
    "END" TH_NEWEST_ROW;
constexpr char kFeedSelect[] =
    "SELECT h.host_id, h.first_seen_ns, h.last_seen_ns, h.reports, "
    "h.latest_seq, r.record, r.report" TH_NEWEST_ROW;
#undef TH_NEWEST_ROW

LatestRow RowToLatest(const PgResult& r, int i) {
  LatestRow row;
  row.host_id = r.Text(i, 0);
  row.first_seen_ns = r.Int(i, 1);
  row.last_seen_ns = r.Int(i, 2);
  row.reports = static_cast<uint64_t>(r.Int(i, 3));
  row.latest_seq = static_cast<uint64_t>(r.Int(i, 4));
  if (!r.IsNull(i, 5)) row.record = r.Text(i, 5);
  if (!r.IsNull(i, 6)) row.blob = r.Text(i, 6);
  return row;
}

}  // namespace

int PostgresStorage::LatestSchemaVersion() { return PgLatestSchemaVersion(); }

PostgresStorage::PostgresStorage(PostgresOptions options)
    : options_(std::move(options)),
      writer_id_(absl::Uniform<int64_t>(absl::BitGen(), 1,
                                        std::numeric_limits<int64_t>::max())),
      heartbeats_(options_.full_report_interval) {}

PostgresStorage::~PostgresStorage() = default;

absl::StatusOr<std::unique_ptr<PostgresStorage>> PostgresStorage::Open(
    const PostgresOptions& options) {
  const absl::Duration span = options.partition_span;
  if (span < absl::Seconds(1) ||
      span % absl::Seconds(1) != absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("postgres partition span ", absl::FormatDuration(span),
                     ": want a positive whole number of seconds"));
  }
  std::unique_ptr<PostgresStorage> s(new PostgresStorage(options));
  TH_ASSIGN_OR_RETURN(auto conn,
                      PgConnection::Connect(options.dsn, options.connection));
  const int latest = PgLatestSchemaVersion();
  const int target = options.max_schema_version > 0
                         ? std::min(options.max_schema_version, latest)
                         : latest;
  if (absl::Status st = PgMigrate(*conn, target); !st.ok()) {
    return Annotate(st,
                    absl::StrCat("postgres (", DescribeDsn(options.dsn), ")"));
  }
  if (target < latest) {
    s->old_schema_ = true;
    absl::MutexLock lock(&s->write_.mu);
    s->write_.conn = std::move(conn);
    return s;
  }
  {
    // The feed starts here: changes committed from now on are delivered.
    absl::MutexLock lock(&s->feed_.mu);
    TH_ASSIGN_OR_RETURN(
        PgResult r,
        conn->Exec("SELECT pg_snapshot_xmin(pg_current_snapshot())::text"));
    s->feed_horizon_ = r.Text(0, 0);
  }
  absl::MutexLock lock(&s->write_.mu);
  // The partition of now and partitions_ahead more.
  const int64_t now_ns = absl::ToUnixNanos(options.now());
  const int64_t span_ns = absl::ToInt64Nanoseconds(span);
  const int64_t start = now_ns - ((now_ns % span_ns) + span_ns) % span_ns;
  TH_ASSIGN_OR_RETURN(
      s->covered_until_ns_,
      EnsurePartitions(*conn, start,
                       start + (options.partitions_ahead + 1) * span_ns, span));
  s->write_.conn = std::move(conn);
  return s;
}

absl::StatusOr<PgConnection*> PostgresStorage::Ready(Slot& slot) {
  if (old_schema_) {
    return absl::FailedPreconditionError(
        "store opened below the latest schema version");
  }
  if (slot.conn != nullptr && slot.conn->healthy()) return slot.conn.get();
  slot.conn.reset();
  TH_ASSIGN_OR_RETURN(slot.conn,
                      PgConnection::Connect(options_.dsn, options_.connection));
  return slot.conn.get();
}

absl::StatusOr<int> PostgresStorage::SchemaVersion() {
  absl::MutexLock lock(&write_.mu);
  if (write_.conn == nullptr || !write_.conn->healthy()) {
    return absl::UnavailableError("postgres: not connected");
  }
  return PgSchemaVersion(*write_.conn);
}

void PostgresStorage::CoverPartitions(PgConnection& conn, int64_t received_ns) {
  // Extended while partitions_ahead spans are still ahead, so a partition
  // exists before its first row arrives.
  const int64_t span_ns = absl::ToInt64Nanoseconds(options_.partition_span);
  if (received_ns + options_.partitions_ahead * span_ns < covered_until_ns_) {
    return;
  }
  const int64_t start =
      received_ns - ((received_ns % span_ns) + span_ns) % span_ns;
  absl::StatusOr<int64_t> until = EnsurePartitions(
      conn, start, start + (options_.partitions_ahead + 1) * span_ns,
      options_.partition_span);
  // On an error the rows go to reports_default; the next batch tries again.
  if (until.ok()) covered_until_ns_ = *until;
}

absl::StatusOr<std::vector<WriteOutcome>> PostgresStorage::WriteBatch(
    absl::Span<const ReportRow> rows) {
  if (rows.empty()) return std::vector<WriteOutcome>();
  absl::MutexLock lock(&write_.mu);
  TH_ASSIGN_OR_RETURN(PgConnection * conn, Ready(write_));
  int64_t newest_ns = 0;
  for (const ReportRow& r : rows)
    newest_ns = std::max(newest_ns, r.received_at_ns);
  CoverPartitions(*conn, newest_ns);
  TH_RETURN_IF_ERROR(conn->Run("BEGIN"));
  absl::StatusOr<std::vector<WriteOutcome>> out =
      WriteInTransaction(*conn, rows);
  if (out.ok()) {
    absl::Status st = conn->Run("COMMIT");
    if (st.ok()) return out;
    out = st;
  }
  (void)conn->Run("ROLLBACK");
  // The policy may hold rows that were rolled back.
  heartbeats_.Reset();
  return out.status();
}

absl::StatusOr<std::vector<WriteOutcome>> PostgresStorage::WriteInTransaction(
    PgConnection& conn, absl::Span<const ReportRow> rows) {
  std::set<std::string> hosts;
  for (const ReportRow& r : rows) hosts.insert(r.host_id);
  // Lock the hosts rows in one order, so two replicas' batches never wait
  // for each other in a cycle. A new host has no row to lock: two replicas
  // storing it at once both insert one below, and the second fails (unique
  // violation), so its batch is replayed later.
  TH_ASSIGN_OR_RETURN(
      PgResult locked,
      conn.Exec("SELECT host_id, latest_seq FROM hosts WHERE host_id = "
                "ANY($1::text[]) ORDER BY host_id FOR UPDATE",
                PgParams().Text(PgArray(
                    std::vector<std::string>(hosts.begin(), hosts.end())))));
  std::map<std::string, int64_t> latest;
  for (int i = 0; i < locked.rows(); ++i) {
    latest[locked.Text(i, 0)] = locked.Int(i, 1);
  }
  // Seqs at or below a host's newest may be replays: look them up.
  std::vector<std::string> probe_hosts;
  std::vector<int64_t> probe_seqs;
  for (const ReportRow& r : rows) {
    auto it = latest.find(r.host_id);
    if (it != latest.end() && static_cast<int64_t>(r.seq) <= it->second) {
      probe_hosts.push_back(r.host_id);
      probe_seqs.push_back(static_cast<int64_t>(r.seq));
    }
  }
  std::set<std::pair<std::string, int64_t>> stored_before;
  if (!probe_hosts.empty()) {
    TH_ASSIGN_OR_RETURN(
        PgResult found,
        conn.Exec(
            "SELECT r.host_id, r.seq FROM reports r JOIN unnest("
            "$1::text[], $2::bigint[]) AS u(host_id, seq) ON r.host_id "
            "= u.host_id AND r.seq = u.seq",
            PgParams().Text(PgArray(probe_hosts)).Text(PgArray(probe_seqs))));
    for (int i = 0; i < found.rows(); ++i) {
      stored_before.emplace(found.Text(i, 0), found.Int(i, 1));
    }
    // ... or in heartbeats.
    TH_ASSIGN_OR_RETURN(auto beats,
                        PgStoredBeats(conn, probe_hosts, probe_seqs));
    stored_before.insert(beats.begin(), beats.end());
  }
  std::vector<WriteOutcome> out;
  out.reserve(rows.size());
  std::map<std::string, HostUpdate> updates;
  // Each host's newest stored seq, as this batch goes on.
  std::map<std::string, int64_t> newest = latest;
  CopyBinary copy;
  PgBeatBatch beats;
  bool whole = false;  // a row goes into the COPY
  for (const ReportRow& r : rows) {
    const int64_t seq = static_cast<int64_t>(r.seq);
    // stored_before also collects this batch's rows, for in-batch repeats.
    if (!stored_before.emplace(r.host_id, seq).second) {
      out.push_back(WriteOutcome::kDuplicate);
      continue;
    }
    out.push_back(WriteOutcome::kStored);
    // A heartbeat only above the host's every stored seq, and only while
    // that newest seq is the policy's (no other instance stored above it),
    // so a host's chunks never interleave.
    auto n = newest.find(r.host_id);
    HeartbeatPolicy::Host* base =
        n != newest.end() && seq > n->second ? heartbeats_.Fold(r) : nullptr;
    if (base != nullptr && static_cast<int64_t>(base->last_seq) != n->second) {
      base = nullptr;
    }
    if (base != nullptr) {
      beats.Add(*base, r);
      heartbeats_.StoredBeat(*base, r.seq);
    } else {
      AddReportRow(copy, r, seq);
      whole = true;
      heartbeats_.StoredFull(r, r.received_at_ns);
    }
    if (n == newest.end()) {
      newest.emplace(r.host_id, seq);
    } else {
      n->second = std::max(n->second, seq);
    }
    auto [it, fresh] = updates.try_emplace(r.host_id);
    HostUpdate& u = it->second;
    if (fresh) {
      u.first_ns = u.last_ns = r.received_at_ns;
    }
    u.stored++;
    u.first_ns = std::min(u.first_ns, r.received_at_ns);
    u.last_ns = std::max(u.last_ns, r.received_at_ns);
    if (seq > u.max_seq) {
      u.max_seq = seq;
      u.max_seq_received_ns = r.received_at_ns;
      u.max_seq_base_seq =
          base != nullptr ? static_cast<int64_t>(base->base_seq) : -1;
      u.max_seq_base_received_ns = base != nullptr ? base->base_id : -1;
    }
  }
  if (updates.empty()) return out;  // only replays
  if (whole) TH_RETURN_IF_ERROR(conn.CopyIn(kCopyReports, copy.Finish()));
  if (!beats.empty()) TH_RETURN_IF_ERROR(beats.Write(conn));
  TH_RETURN_IF_ERROR(PgUpsertHosts(conn, updates, latest, writer_id_));
  return out;
}

absl::Status PostgresStorage::LoadLatest(
    const std::function<void(LatestRow&)>& fn) {
  absl::MutexLock lock(&read_.mu);
  TH_ASSIGN_OR_RETURN(PgConnection * conn, Ready(read_));
  return conn->ExecStreaming(kLatestSelect, PgParams(), /*binary_result=*/true,
                             [&fn](const PgResult& r) {
                               LatestRow row = RowToLatest(r, 0);
                               fn(row);
                             });
}

absl::Status PostgresStorage::Poll(const std::function<void(LatestRow&)>& fn) {
  absl::MutexLock lock(&feed_.mu);
  TH_ASSIGN_OR_RETURN(PgConnection * conn, Ready(feed_));
  // One snapshot for the horizon and the rows: every transaction below its
  // xmin has ended, so a later poll from there misses nothing.
  TH_RETURN_IF_ERROR(
      conn->Run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"));
  auto fail = [conn](absl::Status st) {
    (void)conn->Run("ROLLBACK");
    return st;
  };
  absl::StatusOr<PgResult> horizon =
      conn->Exec("SELECT pg_snapshot_xmin(pg_current_snapshot())::text");
  if (!horizon.ok()) return fail(horizon.status());
  absl::StatusOr<PgResult> rows = conn->Exec(
      absl::StrCat(kFeedSelect,
                   " WHERE h.change_xid >= $1::xid8 AND h.writer <> $2"),
      PgParams().Text(feed_horizon_).Int(writer_id_), /*binary_result=*/true);
  if (!rows.ok()) return fail(rows.status());
  TH_RETURN_IF_ERROR(conn->Run("COMMIT"));
  feed_horizon_ = horizon->Text(0, 0);
  for (int i = 0; i < rows->rows(); ++i) {
    LatestRow row = RowToLatest(*rows, i);
    fn(row);
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> PostgresStorage::DeleteReportsReceivedBefore(
    int64_t received_before_ns) {
  absl::MutexLock lock(&control_.mu);
  TH_ASSIGN_OR_RETURN(PgConnection * conn, Ready(control_));
  // Heartbeats first: a full report is kept while a chunk on it lives.
  TH_ASSIGN_OR_RETURN(const int64_t beats,
                      PgDeleteOldChunks(*conn, received_before_ns));
  TH_ASSIGN_OR_RETURN(const int64_t dropped,
                      DropPartitionsBefore(*conn, received_before_ns));
  // What is left before the cutoff: the partition that straddles it and
  // reports_default (each host's newest report stays, and each full report
  // a heartbeat refers to).
  TH_ASSIGN_OR_RETURN(
      PgResult r,
      conn->Exec("DELETE FROM reports r WHERE r.received_at_ns < $1 AND r.seq "
                 "< (SELECT h.latest_seq FROM hosts h WHERE h.host_id = "
                 "r.host_id) AND NOT EXISTS (SELECT 1 FROM heartbeats b "
                 "WHERE b.host_id = r.host_id AND b.base_seq = r.seq)",
                 PgParams().Int(received_before_ns)));
  return beats + dropped + r.affected();
}

absl::StatusOr<int64_t> PostgresStorage::CountReports(
    const std::string& host_id) {
  absl::MutexLock lock(&read_.mu);
  TH_ASSIGN_OR_RETURN(PgConnection * conn, Ready(read_));
  absl::StatusOr<PgResult> r =
      host_id.empty()
          ? conn->Exec("SELECT count(*) FROM reports")
          : conn->Exec("SELECT count(*) FROM reports WHERE host_id = $1",
                       PgParams().Text(host_id));
  if (!r.ok()) return r.status();
  TH_ASSIGN_OR_RETURN(const int64_t beats, PgCountBeats(*conn, host_id));
  return r->Int(0, 0) + beats;
}

absl::StatusOr<std::string> PostgresStorage::GetReport(
    const std::string& host_id, uint64_t seq) {
  absl::MutexLock lock(&read_.mu);
  TH_ASSIGN_OR_RETURN(PgConnection * conn, Ready(read_));
  TH_ASSIGN_OR_RETURN(
      PgResult r,
      conn->Exec("SELECT report FROM reports WHERE host_id = $1 AND seq = $2",
                 PgParams().Text(host_id).Int(static_cast<int64_t>(seq)),
                 /*binary_result=*/true));
  if (r.rows() == 0) return PgHeartbeatReport(*conn, host_id, seq);
  return r.Text(0, 0);
}

absl::StatusOr<HistoryRows> PostgresStorage::ReadHostHistory(
    const std::string& host_id, int64_t from_ns, int64_t to_ns,
    size_t max_rows) {
  if (max_rows == 0) {
    return absl::InvalidArgumentError("max_rows must be at least 1");
  }
  absl::MutexLock lock(&read_.mu);
  TH_ASSIGN_OR_RETURN(PgConnection * conn, Ready(read_));
  return PgReadHistory(*conn, host_id, from_ns, to_ns, max_rows);
}

absl::StatusOr<int64_t> PostgresStorage::SizeBytes() {
  absl::MutexLock lock(&read_.mu);
  TH_ASSIGN_OR_RETURN(PgConnection * conn, Ready(read_));
  TH_ASSIGN_OR_RETURN(
      PgResult r, conn->Exec("SELECT pg_database_size(current_database())"));
  return r.Int(0, 0);
}

absl::Status PostgresStorage::PutAlert(const AlertRow& alert) {
  absl::MutexLock lock(&control_.mu);
  TH_ASSIGN_OR_RETURN(PgConnection * conn, Ready(control_));
  return PgPutAlert(*conn, alert);
}

absl::StatusOr<std::vector<AlertRow>> PostgresStorage::ListAlerts(
    const AlertFilter& filter) {
  absl::MutexLock lock(&read_.mu);
  TH_ASSIGN_OR_RETURN(PgConnection * conn, Ready(read_));
  return PgListAlerts(*conn, filter);
}

absl::StatusOr<std::vector<bool>> PostgresStorage::PutEvents(
    absl::Span<const EventRow> rows) {
  absl::MutexLock lock(&control_.mu);
  TH_ASSIGN_OR_RETURN(PgConnection * conn, Ready(control_));
  return PgPutEvents(*conn, rows);
}

absl::StatusOr<std::vector<EventRow>> PostgresStorage::ListEvents(
    const EventFilter& filter) {
  absl::MutexLock lock(&read_.mu);
  TH_ASSIGN_OR_RETURN(PgConnection * conn, Ready(read_));
  return PgListEvents(*conn, filter);
}

absl::StatusOr<bool> PostgresStorage::PutCalibration(
    const CalibrationRow& row) {
  absl::MutexLock lock(&control_.mu);
  TH_ASSIGN_OR_RETURN(PgConnection * conn, Ready(control_));
  return PgPutCalibration(*conn, row);
}

absl::StatusOr<std::vector<CalibrationRow>>
PostgresStorage::ListCalibrations() {
  absl::MutexLock lock(&read_.mu);
  TH_ASSIGN_OR_RETURN(PgConnection * conn, Ready(read_));
  return PgListCalibrations(*conn);
}

absl::StatusOr<TransitionResult> PostgresStorage::TransitionAlert(
    const std::optional<AlertEpisode>& expected, const AlertRow& next) {
  absl::MutexLock lock(&control_.mu);
  TH_ASSIGN_OR_RETURN(PgConnection * conn, Ready(control_));
  return PgTransitionAlert(*conn, expected, next);
}

absl::StatusOr<bool> PostgresStorage::AcquireLease(const std::string& name,
                                                   const std::string& holder,
                                                   absl::Duration ttl) {
  absl::MutexLock lock(&control_.mu);
  TH_ASSIGN_OR_RETURN(PgConnection * conn, Ready(control_));
  TH_ASSIGN_OR_RETURN(
      PgResult r,
      conn->Exec(
          "INSERT INTO leases AS l (name, holder, expires_at) VALUES ($1, $2, "
          "clock_timestamp() + $3 * interval '1 microsecond') ON CONFLICT "
          "(name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = "
          "EXCLUDED.expires_at WHERE l.holder = EXCLUDED.holder OR "
          "l.expires_at <= clock_timestamp() RETURNING holder",
          PgParams().Text(name).Text(holder).Int(
              absl::ToInt64Microseconds(ttl))));
  return r.rows() == 1;
}

absl::Status PostgresStorage::ReleaseLease(const std::string& name,
                                           const std::string& holder) {
  absl::MutexLock lock(&control_.mu);
  TH_ASSIGN_OR_RETURN(PgConnection * conn, Ready(control_));
  return conn
      ->Exec("DELETE FROM leases WHERE name = $1 AND holder = $2",
             PgParams().Text(name).Text(holder))
      .status();
}

}  // namespace tracehealth::server
