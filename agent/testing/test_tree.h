// Writes small host trees for unit tests (files created with parents).
#ifndef TRACEHEALTH_AGENT_TESTING_TEST_TREE_H_
#define TRACEHEALTH_AGENT_TESTING_TEST_TREE_H_

#include <sys/stat.h>

#include <fstream>
#include <string>

#include "agent/testing/test_tmp.h"

namespace tracehealth::agent {

class TestTree {
 public:
  TestTree() : root_(TestTempDir("tree")) {}
  const std::string& root() const { return root_; }
  // Writes `content` at host path `path` ("/proc/loadavg").
  void Write(const std::string& path, const std::string& content) const {
    std::string full = root_ + path;
    for (size_t p = full.find('/', root_.size() + 1); p != std::string::npos;
         p = full.find('/', p + 1)) {
      mkdir(full.substr(0, p).c_str(), 0755);
    }
    std::ofstream(full, std::ios::binary | std::ios::trunc) << content;
  }

 private:
  std::string root_;
};

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_TESTING_TEST_TREE_H_
