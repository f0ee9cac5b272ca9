#include "server/storage/postgres/pg_connection.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/util/postgres_cluster.h"

namespace tracehealth::server {
namespace {

TEST(DescribeDsnTest, ShowsWhereButNeverThePassword) {
  EXPECT_EQ(DescribeDsn("host=db1,db2 port=5433 dbname=th user=th "
                        "password=s3cret target_session_attrs=read-write"),
            "host=db1,db2 port=5433 dbname=th user=th "
            "target_session_attrs=read-write");
  EXPECT_EQ(DescribeDsn("postgresql://th:s3cret@db1:5433/th"),
            "host=db1 port=5433 dbname=th user=th");
  EXPECT_EQ(DescribeDsn("host='unterminated"), "(unparsable DSN)");
}

TEST(PgArrayTest, QuotesEveryItem) {
  EXPECT_EQ(PgArray(std::vector<std::string>{"a", "b\"c", "d\\e", ""}),
            R"({"a","b\"c","d\\e",""})");
  EXPECT_EQ(PgArray(std::vector<int64_t>{1, -2}), "{1,-2}");
  EXPECT_EQ(PgArray(std::vector<int64_t>{}), "{}");
}

TEST(PgConnectionTest, WrongDsnIsUnavailableNamingTheServer) {
  // Nothing listens on port 1.
  auto c =
      PgConnection::Connect("host=127.0.0.1 port=1 dbname=x user=y password=z");
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::IsUnavailable(c.status())) << c.status();
  const std::string msg(c.status().message());
  EXPECT_NE(
      msg.find(
          "postgres: cannot connect (host=127.0.0.1 port=1 dbname=x user=y)"),
      std::string::npos)
      << msg;
  EXPECT_EQ(msg.find("password"), std::string::npos) << msg;
}

TEST(PgConnectionTest, ArraysAndBytesRoundTripThroughTheServer) {
  auto cluster = testing::PostgresCluster::Start();
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto c = PgConnection::Connect((*cluster)->Dsn());
  ASSERT_TRUE(c.ok()) << c.status();
  auto r = (*c)->Exec(
      "SELECT array_length($1::text[], 1), ($1::text[])[2]",
      PgParams().Text(PgArray(std::vector<std::string>{"a", "b\"c,}", "d"})));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->Int(0, 0), 3);
  EXPECT_EQ(r->Text(0, 1), "b\"c,}");
  const std::string bytes("\0\x01\xff", 3);
  r = (*c)->Exec("SELECT $1::bytea, length($1::bytea)", PgParams().Bytes(bytes),
                 /*binary_result=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->Text(0, 0), bytes);
  // A unique violation is AlreadyExists with its SQLSTATE.
  ASSERT_TRUE(
      (*c)->Run("CREATE TABLE t (k int PRIMARY KEY); INSERT INTO t VALUES (1)")
          .ok());
  absl::Status st = (*c)->Run("INSERT INTO t VALUES (1)");
  EXPECT_TRUE(absl::IsAlreadyExists(st)) << st;
  EXPECT_NE(st.message().find("SQLSTATE 23505"), std::string::npos) << st;
  // The server going away makes the connection unhealthy and the error
  // Unavailable.
  (*cluster)->Kill();
  st = (*c)->Run("SELECT 1");
  EXPECT_TRUE(absl::IsUnavailable(st)) << st;
  EXPECT_FALSE((*c)->healthy());
}

}  // namespace
}  // namespace tracehealth::server
