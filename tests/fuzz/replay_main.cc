// Replay driver for libFuzzer targets in ordinary (non-fuzzing) builds.
//
// Runs LLVMFuzzerTestOneInput once over every file named on the command line
// (directories are walked, sorted, recursively), so each fuzz target doubles
// as a regression test over its seed corpus with any compiler. Exits 1 when
// no input was found (a misconfigured corpus must not pass silently) or when
// an input cannot be read; a crash in the target fails the process as it
// would under libFuzzer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool CollectInputs(const std::filesystem::path& path,
                   std::vector<std::filesystem::path>* out) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    std::vector<std::filesystem::path> entries;
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(path, ec)) {
      if (entry.is_regular_file(ec)) entries.push_back(entry.path());
    }
    if (ec) {
      std::fprintf(stderr, "replay: cannot list %s: %s\n", path.c_str(),
                   ec.message().c_str());
      return false;
    }
    std::sort(entries.begin(), entries.end());
    out->insert(out->end(), entries.begin(), entries.end());
    return true;
  }
  if (!std::filesystem::is_regular_file(path, ec)) {
    std::fprintf(stderr, "replay: no such input: %s\n", path.c_str());
    return false;
  }
  out->push_back(path);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;  // libFuzzer-style flags are ignored.
    if (!CollectInputs(argv[i], &inputs)) return 1;
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "replay: no inputs given\n");
    return 1;
  }
  size_t bytes = 0;
  for (const auto& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
      return 1;
    }
    std::string data((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    bytes += data.size();
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()),
                           data.size());
  }
  std::printf("replay: %zu inputs, %zu bytes, no crash\n", inputs.size(),
              bytes);
  return 0;
}
