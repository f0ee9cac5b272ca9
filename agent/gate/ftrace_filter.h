// A set_ftrace_filter pattern, as ftrace reads one (kernel/trace/ftrace.c
// filter_parse_regex, lib/glob.c): tokens separated by white space, each a
// glob over the function name (`*`, `?`, `[abc]`, `[a-z]`, `[!abc]`), the
// whole name matched; `!TOKEN` removes what TOKEN matches; `TOKEN:mod:MOD`
// limits TOKEN to functions of module MOD (a glob too; an empty TOKEN means
// every function of the module). Lines of available_filter_functions are
// "name" or "name [module]"; each line is one call site, so duplicated
// names count once per line.
//
// Thread safety: a FtraceFilter is immutable after Parse; const methods may
// be called concurrently.
#ifndef TRACEHEALTH_AGENT_GATE_FTRACE_FILTER_H_
#define TRACEHEALTH_AGENT_GATE_FTRACE_FILTER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth::agent {

// At most this many bytes in a filter (a request field).
inline constexpr size_t kMaxFilterBytes = 4096;

// lib/glob.c glob_match(): `*`, `?`, `[...]` with ranges and `!` inversion,
// `\\` escapes; a `[` without its `]` matches itself.
bool GlobMatch(absl::string_view pattern, absl::string_view text);

class FtraceFilter {
 public:
  // InvalidArgument (the message names the token) for an empty filter, one
  // longer than kMaxFilterBytes, control characters, a `:mod:` without a
  // module, another `:command`, or only `!` tokens (ftrace would trace
  // every function: say so with `*`).
  static absl::StatusOr<FtraceFilter> Parse(absl::string_view text);

  // Whether the function `name` of `module` ("" for vmlinux) is selected.
  bool Matches(absl::string_view name, absl::string_view module) const;

  // The pattern as given, trimmed.
  const std::string& text() const { return text_; }

  // A filter of one name or one "prefix*" (no module, nothing removed),
  // which a sorted list answers by binary search.
  struct Simple {
    std::string literal;
    bool prefix = false;  // "literal*"; false: the name itself
  };
  std::optional<Simple> simple() const;

 private:
  // How a function glob is matched: most patterns people write are a name,
  // "prefix*", "*suffix" or "*middle*", compared directly; the rest go
  // through GlobMatch.
  enum class Match { kExact, kPrefix, kSuffix, kMiddle, kGlob };
  struct Token {
    std::string function;  // glob; "" with a module: every function
    std::string module;    // glob; "" : any, vmlinux included
    bool has_module = false;
    Match match = Match::kGlob;
    std::string literal;  // the function glob without its '*'s
  };
  static void Classify(Token* t);
  static bool TokenMatches(const Token& t, absl::string_view name,
                           absl::string_view module);

  std::string text_;
  std::vector<Token> include_;
  std::vector<Token> exclude_;
};

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_GATE_FTRACE_FILTER_H_
