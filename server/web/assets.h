// The fleet page's files, compiled into the binary (embed_assets.py writes
// their bytes; server/web/BUILD.bazel lists them): no file is read and
// nothing is fetched at run time.
#ifndef TRACEHEALTH_SERVER_WEB_ASSETS_H_
#define TRACEHEALTH_SERVER_WEB_ASSETS_H_

#include <cstddef>

namespace tracehealth::server {

struct WebAsset {
  const char* path;          // URL path, e.g. "/static/app.js"
  const char* content_type;  // e.g. "text/javascript; charset=utf-8"
  const unsigned char* data;
  size_t size;
};

extern const WebAsset kWebAssets[];
extern const size_t kWebAssetCount;

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_WEB_ASSETS_H_
