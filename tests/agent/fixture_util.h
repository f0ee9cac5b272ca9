// Helpers for agent tests over fixture host trees.
#ifndef TRACEHEALTH_TESTS_AGENT_FIXTURE_UTIL_H_
#define TRACEHEALTH_TESTS_AGENT_FIXTURE_UTIL_H_

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "proto/tracehealth/v1/snapshot.pb.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {

// Absolute path of fixture host `name` in the runfiles.
inline std::string FixtureRoot(const std::string& name) {
  return Runfile(absl::StrCat("tests/fixtures/hosts/", name));
}

// A writable copy of fixture `name` in a fresh temp dir.
inline std::string CopyFixture(const std::string& name) {
  std::string dst = NewTempDir(name + "-") + "/root";
  std::filesystem::copy(FixtureRoot(name), dst,
                        std::filesystem::copy_options::recursive);
  return dst;
}

// The reason recorded for unknown input `input`, or "" when it is known.
inline std::string UnknownReason(const v1::HostSnapshot& s,
                                 const std::string& input) {
  for (const v1::UnknownInput& u : s.unknown()) {
    if (u.input() == input) return u.reason().empty() ? "?" : u.reason();
  }
  return "";
}

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_TESTS_AGENT_FIXTURE_UTIL_H_
