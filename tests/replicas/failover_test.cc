// A PostgreSQL primary failover under load, with the parts a deployment
// uses, all Debian's and on loopback: etcd, two PostgreSQL 15 nodes run by
// Patroni with synchronous streaming replication (deploy/patroni/
// patroni.yml as shipped), HAProxy (deploy/haproxy/tracehealth.cfg as
// shipped) in front of two tracehealth-server replicas for gRPC and for one
// replica's PostgreSQL connection (the other uses a multi-host DSN with
// target_session_attrs=read-write). Simulated agents and a real agent
// stream through HAProxy.
//
// The primary's Patroni and PostgreSQL get SIGKILL under load. Checked:
// every acked (host, seq) is stored exactly once on the new primary, the
// agents carry on, queries through HAProxy see every host. Printed: how
// long until acks resumed, and until Patroni had promoted the standby.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "postgresql/libpq-fe.h"
#include "tests/reliability/processes.h"
#include "tests/replicas/replica_env.h"
#include "tests/replicas/sim_agent.h"
#include "tests/util/ports.h"
#include "tests/util/postgres_cluster.h"
#include "tests/util/process_reaper.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

constexpr int kAgents = 40;
constexpr absl::Duration kPeriod = absl::Milliseconds(200);

// The status code of GET http://127.0.0.1:port/path (0: no answer).
int HttpStatus(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  timeval tv{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  int status = 0;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    const std::string req =
        absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    if (write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
      char buf[64] = {};
      ssize_t n = read(fd, buf, sizeof(buf) - 1);
      // "HTTP/1.0 200 OK"
      if (n > 12) (void)absl::SimpleAtoi(std::string(buf + 9, 3), &status);
    }
  }
  close(fd);
  return status;
}

bool WaitStatus(int port, const std::string& path, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (HttpStatus(port, path) == 200) return true;
    absl::SleepFor(absl::Milliseconds(100));
  }
  return false;
}

// Whether the server at `dsn` is a primary (not in recovery).
bool IsPrimary(const std::string& dsn) {
  const char* keys[] = {"dbname", nullptr};
  const char* values[] = {dsn.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, 1);
  bool primary = false;
  if (PQstatus(conn) == CONNECTION_OK) {
    PGresult* r = PQexec(conn, "SELECT pg_is_in_recovery()");
    primary = PQresultStatus(r) == PGRES_TUPLES_OK &&
              std::string(PQgetvalue(r, 0, 0)) == "f";
    PQclear(r);
  }
  PQfinish(conn);
  return primary;
}

bool WaitForPrimaryOnly(const std::string& dsn, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  int in_a_row = 0;
  while (absl::Now() < deadline && in_a_row < 10) {
    in_a_row = IsPrimary(dsn) ? in_a_row + 1 : 0;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return in_a_row >= 10;
}

// A server process of the test and the reaper that ends its group.
struct Daemon {
  std::unique_ptr<Subprocess> process;
  std::unique_ptr<ProcessReaper> reaper;
};

absl::StatusOr<Daemon> StartDaemon(
    const std::vector<std::string>& argv, const std::string& log,
    const std::map<std::string, std::string>& env = {}) {
  auto p = Subprocess::Start(argv, log, env);
  if (!p.ok()) return p.status();
  Daemon d;
  d.reaper = std::make_unique<ProcessReaper>((*p)->pid(), "");
  d.process = *std::move(p);
  return d;
}

std::string Tail(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return "(no log)";
  return text->size() > 3000 ? text->substr(text->size() - 3000) : *text;
}

struct Node {
  std::string name, dir;
  int pg_port = 0, rest_port = 0;
  Daemon patroni;
  std::unique_ptr<ProcessReaper> postmaster_reaper;
};

TEST(FailoverTest, PatroniPrimaryFailoverUnderLoad) {
  auto base = MakePostgresDir("tracehealth-patroni-");
  ASSERT_TRUE(base.ok()) << base.status();
  // Everything under `base` goes when the test ends, however it ends (the
  // daemons' reapers, declared later, kill them first).
  ProcessReaper remove_base(0, *base);
  const std::string config = *base + "/patroni.yml";
  std::filesystem::copy_file(Runfile("deploy/patroni/patroni.yml"), config);
  chmod(base->c_str(), 0755);
  chmod(config.c_str(), 0644);

  // etcd, as root, in its own directory.
  const int etcd_client = PickFreePort(), etcd_peer = PickFreePort();
  const std::string etcd_url = absl::StrCat("http://127.0.0.1:", etcd_client);
  const std::string peer_url = absl::StrCat("http://127.0.0.1:", etcd_peer);
  auto etcd = StartDaemon(
      {"/usr/bin/etcd", "--name=e0", "--data-dir=" + *base + "/etcd",
       "--listen-client-urls=" + etcd_url,
       "--advertise-client-urls=" + etcd_url, "--listen-peer-urls=" + peer_url,
       "--initial-advertise-peer-urls=" + peer_url,
       "--initial-cluster=e0=" + peer_url},
      *base + "/etcd.log");
  ASSERT_TRUE(etcd.ok()) << etcd.status();
  ASSERT_TRUE(WaitStatus(etcd_client, "/health", absl::Seconds(20)))
      << Tail(*base + "/etcd.log");

  std::vector<Node> nodes(2);
  auto start_node = [&](Node& n, int i) {
    n.name = absl::StrCat("node", i + 1);
    n.dir = *base + "/" + n.name;
    n.pg_port = PickFreePort();
    n.rest_port = PickFreePort();
    std::vector<std::string> argv = AsPostgresUser();
    for (const std::string& a :
         {std::string("/usr/bin/env"), std::string("-C"), *base,
          std::string("/usr/bin/patroni"), config}) {
      argv.push_back(a);
    }
    std::map<std::string, std::string> env = {
        {"HOME", *base},
        {"PATRONI_NAME", n.name},
        {"PATRONI_ETCD3_HOSTS", absl::StrCat("127.0.0.1:", etcd_client)},
        {"PATRONI_RESTAPI_LISTEN", absl::StrCat("127.0.0.1:", n.rest_port)},
        {"PATRONI_RESTAPI_CONNECT_ADDRESS",
         absl::StrCat("127.0.0.1:", n.rest_port)},
        {"PATRONI_POSTGRESQL_LISTEN", absl::StrCat("127.0.0.1:", n.pg_port)},
        {"PATRONI_POSTGRESQL_CONNECT_ADDRESS",
         absl::StrCat("127.0.0.1:", n.pg_port)},
        {"PATRONI_POSTGRESQL_DATA_DIR", n.dir + "/data"},
        {"PATRONI_POSTGRESQL_PGPASS", n.dir + ".pgpass"}};
    auto d = StartDaemon(argv, *base + "/" + n.name + ".log", env);
    ASSERT_TRUE(d.ok()) << d.status();
    n.patroni = *std::move(d);
  };
  // The postmaster Patroni starts may lead a group of its own: reap it too.
  auto reap_postmaster = [](Node& n) {
    auto pid_file = ReadFile(n.dir + "/data/postmaster.pid");
    int64_t pid = 0;
    if (pid_file.ok() &&
        absl::SimpleAtoi(pid_file->substr(0, pid_file->find('\n')), &pid) &&
        pid > 0) {
      pid_t group = getpgid(static_cast<pid_t>(pid));
      if (group > 0 && group != n.patroni.process->pid()) {
        n.postmaster_reaper = std::make_unique<ProcessReaper>(group, "");
      }
      return static_cast<pid_t>(pid);
    }
    return pid_t{0};
  };
  const absl::Time boot = absl::Now();
  start_node(nodes[0], 0);
  ASSERT_TRUE(WaitStatus(nodes[0].rest_port, "/primary", absl::Seconds(60)))
      << Tail(*base + "/node1.log");
  start_node(nodes[1], 1);
  ASSERT_TRUE(WaitStatus(nodes[1].rest_port, "/sync", absl::Seconds(60)))
      << Tail(*base + "/node2.log");
  std::printf("Patroni: node1 primary, node2 synchronous standby after %s\n",
              absl::FormatDuration(absl::Now() - boot).c_str());
  reap_postmaster(nodes[0]);
  reap_postmaster(nodes[1]);

  // HAProxy, then the replicas on the ports it expects.
  const int grpc_front = PickFreePort(), pg_front = PickFreePort();
  const int replica_ports[2] = {PickFreePort(), PickFreePort()};
  auto haproxy = StartDaemon(
      {"/usr/sbin/haproxy", "-db", "-f",
       Runfile("deploy/haproxy/tracehealth.cfg")},
      *base + "/haproxy.log",
      {{"TRACEHEALTH_GRPC_BIND", absl::StrCat("127.0.0.1:", grpc_front)},
       {"TRACEHEALTH_REPLICA_1", absl::StrCat("127.0.0.1:", replica_ports[0])},
       {"TRACEHEALTH_REPLICA_2", absl::StrCat("127.0.0.1:", replica_ports[1])},
       {"TRACEHEALTH_PG_BIND", absl::StrCat("127.0.0.1:", pg_front)},
       {"TRACEHEALTH_PG_1", absl::StrCat("127.0.0.1:", nodes[0].pg_port)},
       {"TRACEHEALTH_PG_2", absl::StrCat("127.0.0.1:", nodes[1].pg_port)},
       {"TRACEHEALTH_PATRONI_1", absl::StrCat(nodes[0].rest_port)},
       {"TRACEHEALTH_PATRONI_2", absl::StrCat(nodes[1].rest_port)}});
  ASSERT_TRUE(haproxy.ok()) << haproxy.status();
  const std::string multi_host_dsn = absl::StrCat(
      "host=127.0.0.1,127.0.0.1 port=", nodes[0].pg_port, ",", nodes[1].pg_port,
      " dbname=postgres user=postgres target_session_attrs=read-write "
      "connect_timeout=2");
  const std::string proxied_dsn = absl::StrCat(
      "host=127.0.0.1 port=", pg_front, " dbname=postgres user=postgres");
  ASSERT_TRUE(WaitForPostgres(proxied_dsn, absl::Seconds(20)).ok())
      << Tail(*base + "/haproxy.log");
  // HAProxy counts both nodes up until its first checks: wait until ten
  // connections in a row reach the primary.
  ASSERT_TRUE(WaitForPrimaryOnly(proxied_dsn, absl::Seconds(20)))
      << Tail(*base + "/haproxy.log");
  std::vector<ServerRun> replicas;
  for (int i = 0; i < 2; ++i) {
    const std::string dir = NewTempDir(absl::StrCat("failover-replica", i));
    auto r = StartServerAt(
        dir, absl::StrCat("127.0.0.1:", replica_ports[i]), dir + "/server.log",
        {"--store=postgres", "--host_report_rate=0",
         "--postgres_dsn=" + (i == 0 ? multi_host_dsn : proxied_dsn),
         absl::StrCat("--replica_name=replica", i)});
    ASSERT_TRUE(r.ok()) << r.status();
    replicas.push_back(*std::move(r));
  }
  const std::string front = absl::StrCat("127.0.0.1:", grpc_front);
  // HAProxy checks the replicas once a second: wait until it routes.
  for (const absl::Time until = absl::Now() + absl::Seconds(20);
       !ListedHosts(front).ok() && absl::Now() < until;) {
    absl::SleepFor(absl::Milliseconds(100));
  }

  std::vector<std::unique_ptr<SimAgent>> agents;
  std::atomic<bool> stop{false};
  for (int i = 0; i < kAgents; ++i) {
    agents.push_back(std::make_unique<SimAgent>(std::vector<std::string>{front},
                                                "failover-", i, 0, kPeriod));
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < kAgents; ++i) {
    threads.emplace_back([&, i] {
      agents[i]->Run(stop, kPeriod * i / kAgents, absl::Seconds(40));
    });
  }
  const std::string agent_dir = NewTempDir("failover-agent");
  auto agent = StartAgent("kprobe-multi-6.14", front, agent_dir + "/state",
                          "failover-agent", absl::Milliseconds(250),
                          agent_dir + "/agent.log");
  ASSERT_TRUE(agent.ok()) << agent.status();
  auto acked = [&] {
    uint64_t n = 0;
    for (auto& a : agents) n += a->acked();
    return n;
  };
  absl::SleepFor(absl::Seconds(5));
  ASSERT_GT(acked(), 0u) << Tail(*base + "/haproxy.log");

  // The primary dies: its Patroni and its PostgreSQL, at once.
  const pid_t postmaster = reap_postmaster(nodes[0]);
  ASSERT_GT(postmaster, 0);
  const absl::Time killed = absl::Now();
  kill(-nodes[0].patroni.process->pid(), SIGKILL);
  kill(-getpgid(postmaster), SIGKILL);
  kill(postmaster, SIGKILL);
  nodes[0].patroni.process->Kill();
  const uint64_t acked_at_kill = acked();
  absl::Duration resumed = absl::InfiniteDuration(),
                 promoted = absl::InfiniteDuration();
  while (absl::Now() - killed < absl::Seconds(60)) {
    if (promoted == absl::InfiniteDuration() &&
        HttpStatus(nodes[1].rest_port, "/primary") == 200) {
      promoted = absl::Now() - killed;
    }
    if (acked() > acked_at_kill + kAgents) {
      resumed = absl::Now() - killed;
      break;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  std::printf(
      "primary killed: node2 promoted after %s, acks resumed after %s "
      "(ttl 10 s, loop_wait 2 s, retry_timeout 4 s)\n",
      absl::FormatDuration(promoted).c_str(),
      absl::FormatDuration(resumed).c_str());
  ASSERT_NE(resumed, absl::InfiniteDuration())
      << Tail(*base + "/node2.log")
      << Tail(replicas[0].process ? *base + "/haproxy.log" : "");
  absl::SleepFor(absl::Seconds(4));
  stop.store(true);
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE((*agent)->Signal(SIGTERM).ok());
  ASSERT_TRUE((*agent)->Wait(absl::Seconds(30)).ok());

  // What the new primary holds: every acked report once.
  const std::string node2_dsn =
      absl::StrCat("host=127.0.0.1 port=", nodes[1].pg_port,
                   " dbname=postgres user=postgres");
  ExactlyOnce e = CheckExactlyOnce(node2_dsn, agents);
  std::printf(
      "failover: made %llu, acked %llu, held %llu, lost %llu, stored twice "
      "%llu, "
      "streams %d\n",
      static_cast<unsigned long long>(e.made),
      static_cast<unsigned long long>(e.acked),
      static_cast<unsigned long long>(e.held),
      static_cast<unsigned long long>(e.lost),
      static_cast<unsigned long long>(e.doubled), e.streams);
  EXPECT_EQ(e.first_problem, "");
  EXPECT_EQ(e.lost, 0u);
  EXPECT_EQ(e.doubled, 0u);
  EXPECT_EQ(e.acked, e.made);
  EXPECT_GT(e.acked, acked_at_kill + kAgents * 10) << "agents did not carry on";
  auto real = PgStoredSeqs(node2_dsn, "failover-agent");
  ASSERT_TRUE(real.ok()) << real.status();
  ASSERT_FALSE(real->empty());
  EXPECT_EQ(CheckContiguous(*real, 1, real->back()), "");
  // Both replicas lived through it; queries through HAProxy see every host.
  EXPECT_TRUE(replicas[0].process->running());
  EXPECT_TRUE(replicas[1].process->running());
  auto listed = ListedHosts(front);
  ASSERT_TRUE(listed.ok()) << listed.status();
  std::vector<std::string> want = {"failover-agent"};
  for (auto& a : agents) want.push_back(a->host_id());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(*listed, want);
}

}  // namespace
}  // namespace tracehealth::testing
