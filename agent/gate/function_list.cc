#include "agent/gate/function_list.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace tracehealth::agent {
namespace {

constexpr uint64_t kFunctionListMax = 64ull << 20;

}  // namespace

void FunctionList::AddLine(absl::string_view line) {
  line = absl::StripAsciiWhitespace(line);
  if (line.empty()) return;
  absl::string_view name = line, module;
  const size_t space = line.find_first_of(" \t");
  if (space != absl::string_view::npos) {
    name = line.substr(0, space);
    absl::string_view rest = absl::StripAsciiWhitespace(line.substr(space));
    if (absl::ConsumePrefix(&rest, "[") && absl::ConsumeSuffix(&rest, "]")) {
      module = rest;
    }
  }
  Entry e;
  e.name_offset = static_cast<uint32_t>(names_.size());
  e.name_size = static_cast<uint32_t>(name.size());
  names_.append(name.data(), name.size());
  e.module_offset = static_cast<uint32_t>(names_.size());
  e.module_size = static_cast<uint32_t>(module.size());
  names_.append(module.data(), module.size());
  entries_.push_back(e);
}

FunctionList FunctionList::FromText(absl::string_view text) {
  FunctionList list;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == absl::string_view::npos) end = text.size();
    list.AddLine(text.substr(start, end - start));
    start = end + 1;
  }
  return list;
}

absl::StatusOr<FunctionList> FunctionList::Load(const HostFs& fs,
                                                const std::string& path) {
  FunctionList list;
  absl::StatusOr<uint64_t> lines =
      fs.ReadLines(path, kFunctionListMax,
                   [&list](absl::string_view line) { list.AddLine(line); });
  if (!lines.ok()) return lines.status();
  return list;
}

uint64_t FunctionList::Count(const FtraceFilter& filter) const {
  const absl::string_view all(names_);
  uint64_t n = 0;
  for (const Entry& e : entries_) {
    n += filter.Matches(all.substr(e.name_offset, e.name_size),
                        all.substr(e.module_offset, e.module_size));
  }
  return n;
}

absl::StatusOr<FunctionCache::Counted> FunctionCache::Count(
    const std::string& tracefs, std::optional<uint64_t> expected_lines,
    const FtraceFilter& filter) {
  const std::string path = tracefs + "/available_filter_functions";
  absl::MutexLock lock(&mu_);
  if (list_ == nullptr || path_ != path ||
      (expected_lines.has_value() && *expected_lines != list_->size())) {
    absl::StatusOr<FunctionList> loaded = FunctionList::Load(*fs_, path);
    ++loads_;
    if (!loaded.ok()) {
      list_.reset();
      counts_.clear();
      return loaded.status();
    }
    list_ = std::make_shared<const FunctionList>(*std::move(loaded));
    path_ = path;
    counts_.clear();
  }
  Counted out;
  out.functions = list_->size();
  auto it = counts_.find(filter.text());
  if (it != counts_.end()) {
    out.matches = it->second;
    return out;
  }
  out.matches = list_->Count(filter);
  if (counts_.size() >= kMaxCachedCounts) counts_.clear();
  counts_.emplace(filter.text(), out.matches);
  return out;
}

uint64_t FunctionCache::loads() const {
  absl::MutexLock lock(&mu_);
  return loads_;
}

}  // namespace tracehealth::agent
