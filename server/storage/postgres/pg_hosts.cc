#include "server/storage/postgres/pg_hosts.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace tracehealth::server {

absl::Status PgUpsertHosts(PgConnection& conn,
                           const std::map<std::string, HostUpdate>& updates,
                           const std::map<std::string, int64_t>& latest,
                           int64_t writer_id) {
  std::vector<std::string> ids[2];
  std::vector<int64_t> n[2], first[2], last[2], seq[2], seq_ns[2], base[2],
      base_ns[2];
  for (const auto& [host, u] : updates) {
    const int k = latest.count(host) != 0 ? 0 : 1;
    ids[k].push_back(host);
    n[k].push_back(u.stored);
    first[k].push_back(u.first_ns);
    last[k].push_back(u.last_ns);
    seq[k].push_back(u.max_seq);
    seq_ns[k].push_back(u.max_seq_received_ns);
    base[k].push_back(u.max_seq_base_seq);
    base_ns[k].push_back(u.max_seq_base_received_ns);
  }
  auto params = [&](int k) {
    PgParams p;
    p.Text(PgArray(ids[k])).Text(PgArray(n[k])).Text(PgArray(first[k]));
    p.Text(PgArray(last[k])).Text(PgArray(seq[k])).Text(PgArray(seq_ns[k]));
    p.Int(writer_id).Text(PgArray(base[k])).Text(PgArray(base_ns[k]));
    return p;
  };
  constexpr char kUnnest[] =
      "unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], "
      "$5::bigint[], $6::bigint[], $8::bigint[], $9::bigint[]) AS "
      "u(host_id, n, f, l, s, r, bs, br)";
  if (!ids[0].empty()) {
    // writer changes only with the newest report: a replica whose own
    // replay of an older seq came last must still see the newer report
    // another replica stored.
    TH_RETURN_IF_ERROR(
        conn.Exec(
                absl::StrCat(
                    "UPDATE hosts h SET first_seen_ns = least(h.first_seen_ns, "
                    "u.f), last_seen_ns = greatest(h.last_seen_ns, u.l), "
                    "reports = h.reports + u.n, latest_received_ns = CASE "
                    "WHEN u.s > h.latest_seq THEN u.r ELSE "
                    "h.latest_received_ns END, latest_base_seq = CASE WHEN "
                    "u.s > h.latest_seq THEN nullif(u.bs, -1) ELSE "
                    "h.latest_base_seq END, latest_base_received_ns = CASE "
                    "WHEN u.s > h.latest_seq THEN nullif(u.br, -1) ELSE "
                    "h.latest_base_received_ns END, writer = CASE WHEN u.s > "
                    "h.latest_seq THEN $7 ELSE h.writer END, latest_seq = "
                    "greatest(h.latest_seq, u.s), change_xid = "
                    "pg_current_xact_id() FROM ",
                    kUnnest, " WHERE h.host_id = u.host_id"),
                params(0))
            .status());
  }
  if (!ids[1].empty()) {
    TH_RETURN_IF_ERROR(
        conn.Exec(absl::StrCat("INSERT INTO hosts (host_id, first_seen_ns, "
                               "last_seen_ns, reports, latest_seq, "
                               "latest_received_ns, writer, latest_base_seq, "
                               "latest_base_received_ns) SELECT u.host_id, "
                               "u.f, u.l, u.n, u.s, u.r, $7, nullif(u.bs, -1), "
                               "nullif(u.br, -1) FROM ",
                               kUnnest),
                  params(1))
            .status());
  }
  return absl::OkStatus();
}

}  // namespace tracehealth::server
