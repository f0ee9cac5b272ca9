// Minimal HTTP client over libcurl for posting JSON (Alertmanager's v2 API)
// and reading JSON back in tests.
//
// Thread safety: the functions may be called from any thread; each call uses
// its own curl handle. CurlGlobalInit() must have run once before threads
// start (HttpPostJson calls it lazily and thread-safely).
#ifndef TRACEHEALTH_SERVER_ALERTS_HTTP_CLIENT_H_
#define TRACEHEALTH_SERVER_ALERTS_HTTP_CLIENT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tracehealth {

struct HttpResponse {
  long status = 0;
  std::string body;
};

// POSTs `json` with Content-Type application/json. Errors: Unavailable for
// connection failures and timeouts, Internal for other curl errors. A non-2xx
// status is returned as a response, not an error. Responses larger than
// 1 MiB are truncated.
absl::StatusOr<HttpResponse> HttpPostJson(const std::string& url,
                                          absl::string_view json,
                                          absl::Duration timeout);

// GETs `url`; same error mapping. Test-only: alertmanager_notifier_test
// reads back from a real Alertmanager what the notifier posted.
absl::StatusOr<HttpResponse> HttpGet(const std::string& url,
                                     absl::Duration timeout);

}  // namespace tracehealth

#endif  // TRACEHEALTH_SERVER_ALERTS_HTTP_CLIENT_H_
