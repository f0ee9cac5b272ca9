#include "server/auth/bearer_token.h"

#include <string>

namespace tracehealth::server {

bool BearerTokenMatches(std::string_view authorization,
                        std::string_view token) {
  const std::string want = "Bearer " + std::string(token);
  unsigned char diff = authorization.size() == want.size() ? 0 : 1;
  for (size_t i = 0; i < want.size(); ++i) {
    diff |= static_cast<unsigned char>(
        want[i] ^ (i < authorization.size() ? authorization[i] : 0));
  }
  return diff == 0;
}

}  // namespace tracehealth::server
