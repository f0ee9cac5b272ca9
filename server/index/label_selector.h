// LabelSelector: Prometheus-style label matchers over a host's labels.
//
// Syntax: comma-separated matchers `key=value`, `key!=value`, `key=~regex`,
// `key!~regex`; keys are label names ([A-Za-z_][A-Za-z0-9_]*); values may be
// double-quoted (then they may hold commas, and start with = ! or ~, which
// an unquoted value may not: `role==db` is refused, not read as "=db").
// Empty matchers (`role=db,,`, a leading comma) are refused.
// Regexes (RE2 syntax) must match the whole value, as in Prometheus. A
// missing label has the value "". The empty selector matches every host.
//
// Thread safety: immutable after Parse; Matches is safe to call
// concurrently.
#ifndef TRACEHEALTH_SERVER_INDEX_LABEL_SELECTOR_H_
#define TRACEHEALTH_SERVER_INDEX_LABEL_SELECTOR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/map.h"
#include "server/index/label_set.h"

namespace re2 {
class RE2;
}

namespace tracehealth::server {

class LabelSelector {
 public:
  enum class Op { kEq, kNe, kRe, kNre };
  struct Matcher {
    std::string key;
    Op op;
    std::string value;
    std::shared_ptr<const re2::RE2> re;  // kRe / kNre
  };

  // Errors: InvalidArgument with the reason and the offending matcher,
  // echoed at most kEchoBytes long (common/escape.h): no operator, empty or
  // invalid label name, a value starting with an operator character, a
  // stray quote, an empty matcher, a bad regex, an unterminated quote.
  static absl::StatusOr<LabelSelector> Parse(absl::string_view text);

  bool empty() const { return matchers_.empty(); }
  const std::vector<Matcher>& matchers() const { return matchers_; }

  bool Matches(
      const google::protobuf::Map<std::string, std::string>& labels) const;
  bool Matches(const LabelSet& labels) const;

 private:
  // `value(key)` is the label's value, "" when missing.
  template <typename Lookup>
  bool MatchesWith(const Lookup& value) const;

  std::vector<Matcher> matchers_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_INDEX_LABEL_SELECTOR_H_
