#include "common/models/stackdepot/page_owner_stacks.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tracehealth {

absl::StatusOr<std::vector<OwnerStack>> ParsePageOwnerStacks(
    absl::string_view text) {
  std::vector<OwnerStack> out;
  OwnerStack current;
  int line_no = 0;
  constexpr absl::string_view kCount = "nr_base_pages:";
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (line.front() == ' ' || line.front() == '\t') {
      absl::string_view frame = absl::StripAsciiWhitespace(line);
      if (frame.empty()) continue;
      current.frames.emplace_back(frame);
      continue;
    }
    if (absl::StartsWith(line, kCount)) {
      if (current.frames.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "show_stacks line ", line_no, ": count without frames"));
      }
      absl::string_view number =
          absl::StripAsciiWhitespace(line.substr(kCount.size()));
      if (!absl::SimpleAtoi(number, &current.nr_base_pages)) {
        return absl::InvalidArgumentError(
            absl::StrCat("show_stacks line ", line_no, ": bad nr_base_pages '",
                         number, "'"));
      }
      out.push_back(std::move(current));
      current = OwnerStack();
      continue;
    }
    return absl::InvalidArgumentError(absl::StrCat("show_stacks line ", line_no,
                                                   ": unexpected '",
                                                   line.substr(0, 80), "'"));
  }
  if (!current.frames.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("show_stacks: ", current.frames.size(),
                     " frames at the end without nr_base_pages (truncated)"));
  }
  return out;
}

uint64_t FrameAddressMap::AddressOf(absl::string_view frame) {
  // A frame printed as a bare address ("0xffffffffc0a01234") is that address.
  uint64_t literal = 0;
  if (absl::StartsWith(frame, "0x") &&
      frame.find_first_of("+/ ") == absl::string_view::npos &&
      absl::SimpleHexAtoi(frame, &literal)) {
    return literal;
  }
  auto [it, inserted] = ids_.try_emplace(std::string(frame), 0);
  if (inserted) it->second = kSyntheticBase + 16 * (ids_.size() - 1);
  return it->second;
}

std::vector<uint64_t> FrameAddressMap::Addresses(
    const std::vector<std::string>& frames) {
  std::vector<uint64_t> out;
  out.reserve(frames.size());
  for (const std::string& f : frames) out.push_back(AddressOf(f));
  return out;
}

}  // namespace tracehealth
