#include "agent/parsers/tracefs.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tracehealth::agent {

absl::StatusOr<std::string> ParseCurrentTracer(absl::string_view text) {
  absl::string_view t = absl::StripAsciiWhitespace(text);
  if (t.empty()) return absl::InvalidArgumentError("current_tracer: empty");
  for (char c : t) {
    if (!absl::ascii_isalnum(c) && c != '_') {
      return absl::InvalidArgumentError(absl::StrCat(
          "current_tracer: '", t.substr(0, 64), "' is not one tracer name"));
    }
  }
  return std::string(t);
}

absl::StatusOr<bool> ParseFlagFile(absl::string_view text) {
  absl::string_view t = absl::StripAsciiWhitespace(text);
  if (t == "0") return false;
  if (t == "1") return true;
  return absl::InvalidArgumentError(
      absl::StrCat("flag file: '", t.substr(0, 32), "' is not 0 or 1"));
}

bool TracerUsesFgraph(absl::string_view tracer, bool display_graph) {
  if (tracer == "function_graph") return true;
  if (!display_graph) return false;
  return tracer == "irqsoff" || tracer == "preemptoff" ||
         tracer == "preemptirqsoff" || tracer == "wakeup" ||
         tracer == "wakeup_rt" || tracer == "wakeup_dl";
}

absl::StatusOr<std::vector<DynamicEvent>> ParseDynamicEvents(
    absl::string_view text) {
  std::vector<DynamicEvent> out;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty()) continue;
    size_t colon = line.find(':');
    size_t space = line.find(' ');
    if (colon == absl::string_view::npos || colon == 0 ||
        (space != absl::string_view::npos && space < colon) ||
        !absl::ascii_isalpha(line[0])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dynamic_events: malformed line '", line.substr(0, 80), "'"));
    }
    // "r10:" carries a maxactive count after the type letter.
    for (size_t i = 1; i < colon; ++i) {
      if (!absl::ascii_isdigit(line[i])) {
        return absl::InvalidArgumentError(absl::StrCat(
            "dynamic_events: malformed type in '", line.substr(0, 80), "'"));
      }
    }
    DynamicEvent ev;
    ev.type = line[0];
    absl::string_view rest = line.substr(colon + 1);
    size_t sp = rest.find(' ');
    ev.name = std::string(rest.substr(0, sp));
    if (ev.name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dynamic_events: no event name in '", line.substr(0, 80), "'"));
    }
    if (sp != absl::string_view::npos) {
      absl::string_view args =
          absl::StripLeadingAsciiWhitespace(rest.substr(sp));
      ev.target = std::string(args.substr(0, args.find(' ')));
    }
    ev.is_return = (ev.type == 'f' && absl::EndsWith(ev.target, "%return")) ||
                   ev.type == 'r';
    out.push_back(std::move(ev));
  }
  return out;
}

bool IsFunctionLine(absl::string_view line) {
  return !absl::StripAsciiWhitespace(line).empty();
}

bool IsFtraceFilterEntry(absl::string_view line) {
  const absl::string_view l = absl::StripAsciiWhitespace(line);
  return !l.empty() && l[0] != '#' && l.find(':') == absl::string_view::npos;
}

}  // namespace tracehealth::agent
