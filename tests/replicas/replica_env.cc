#include "tests/replicas/replica_env.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "postgresql/libpq-fe.h"
#include "proto/tracehealth/v1/query.grpc.pb.h"
#include "server/storage/heartbeat_chunk.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {

absl::StatusOr<ServerRun> StartReplica(
    const std::string& name, const std::string& dsn,
    const std::vector<std::string>& extra_flags) {
  const std::string dir = NewTempDir(name + "-");
  std::vector<std::string> flags = {"--store=postgres", "--postgres_dsn=" + dsn,
                                    "--host_report_rate=0",
                                    "--replica_name=" + name};
  flags.insert(flags.end(), extra_flags.begin(), extra_flags.end());
  return StartServerAt(dir, "127.0.0.1:0", dir + "/server.log", flags);
}

absl::StatusOr<std::vector<uint64_t>> PgStoredSeqs(const std::string& dsn,
                                                   const std::string& host) {
  const char* keys[] = {"dbname", nullptr};
  const char* values[] = {dsn.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, 1);
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string msg = PQerrorMessage(conn);
    PQfinish(conn);
    return absl::UnavailableError(msg);
  }
  const char* params[] = {host.c_str()};
  PGresult* r = PQexecParams(
      conn, "SELECT seq FROM reports WHERE host_id = $1 ORDER BY seq", 1,
      nullptr, params, nullptr, nullptr, 0);
  std::vector<uint64_t> out;
  absl::Status st;
  if (PQresultStatus(r) != PGRES_TUPLES_OK) {
    st = absl::InternalError(PQresultErrorMessage(r));
  } else {
    for (int i = 0; i < PQntuples(r); ++i)
      out.push_back(std::stoull(PQgetvalue(r, i, 0)));
  }
  PQclear(r);
  // ... and those stored as heartbeats (chunks read in binary).
  if (st.ok()) {
    r = PQexecParams(conn, "SELECT chunk FROM heartbeats WHERE host_id = $1", 1,
                     nullptr, params, nullptr, nullptr, 1);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
      st = absl::InternalError(PQresultErrorMessage(r));
    }
    for (int i = 0; st.ok() && i < PQntuples(r); ++i) {
      absl::StatusOr<std::vector<server::Beat>> beats = server::DecodeChunk(
          absl::string_view(PQgetvalue(r, i, 0), PQgetlength(r, i, 0)));
      if (!beats.ok()) {
        st = beats.status();
        break;
      }
      for (const server::Beat& b : *beats) out.push_back(b.seq);
    }
    PQclear(r);
    std::sort(out.begin(), out.end());
  }
  PQfinish(conn);
  if (!st.ok()) return st;
  return out;
}

absl::StatusOr<std::vector<std::string>> ListedHosts(
    const std::string& address) {
  auto channel =
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  auto stub = v1::FleetQuery::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::ListHostsRequest req;
  req.set_limit(10000);
  v1::ListHostsResponse resp;
  grpc::Status st = stub->ListHosts(&ctx, req, &resp);
  if (!st.ok()) return absl::UnavailableError(st.error_message());
  std::vector<std::string> out;
  for (const v1::HostSummary& h : resp.hosts()) out.push_back(h.host_id());
  std::sort(out.begin(), out.end());
  return out;
}

ExactlyOnce CheckExactlyOnce(
    const std::string& dsn,
    const std::vector<std::unique_ptr<SimAgent>>& agents) {
  ExactlyOnce e;
  for (const auto& a : agents) {
    e.made += a->made();
    e.acked += a->acked();
    e.streams += a->streams();
    if (a->acked() < a->made()) e.unacked += a->made() - a->acked();
    absl::StatusOr<std::vector<uint64_t>> seqs =
        PgStoredSeqs(dsn, a->host_id());
    if (!seqs.ok()) {
      e.first_problem = seqs.status().ToString();
      return e;
    }
    std::vector<uint64_t> s = *seqs;
    const size_t all = s.size();
    s.erase(std::unique(s.begin(), s.end()), s.end());
    e.doubled += all - s.size();
    for (uint64_t seq = 1; seq <= a->made(); ++seq) {
      if (std::binary_search(s.begin(), s.end(), seq)) {
        ++e.held;
      } else {
        ++e.lost;
        if (e.first_problem.empty()) {
          e.first_problem =
              absl::StrCat(a->host_id(), " seq ", seq, " missing");
        }
      }
    }
    if (all != s.size() && e.first_problem.empty()) {
      e.first_problem = absl::StrCat(a->host_id(), " has seqs stored twice");
    }
  }
  return e;
}

}  // namespace tracehealth::testing
