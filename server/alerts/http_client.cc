#include "server/alerts/http_client.h"

#include <curl/curl.h>

#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tracehealth {
namespace {

constexpr size_t kMaxBody = 1 << 20;

size_t Append(char* data, size_t size, size_t nmemb, void* user) {
  auto* body = static_cast<std::string*>(user);
  size_t n = size * nmemb;
  if (body->size() < kMaxBody)
    body->append(data, std::min(n, kMaxBody - body->size()));
  return n;
}

// Keeps the Retry-After header's value.
size_t Header(char* data, size_t size, size_t nitems, void* user) {
  const size_t n = size * nitems;
  absl::string_view line(data, n);
  constexpr absl::string_view kName = "retry-after:";
  if (line.size() > kName.size() &&
      absl::EqualsIgnoreCase(line.substr(0, kName.size()), kName)) {
    *static_cast<std::string*>(user) =
        std::string(absl::StripAsciiWhitespace(line.substr(kName.size())));
  }
  return n;
}

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

absl::StatusOr<HttpResponse> Perform(const std::string& url,
                                     const std::string* post,
                                     absl::Duration timeout) {
  GlobalInit();
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return absl::InternalError("curl_easy_init failed");
  HttpResponse response;
  struct curl_slist* headers = nullptr;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(timeout)));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &Header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response.retry_after);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  if (post != nullptr) {
    headers = curl_slist_append(headers, "Content-Type: application/json");
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, post->data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE,
                     static_cast<long>(post->size()));
  }
  CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK) {
    std::string msg = absl::StrCat(url, ": ", curl_easy_strerror(rc));
    switch (rc) {
      case CURLE_COULDNT_CONNECT:
      case CURLE_COULDNT_RESOLVE_HOST:
      case CURLE_OPERATION_TIMEDOUT:
      case CURLE_SEND_ERROR:
      case CURLE_RECV_ERROR:
      case CURLE_GOT_NOTHING:
        return absl::UnavailableError(msg);
      default:
        return absl::InternalError(msg);
    }
  }
  return response;
}

}  // namespace

absl::StatusOr<HttpResponse> HttpPostJson(const std::string& url,
                                          absl::string_view json,
                                          absl::Duration timeout) {
  std::string body(json);
  return Perform(url, &body, timeout);
}

absl::StatusOr<HttpResponse> HttpGet(const std::string& url,
                                     absl::Duration timeout) {
  return Perform(url, nullptr, timeout);
}

}  // namespace tracehealth
