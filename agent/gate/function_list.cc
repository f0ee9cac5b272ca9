#include "agent/gate/function_list.h"

#include <algorithm>
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
  list.Sort();
  return list;
}

absl::StatusOr<FunctionList> FunctionList::Load(const HostFs& fs,
                                                const std::string& path) {
  FunctionList list;
  absl::StatusOr<uint64_t> lines =
      fs.ReadLines(path, kFunctionListMax,
                   [&list](absl::string_view line) { list.AddLine(line); });
  if (!lines.ok()) return lines.status();
  list.Sort();
  return list;
}

void FunctionList::Sort() {
  by_name_.resize(entries_.size());
  for (size_t i = 0; i < entries_.size(); ++i) {
    by_name_[i] = static_cast<uint32_t>(i);
  }
  std::sort(by_name_.begin(), by_name_.end(), [this](uint32_t a, uint32_t b) {
    return Name(entries_[a]) < Name(entries_[b]);
  });
}

uint64_t FunctionList::Count(const FtraceFilter& filter) const {
  if (std::optional<FtraceFilter::Simple> simple = filter.simple()) {
    // One name or one prefix: a range of the sorted names.
    const absl::string_view lit = simple->literal;
    auto first = std::partition_point(
        by_name_.begin(), by_name_.end(),
        [&](uint32_t i) { return Name(entries_[i]) < lit; });
    auto last = std::partition_point(first, by_name_.end(), [&](uint32_t i) {
      const absl::string_view n = Name(entries_[i]);
      return simple->prefix ? absl::StartsWith(n, lit) : n == lit;
    });
    return static_cast<uint64_t>(last - first);
  }
  const absl::string_view all(names_);
  uint64_t n = 0;
  for (const Entry& e : entries_) {
    n += filter.Matches(Name(e), all.substr(e.module_offset, e.module_size));
  }
  return n;
}

absl::Status FunctionCache::LoadIfStale(
    const std::string& path, std::optional<uint64_t> expected_lines) {
  if (list_ != nullptr && path_ == path &&
      (!expected_lines.has_value() || *expected_lines == list_->size())) {
    return absl::OkStatus();
  }
  absl::StatusOr<FunctionList> loaded = FunctionList::Load(*fs_, path);
  ++loads_;
  counts_.clear();
  if (!loaded.ok()) {
    list_.reset();
    return loaded.status();
  }
  list_ = std::make_shared<const FunctionList>(*std::move(loaded));
  path_ = path;
  return absl::OkStatus();
}

absl::Status FunctionCache::Warm(const std::string& tracefs,
                                 std::optional<uint64_t> expected_lines) {
  absl::MutexLock lock(&mu_);
  return LoadIfStale(tracefs + "/available_filter_functions", expected_lines);
}

absl::StatusOr<FunctionCache::Counted> FunctionCache::Count(
    const std::string& tracefs, std::optional<uint64_t> expected_lines,
    const FtraceFilter& filter) {
  absl::MutexLock lock(&mu_);
  absl::Status loaded =
      LoadIfStale(tracefs + "/available_filter_functions", expected_lines);
  if (!loaded.ok()) return loaded;
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
