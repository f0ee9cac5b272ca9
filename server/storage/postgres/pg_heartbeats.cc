#include "server/storage/postgres/pg_heartbeats.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "server/storage/heartbeat_chunk.h"
#include "server/storage/heartbeat_report.h"
#include "server/storage/history_window.h"

namespace tracehealth::server {

void PgBeatBatch::Add(HeartbeatPolicy::Host& host, const ReportRow& row) {
  const Beat beat = BeatOf(row);
  const int64_t seq = static_cast<int64_t>(row.seq);
  std::string bytes;
  if (host.chunk_id != 0 && host.encoder.Takes(beat)) {
    bytes = host.encoder.Append(beat);
  } else {
    bytes = host.encoder.Start(beat);
    host.chunk_id = seq;
  }
  auto [it, added] = chunks_.try_emplace({row.host_id, host.chunk_id});
  Pending& p = it->second;
  if (added) {
    p.fresh = host.chunk_id == seq;
    p.base_seq = static_cast<int64_t>(host.base_seq);
    p.first_observed_ns = p.last_observed_ns = row.observed_at_ns;
    p.last_received_ns = row.received_at_ns;
  }
  p.last_seq = seq;
  p.first_observed_ns = std::min(p.first_observed_ns, row.observed_at_ns);
  p.last_observed_ns = std::max(p.last_observed_ns, row.observed_at_ns);
  p.last_received_ns = std::max(p.last_received_ns, row.received_at_ns);
  p.beats++;
  p.bytes += bytes;
}

absl::Status PgBeatBatch::Write(PgConnection& conn) {
  // [0]: appended to, [1]: new.
  std::vector<std::string> hosts[2], bytes[2];
  std::vector<int64_t> first[2], last[2], base[2], first_obs[2], last_obs[2],
      last_recv[2], n[2];
  for (const auto& [key, p] : chunks_) {
    const int k = p.fresh ? 1 : 0;
    hosts[k].push_back(key.first);
    first[k].push_back(key.second);
    last[k].push_back(p.last_seq);
    base[k].push_back(p.base_seq);
    first_obs[k].push_back(p.first_observed_ns);
    last_obs[k].push_back(p.last_observed_ns);
    last_recv[k].push_back(p.last_received_ns);
    n[k].push_back(p.beats);
    // bytea in an array literal: its hex form.
    bytes[k].push_back(absl::StrCat("\\x", absl::BytesToHexString(p.bytes)));
  }
  auto params = [&](int k) {
    PgParams q;
    q.Text(PgArray(hosts[k])).Text(PgArray(first[k])).Text(PgArray(last[k]));
    q.Text(PgArray(base[k])).Text(PgArray(first_obs[k]));
    q.Text(PgArray(last_obs[k])).Text(PgArray(last_recv[k]));
    q.Text(PgArray(n[k])).Text(PgArray(bytes[k]));
    return q;
  };
  constexpr char kUnnest[] =
      "unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], "
      "$5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bytea[]) "
      "AS u(host_id, f, l, b, fo, lo, lr, n, c)";
  if (!hosts[0].empty()) {
    TH_ASSIGN_OR_RETURN(
        PgResult r,
        conn.Exec(
            absl::StrCat(
                "UPDATE heartbeats h SET chunk = h.chunk || u.c, "
                "last_seq = u.l, first_observed_ns = "
                "least(h.first_observed_ns, u.fo), last_observed_ns = "
                "greatest(h.last_observed_ns, u.lo), last_received_ns = "
                "greatest(h.last_received_ns, u.lr), beats = h.beats + "
                "u.n FROM ",
                kUnnest, " WHERE h.host_id = u.host_id AND h.first_seq = u.f"),
            params(0)));
    if (r.affected() != static_cast<int64_t>(hosts[0].size())) {
      return absl::InternalError(
          absl::StrCat("append heartbeats: ", r.affected(), " of ",
                       hosts[0].size(), " chunks found"));
    }
  }
  if (!hosts[1].empty()) {
    TH_RETURN_IF_ERROR(
        conn.Exec(absl::StrCat("INSERT INTO heartbeats (host_id, first_seq, "
                               "last_seq, base_seq, first_observed_ns, "
                               "last_observed_ns, last_received_ns, beats, "
                               "chunk) SELECT u.host_id, u.f, u.l, u.b, u.fo, "
                               "u.lo, u.lr, u.n, u.c FROM ",
                               kUnnest),
                  params(1))
            .status());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::set<std::pair<std::string, int64_t>>> PgStoredBeats(
    PgConnection& conn, const std::vector<std::string>& hosts,
    const std::vector<int64_t>& seqs) {
  // The chunks whose seq range holds a probed seq; a chunk may skip seqs,
  // so its beats are decoded.
  TH_ASSIGN_OR_RETURN(
      PgResult r,
      conn.Exec("SELECT DISTINCT h.host_id, h.first_seq, h.chunk FROM "
                "unnest($1::text[], $2::bigint[]) AS u(host_id, seq) JOIN "
                "heartbeats h ON h.host_id = u.host_id AND u.seq BETWEEN "
                "h.first_seq AND h.last_seq",
                PgParams().Text(PgArray(hosts)).Text(PgArray(seqs)),
                /*binary_result=*/true));
  std::set<std::pair<std::string, int64_t>> beats;
  for (int i = 0; i < r.rows(); ++i) {
    const std::string host = r.Text(i, 0);
    absl::StatusOr<std::vector<Beat>> decoded = DecodeChunk(r.Text(i, 2));
    if (!decoded.ok()) {
      return Annotate(decoded.status(), absl::StrCat("heartbeats of ", host));
    }
    for (const Beat& b : *decoded) {
      beats.emplace(host, static_cast<int64_t>(b.seq));
    }
  }
  std::set<std::pair<std::string, int64_t>> found;
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (beats.count({hosts[i], seqs[i]}) != 0) found.emplace(hosts[i], seqs[i]);
  }
  return found;
}

absl::StatusOr<std::string> PgHeartbeatReport(PgConnection& conn,
                                              const std::string& host_id,
                                              uint64_t seq) {
  const int64_t s = static_cast<int64_t>(seq);
  TH_ASSIGN_OR_RETURN(
      PgResult chunk,
      conn.Exec("SELECT base_seq, chunk FROM heartbeats WHERE host_id = $1 "
                "AND first_seq <= $2 AND last_seq >= $2",
                PgParams().Text(host_id).Int(s), /*binary_result=*/true));
  for (int i = 0; i < chunk.rows(); ++i) {
    TH_ASSIGN_OR_RETURN(std::vector<Beat> beats, DecodeChunk(chunk.Text(i, 1)));
    for (const Beat& b : beats) {
      if (b.seq != seq) continue;
      TH_ASSIGN_OR_RETURN(
          PgResult base,
          conn.Exec("SELECT report FROM reports WHERE host_id = $1 AND seq "
                    "= $2",
                    PgParams().Text(host_id).Int(chunk.Int(i, 0)),
                    /*binary_result=*/true));
      if (base.rows() == 0) {
        return absl::DataLossError(absl::StrCat("heartbeat ", host_id, "/", seq,
                                                " without its report"));
      }
      return ReportOfHeartbeat(base.Text(0, 0), b);
    }
  }
  return absl::NotFoundError(absl::StrCat("no report ", host_id, "/", seq));
}

absl::StatusOr<HistoryRows> PgReadHistory(PgConnection& conn,
                                          const std::string& host_id,
                                          int64_t from_ns, int64_t to_ns,
                                          size_t max_rows) {
  // Every column binary.
  TH_ASSIGN_OR_RETURN(
      PgResult full,
      conn.Exec("SELECT seq, observed_at_ns, received_at_ns, "
                "worst_risk::bigint, attach_latency_seconds, "
                "pool_budget_ratio, purge_seconds FROM reports WHERE host_id "
                "= $1 AND observed_at_ns >= $2 AND observed_at_ns < $3",
                PgParams().Text(host_id).Int(from_ns).Int(to_ns),
                /*binary_result=*/true));
  std::vector<HistoryEntry> entries;
  entries.reserve(full.rows());
  for (int i = 0; i < full.rows(); ++i) {
    HistoryEntry e;
    ReportRow& r = e.row;
    r.host_id = host_id;
    r.seq = static_cast<uint64_t>(full.Int(i, 0));
    r.observed_at_ns = full.Int(i, 1);
    r.received_at_ns = full.Int(i, 2);
    r.worst_risk = static_cast<int>(full.Int(i, 3));
    if (!full.IsNull(i, 4)) r.attach_latency_seconds = full.Float8(i, 4);
    if (!full.IsNull(i, 5)) r.pool_budget_ratio = full.Float8(i, 5);
    if (!full.IsNull(i, 6)) r.purge_seconds = full.Float8(i, 6);
    e.base = static_cast<int64_t>(r.seq);
    entries.push_back(std::move(e));
  }
  TH_ASSIGN_OR_RETURN(
      PgResult chunks,
      conn.Exec("SELECT base_seq, chunk FROM heartbeats WHERE host_id = $1 "
                "AND last_observed_ns >= $2 AND first_observed_ns < $3",
                PgParams().Text(host_id).Int(from_ns).Int(to_ns),
                /*binary_result=*/true));
  for (int i = 0; i < chunks.rows(); ++i) {
    absl::StatusOr<std::vector<Beat>> beats = DecodeChunk(chunks.Text(i, 1));
    if (!beats.ok()) {
      return Annotate(beats.status(), absl::StrCat("heartbeats of ", host_id));
    }
    AddBeatEntries(host_id, *beats, chunks.Int(i, 0), from_ns, to_ns, &entries);
  }
  const size_t k = OrderAndStride(&entries, max_rows);
  HistoryRows out;
  out.matched = static_cast<int64_t>(entries.size());
  if (entries.empty()) return out;
  // Every k-th, then the bytes of the full reports they need, once each.
  std::vector<int64_t> wanted;
  for (size_t i = 0; i < entries.size(); i += k) {
    wanted.push_back(entries[i].base);
  }
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  TH_ASSIGN_OR_RETURN(
      PgResult blobs,
      conn.Exec("SELECT seq, report, worst_risk::bigint FROM reports WHERE "
                "host_id = $1 AND seq = ANY($2::bigint[])",
                PgParams().Text(host_id).Text(PgArray(wanted)),
                /*binary_result=*/true));
  absl::flat_hash_map<int64_t, int> by_seq;  // seq -> row of `blobs`
  for (int i = 0; i < blobs.rows(); ++i) by_seq[blobs.Int(i, 0)] = i;
  for (size_t i = 0; i < entries.size(); i += k) {
    HistoryEntry& e = entries[i];
    auto it = by_seq.find(e.base);
    if (it != by_seq.end()) {
      e.row.blob = blobs.Text(it->second, 1);
      if (e.row.heartbeat) {
        e.row.worst_risk = static_cast<int>(blobs.Int(it->second, 2));
      }
    }
    out.rows.push_back(std::move(e.row));
  }
  return out;
}

absl::StatusOr<int64_t> PgDeleteOldChunks(PgConnection& conn,
                                          int64_t received_before_ns) {
  TH_ASSIGN_OR_RETURN(
      PgResult r,
      conn.Exec("WITH d AS (DELETE FROM heartbeats b WHERE b.last_received_ns "
                "< $1 AND b.last_seq < (SELECT h.latest_seq FROM hosts h "
                "WHERE h.host_id = b.host_id) RETURNING b.beats) SELECT "
                "coalesce(sum(beats), 0) FROM d",
                PgParams().Int(received_before_ns)));
  return r.Int(0, 0);
}

absl::StatusOr<int64_t> PgCountBeats(PgConnection& conn,
                                     const std::string& host_id) {
  absl::StatusOr<PgResult> r =
      host_id.empty()
          ? conn.Exec("SELECT coalesce(sum(beats), 0) FROM heartbeats")
          : conn.Exec(
                "SELECT coalesce(sum(beats), 0) FROM heartbeats WHERE "
                "host_id = $1",
                PgParams().Text(host_id));
  if (!r.ok()) return r.status();
  return r->Int(0, 0);
}

}  // namespace tracehealth::server
