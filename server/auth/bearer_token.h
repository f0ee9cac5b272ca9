// Bearer-token checks shared by the gRPC query API and the HTTP side.
#ifndef TRACEHEALTH_SERVER_AUTH_BEARER_TOKEN_H_
#define TRACEHEALTH_SERVER_AUTH_BEARER_TOKEN_H_

#include <string_view>

namespace tracehealth::server {

// Whether `authorization` (a header or metadata value) is exactly
// "Bearer " + `token`. Takes the same time for every value of the same
// length, so a mismatch does not tell how much of it was right.
bool BearerTokenMatches(std::string_view authorization, std::string_view token);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_AUTH_BEARER_TOKEN_H_
