#include "server/http/router.h"

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

HttpHandler Says(std::string what) {
  return [what](const HttpRequest& r) {
    return HttpResponse::Text(
        200, what + (r.path_rest.empty() ? "" : ":" + r.path_rest));
  };
}

Router MakeRouter(const std::string& token) {
  Router router(token);
  router.Add({"GET", "/metrics", false, false, Says("metrics")});
  router.Add({"GET", "/api/v1/hosts", true, true, Says("list")});
  router.Add({"GET", "/api/v1/hosts/*", true, true, Says("host")});
  router.Add({"POST", "/api/v1/predict", true, true, Says("predict")});
  router.Add({"GET", "/hosts/*", false, false, Says("page")});
  return router;
}

HttpRequest Req(std::string method, std::string path, std::string auth = "") {
  HttpRequest r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.authorization = std::move(auth);
  return r;
}

TEST(RouterTest, ExactPathsPrefixesAndTheirRest) {
  Router router = MakeRouter("");
  EXPECT_EQ(router.Serve(Req("GET", "/metrics")).body, "metrics");
  EXPECT_EQ(router.Serve(Req("GET", "/api/v1/hosts")).body, "list");
  EXPECT_EQ(router.Serve(Req("GET", "/api/v1/hosts/db-1")).body, "host:db-1");
  EXPECT_EQ(router.Serve(Req("GET", "/api/v1/hosts/db-1/history")).body,
            "host:db-1/history");
  EXPECT_EQ(router.Serve(Req("GET", "/hosts/a")).body, "page:a");
}

TEST(RouterTest, UnknownPathsAre404AndOtherMethods405WithAllow) {
  Router router = MakeRouter("");
  EXPECT_EQ(router.Serve(Req("GET", "/nope")).status, 404);
  EXPECT_EQ(router.Serve(Req("GET", "/metricsX")).status, 404);
  EXPECT_EQ(router.Serve(Req("GET", "/api/v1/hosts/")).status,
            404);  // empty rest
  EXPECT_EQ(router.Serve(Req("GET", "/hosts")).status, 404);
  HttpResponse r = router.Serve(Req("GET", "/api/v1/predict"));
  EXPECT_EQ(r.status, 405);
  ASSERT_EQ(r.headers.size(), 2u);
  EXPECT_EQ(r.headers[1].first, "Allow");
  EXPECT_EQ(r.headers[1].second, "POST");
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(r.body, R"({"error":{"code":405,"message":"method not allowed"}})");
}

TEST(RouterTest, TokenRoutesNeedTheExactBearerToken) {
  Router router = MakeRouter("s3cret");
  HttpResponse missing = router.Serve(Req("GET", "/api/v1/hosts"));
  EXPECT_EQ(missing.status, 401);
  EXPECT_EQ(missing.body,
            R"({"error":{"code":401,"message":"bearer token required"}})");
  bool challenge = false;
  for (const auto& [k, v] : missing.headers) {
    challenge |= k == "WWW-Authenticate" && v == "Bearer realm=\"tracehealth\"";
  }
  EXPECT_TRUE(challenge);
  EXPECT_EQ(router.Serve(Req("GET", "/api/v1/hosts", "Bearer wrong")).status,
            403);
  EXPECT_EQ(router.Serve(Req("GET", "/api/v1/hosts", "s3cret")).status, 403);
  EXPECT_EQ(router.Serve(Req("GET", "/api/v1/hosts/x", "Bearer s3cret")).body,
            "host:x");
  // Public routes ignore it.
  EXPECT_EQ(router.Serve(Req("GET", "/metrics")).status, 200);
  EXPECT_EQ(router.Serve(Req("GET", "/metrics", "Bearer wrong")).status, 200);
}

TEST(RouterTest, WithoutATokenEveryRouteIsOpen) {
  Router router = MakeRouter("");
  EXPECT_EQ(router.Serve(Req("GET", "/api/v1/hosts")).status, 200);
  EXPECT_EQ(
      router.Serve(Req("POST", "/api/v1/predict", "Bearer anything")).status,
      200);
}

TEST(RouterTest, JsonErrorsEscapeTheMessage) {
  HttpResponse r = ErrorResponse(400, "bad \"x\"\n<y>", true);
  EXPECT_EQ(r.body,
            R"({"error":{"code":400,"message":"bad \"x\"\n\u003cy\u003e"}})");
  EXPECT_EQ(ErrorResponse(400, "plain", false).body, "plain\n");
}

}  // namespace
}  // namespace tracehealth::server
