#include "server/web/pages.h"

#include <string>

#include "server/web/assets.h"

namespace tracehealth::server {
namespace {

constexpr char kIndex[] = "/static/index.html";
constexpr char kPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors "
    "'none'";

HttpResponse Serve(const WebAsset& a) {
  HttpResponse r;
  r.content_type = a.content_type;
  r.body.assign(reinterpret_cast<const char*>(a.data), a.size);
  r.headers.emplace_back("Content-Security-Policy", kPolicy);
  r.headers.emplace_back("Cache-Control", "no-cache");
  return r;
}

}  // namespace

void AddPageRoutes(Router* router) {
  const WebAsset* index = nullptr;
  for (size_t i = 0; i < kWebAssetCount; ++i) {
    const WebAsset& a = kWebAssets[i];
    if (std::string(a.path) == kIndex) index = &a;
    router->Add({"GET", a.path, false, false,
                 [&a](const HttpRequest&) { return Serve(a); }});
  }
  if (index == nullptr) return;
  HttpHandler page = [index](const HttpRequest&) { return Serve(*index); };
  // Views of the page (app.js shows the one the path names).
  router->Add({"GET", "/", false, false, page});
  router->Add({"GET", "/hosts/*", false, false, page});
  router->Add({"GET", "/what-if", false, false, page});
  router->Add({"GET", "/rollout", false, false, page});
  router->Add({"GET", "/accuracy", false, false, page});
}

}  // namespace tracehealth::server
