#include "common/flag_help.h"

#include <algorithm>
#include <cstring>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tracehealth {
namespace {

bool IsHelpArg(absl::string_view a) {
  return a == "--help" || a == "-help" || a == "-h" || a == "--help=true";
}

void AppendEntry(const absl::CommandLineFlag& f, std::string* out) {
  const std::string def = f.DefaultValue();
  absl::StrAppend(out, "  --", f.Name(), def.empty() ? "" : "=", def,
                  "\n      ", f.Help(), "\n");
}

}  // namespace

bool WantsHelp(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) return false;
    if (IsHelpArg(argv[i])) return true;
  }
  return false;
}

std::vector<char*> WithoutHelp(int argc, char** argv) {
  std::vector<char*> out;
  bool after_dashes = false;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) after_dashes = true;
    if (i > 0 && !after_dashes && IsHelpArg(argv[i])) continue;
    out.push_back(argv[i]);
  }
  return out;
}

std::string FlagHelp(absl::string_view usage,
                     const std::vector<std::string>& files) {
  std::vector<const absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    const std::string file = flag->Filename();
    for (const std::string& f : files) {
      if (absl::EndsWith(file, f)) {
        flags.push_back(flag);
        break;
      }
    }
  }
  std::sort(flags.begin(), flags.end(),
            [](const auto* a, const auto* b) { return a->Name() < b->Name(); });
  std::string out = absl::StrCat(usage, "\n\nFlags:\n");
  for (const absl::CommandLineFlag* f : flags) AppendEntry(*f, &out);
  absl::StrAppend(&out,
                  "\n--helpfull lists the flags of every library as well.\n");
  return out;
}

std::string FlagEntries(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) {
    if (const absl::CommandLineFlag* f = absl::FindCommandLineFlag(name)) {
      AppendEntry(*f, &out);
    }
  }
  return out;
}

}  // namespace tracehealth
