#include "agent/events/event_headers.h"

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"

namespace tracehealth::agent {
namespace {

constexpr absl::string_view kSoftLockup = "BUG: soft lockup - CPU#";
constexpr absl::string_view kHungTask = "INFO: task ";
constexpr absl::string_view kBlocked = " blocked for more than ";
constexpr absl::string_view kInfo = "INFO: ";

// The decimal number at the start of `*s`, consumed; false when there is
// none or it overflows 64 bits.
bool ConsumeDecimal(absl::string_view* s, uint64_t* v) {
  size_t n = 0;
  while (n < s->size() && n < 21 && absl::ascii_isdigit((*s)[n])) ++n;
  if (n == 0 || !absl::SimpleAtoi(s->substr(0, n), v)) return false;
  s->remove_prefix(n);
  return true;
}

std::optional<uint32_t> As32(uint64_t v) {
  if (v > std::numeric_limits<uint32_t>::max()) return std::nullopt;
  return static_cast<uint32_t>(v);
}

// "comm:pid" -> comm and pid (the pid follows the last ':').
void SplitTask(absl::string_view who, v1::ObservedEvent* e) {
  const size_t colon = who.rfind(':');
  if (colon == absl::string_view::npos) return;
  absl::string_view pid_text = who.substr(colon + 1);
  uint64_t pid = 0;
  if (!ConsumeDecimal(&pid_text, &pid) || !pid_text.empty()) return;
  if (std::optional<uint32_t> p = As32(pid)) e->set_pid(*p);
  e->set_comm(std::string(who.substr(0, colon)));
}

void SetSeconds(absl::string_view s, v1::ObservedEvent* e) {
  uint64_t v = 0;
  if (!ConsumeDecimal(&s, &v)) return;
  if (std::optional<uint32_t> sec = As32(v)) e->set_seconds(*sec);
}

v1::ObservedEvent SoftLockup(absl::string_view s) {
  v1::ObservedEvent e;
  e.set_kind(v1::OBSERVED_EVENT_KIND_SOFT_LOCKUP);
  uint64_t cpu = 0;
  if (!ConsumeDecimal(&s, &cpu)) return e;
  if (std::optional<uint32_t> c = As32(cpu)) e.set_cpu(*c);
  if (!absl::ConsumePrefix(&s, " stuck for ")) return e;
  SetSeconds(s, &e);
  const size_t open = s.find("s! [");
  const size_t close = s.rfind(']');
  if (open == absl::string_view::npos || close == absl::string_view::npos ||
      close < open + 4) {
    return e;
  }
  SplitTask(s.substr(open + 4, close - open - 4), &e);
  return e;
}

std::optional<v1::ObservedEvent> HungTask(absl::string_view text) {
  const size_t at = text.find(kHungTask);
  if (at == absl::string_view::npos) return std::nullopt;
  absl::string_view s = text.substr(at + kHungTask.size());
  const size_t blocked = s.find(kBlocked);
  if (blocked == absl::string_view::npos) return std::nullopt;
  v1::ObservedEvent e;
  e.set_kind(v1::OBSERVED_EVENT_KIND_HUNG_TASK);
  SplitTask(s.substr(0, blocked), &e);
  SetSeconds(s.substr(blocked + kBlocked.size()), &e);
  return e;
}

std::optional<v1::ObservedEvent> RcuStall(absl::string_view text) {
  for (size_t at = text.find(kInfo); at != absl::string_view::npos;
       at = text.find(kInfo, at + 1)) {
    absl::string_view s = text.substr(at + kInfo.size());
    size_t n = 0;
    while (n < s.size() && (absl::ascii_isalnum(s[n]) || s[n] == '_')) ++n;
    const absl::string_view name = s.substr(0, n);
    s.remove_prefix(n);
    if (!absl::StartsWith(name, "rcu")) continue;
    const bool self = absl::StartsWith(s, " self-detected stall");
    if (!self && !absl::StartsWith(s, " detected stall")) continue;
    v1::ObservedEvent e;
    e.set_kind(v1::OBSERVED_EVENT_KIND_RCU_STALL);
    e.set_rcu_self_detected(self);
    e.set_rcu_flavor(name == "rcu_sched"     ? v1::RCU_FLAVOR_SCHED
                     : name == "rcu_preempt" ? v1::RCU_FLAVOR_PREEMPT
                                             : v1::RCU_FLAVOR_OTHER);
    if (std::optional<uint64_t> t = ParseStallJiffies(text)) {
      e.set_stall_jiffies(*t);
    }
    return e;
  }
  return std::nullopt;
}

absl::string_view StripIndent(absl::string_view s) {
  while (absl::ConsumePrefix(&s, " ") || absl::ConsumePrefix(&s, "\\x09")) {
  }
  return s;
}

}  // namespace

std::optional<v1::ObservedEvent> ParseEventHeader(absl::string_view text) {
  if (size_t at = text.find(kSoftLockup); at != absl::string_view::npos) {
    return SoftLockup(text.substr(at + kSoftLockup.size()));
  }
  if (std::optional<v1::ObservedEvent> e = HungTask(text)) return e;
  return RcuStall(text);
}

std::optional<TaskLine> ParseTaskLine(absl::string_view text) {
  absl::string_view s = text;
  if (!absl::ConsumePrefix(&s, "CPU: ")) return std::nullopt;
  uint64_t v = 0;
  if (!ConsumeDecimal(&s, &v)) return std::nullopt;
  TaskLine t;
  t.cpu = As32(v);
  if (size_t p = s.find(" PID: "); p != absl::string_view::npos) {
    absl::string_view pid = s.substr(p + 6);
    if (ConsumeDecimal(&pid, &v)) t.pid = As32(v);
  }
  if (size_t c = s.find(" Comm: "); c != absl::string_view::npos) {
    absl::string_view comm = s.substr(c + 7);
    for (absl::string_view end : {" Not tainted", " Tainted: ", " Kdump: "}) {
      comm = comm.substr(0, comm.find(end));
    }
    t.comm = std::string(absl::StripTrailingAsciiWhitespace(comm));
  }
  return t;
}

std::optional<uint32_t> ParseRcuCpuLine(absl::string_view text) {
  absl::string_view s = text;
  if (!absl::ConsumePrefix(&s, "rcu:")) return std::nullopt;
  s = StripIndent(s);
  uint64_t cpu = 0;
  if (!ConsumeDecimal(&s, &cpu) || !absl::StartsWith(s, "-")) {
    return std::nullopt;
  }
  return As32(cpu);
}

std::optional<uint64_t> ParseStallJiffies(absl::string_view text) {
  for (size_t at = text.find("t="); at != absl::string_view::npos;
       at = text.find("t=", at + 1)) {
    if (at > 0 && text[at - 1] != '(' && text[at - 1] != ' ') continue;
    absl::string_view s = text.substr(at + 2);
    uint64_t v = 0;
    if (ConsumeDecimal(&s, &v) && absl::StartsWith(s, " jiffies")) return v;
  }
  return std::nullopt;
}

bool IsRegisterLine(absl::string_view text) {
  for (absl::string_view p :
       {"RIP: ", "EIP: ", "Code: ", "pc : ", "lr : ", "sp : "}) {
    if (absl::StartsWith(text, p)) return true;
  }
  // An upper-case register name of at most 6 characters, ':', spaces and a
  // hex digit: "RAX: 0000000000000011", "FS:  0000000000000000",
  // "CR2: 00005577b5c8d158".
  size_t n = 0;
  while (n < text.size() && n <= 6 &&
         (absl::ascii_isupper(text[n]) || absl::ascii_isdigit(text[n]))) {
    ++n;
  }
  if (n == 0 || n > 6 || n >= text.size() || text[n] != ':') return false;
  absl::string_view rest =
      absl::StripLeadingAsciiWhitespace(text.substr(n + 1));
  return rest.size() < text.size() - n - 1 && !rest.empty() &&
         absl::ascii_isxdigit(rest[0]);
}

}  // namespace tracehealth::agent
