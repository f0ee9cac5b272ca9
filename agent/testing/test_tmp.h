// A fresh temporary directory for unit tests (under TEST_TMPDIR).
#ifndef TRACEHEALTH_AGENT_TESTING_TEST_TMP_H_
#define TRACEHEALTH_AGENT_TESTING_TEST_TMP_H_

#include <stdlib.h>

#include <string>
#include <vector>

namespace tracehealth::agent {

inline std::string TestTempDir(const std::string& prefix) {
  const char* base = getenv("TEST_TMPDIR");
  std::string tmpl =
      std::string(base != nullptr ? base : "/tmp") + "/" + prefix + "XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  return mkdtemp(buf.data());
}

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_TESTING_TEST_TMP_H_
