#include "server/web/pages.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/web/assets.h"

namespace tracehealth::server {
namespace {

HttpResponse Get(const Router& router, const std::string& path) {
  HttpRequest r;
  r.method = "GET";
  r.path = path;
  return router.Serve(r);
}

std::string Header(const HttpResponse& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

TEST(PagesTest, EveryViewIsTheOneDocumentWithAStrictPolicy) {
  Router router("token-not-needed-for-pages");
  AddPageRoutes(&router);
  HttpResponse index = Get(router, "/");
  ASSERT_EQ(index.status, 200);
  EXPECT_EQ(index.content_type, "text/html; charset=utf-8");
  EXPECT_TRUE(
      absl::StrContains(index.body, "<script src=\"/static/app.js\" defer>"));
  EXPECT_TRUE(absl::StrContains(Header(index, "Content-Security-Policy"),
                                "script-src 'self';"));
  EXPECT_TRUE(absl::StrContains(Header(index, "Content-Security-Policy"),
                                "default-src 'none'"));
  EXPECT_EQ(Get(router, "/hosts/db-1").body, index.body);
  EXPECT_EQ(Get(router, "/what-if").body, index.body);
  EXPECT_EQ(Get(router, "/rollout").body, index.body);
  EXPECT_EQ(Get(router, "/accuracy").body, index.body);
  EXPECT_EQ(Get(router, "/nope").status, 404);
  EXPECT_EQ(Get(router, "/rollouts").status, 404);
  // The views' scripts, each served from the binary.
  for (const char* js : {"/static/host.js", "/static/events.js",
                         "/static/rollout.js", "/static/accuracy.js"}) {
    EXPECT_TRUE(absl::StrContains(
        index.body, absl::StrCat("<script src=\"", js, "\" defer>")))
        << js;
    EXPECT_EQ(Get(router, js).status, 200) << js;
  }
}

TEST(PagesTest, TheFilesAreServedFromTheBinary) {
  Router router("");
  AddPageRoutes(&router);
  HttpResponse chart = Get(router, "/static/chart.min.js");
  ASSERT_EQ(chart.status, 200);
  EXPECT_EQ(chart.content_type, "text/javascript; charset=utf-8");
  EXPECT_TRUE(absl::StartsWith(chart.body, "/*!\n * Chart.js v3.9.1"))
      << chart.body.substr(0, 40);
  EXPECT_TRUE(
      absl::StrContains(Get(router, "/static/chart.js.copyright").body, "MIT"));
  EXPECT_EQ(Get(router, "/static/app.css").content_type,
            "text/css; charset=utf-8");
}

TEST(PagesTest, ThePageLoadsNothingFromElsewhereAndParsesNoHtml) {
  for (size_t i = 0; i < kWebAssetCount; ++i) {
    const WebAsset& a = kWebAssets[i];
    std::string body(reinterpret_cast<const char*>(a.data), a.size);
    // Debian's Chart.js names its site in comments; an SVG's xmlns is a name.
    if (absl::StrContains(a.path, "chart") || absl::EndsWith(a.path, ".svg"))
      continue;
    EXPECT_FALSE(absl::StrContains(body, "http://")) << a.path;
    EXPECT_FALSE(absl::StrContains(body, "https://")) << a.path;
    EXPECT_FALSE(absl::StrContains(body, "innerHTML")) << a.path;
    EXPECT_FALSE(absl::StrContains(body, "outerHTML")) << a.path;
    EXPECT_FALSE(absl::StrContains(body, "insertAdjacentHTML")) << a.path;
    EXPECT_FALSE(absl::StrContains(body, "document.write")) << a.path;
  }
}

}  // namespace
}  // namespace tracehealth::server
