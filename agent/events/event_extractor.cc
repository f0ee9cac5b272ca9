#include "agent/events/event_extractor.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "agent/events/attribution.h"
#include "agent/events/event_headers.h"

namespace tracehealth::agent {
namespace {

bool IsCallTraceLine(absl::string_view text) {
  absl::string_view s = absl::StripAsciiWhitespace(text);
  return s == "Call Trace:" || s == "Call trace:";
}

bool IsTaskEnd(absl::string_view text) {
  return absl::StripLeadingAsciiWhitespace(text) == "</TASK>";
}

}  // namespace

std::string PrintableAscii(absl::string_view text, size_t max_bytes) {
  std::string out;
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      if (out.size() + 1 > max_bytes) break;
      out.push_back(ch);
    } else {
      if (out.size() + 4 > max_bytes) break;
      absl::StrAppendFormat(&out, "\\x%02x", c);
    }
  }
  return out;
}

std::optional<uint64_t> EventExtractor::open_seq() const {
  if (!open_.has_value()) return std::nullopt;
  return open_->event.kmsg_seq();
}

void EventExtractor::Add(const KmsgRecord& record,
                         std::vector<v1::ObservedEvent>* out) {
  const absl::string_view text = record.text;
  if (std::optional<v1::ObservedEvent> header = ParseEventHeader(text)) {
    if (open_.has_value()) Finish(out);
    open_.emplace();
    Open& o = *open_;
    o.event = *std::move(header);
    o.event.set_kmsg_seq(record.seq);
    o.event.set_ts_usec(record.ts_usec);
    o.event.set_comm(PrintableAscii(o.event.comm(), kMaxCommBytes));
    o.event.set_message(PrintableAscii(text, kMaxMessageBytes));
    return;
  }
  if (!open_.has_value()) return;
  Open& o = *open_;
  o.fed_since_idle = true;
  ++o.records;
  if (std::optional<KmsgFrame> f = ParseKmsgFrame(text)) {
    o.frames_started = true;
    o.event.set_frames_total(o.event.frames_total() + 1);
    if (f->reliable) {
      if (o.symbols.size() < limits_.max_symbols) {
        o.symbols.emplace_back(f->symbol);
      }
      if (static_cast<size_t>(o.event.frames_size()) < kMaxEventFrames) {
        o.event.add_frames(PrintableAscii(f->frame, kMaxFrameBytes));
      }
    }
  } else if (std::optional<KmsgFrame> rip = ParseKmsgRipFrame(text)) {
    // The interrupted function: the backtrace under a soft lockup's
    // register dump starts at its caller, so this may be the only mention
    // of the function that was stuck.
    if (o.symbols.size() < limits_.max_symbols) {
      o.symbols.emplace_back(rip->symbol);
    }
  } else if (IsKmsgStackMarker(text)) {
    o.frames_started = true;
    if (IsTaskEnd(text)) {
      Finish(out);
      return;
    }
  } else if (o.frames_started && !IsRegisterLine(text) &&
             !IsCallTraceLine(text)) {
    // The dump is over; this line is someone else's.
    Finish(out);
    return;
  } else {
    Note(text, o);
  }
  if (o.records >= limits_.max_block_records) Finish(out);
}

void EventExtractor::Note(absl::string_view text, Open& o) {
  v1::ObservedEvent& e = o.event;
  if (std::optional<TaskLine> t = ParseTaskLine(text)) {
    if (!e.has_cpu() && t->cpu.has_value()) e.set_cpu(*t->cpu);
    if (!e.has_pid() && t->pid.has_value()) e.set_pid(*t->pid);
    if (e.comm().empty()) e.set_comm(PrintableAscii(t->comm, kMaxCommBytes));
    return;
  }
  if (e.kind() != v1::OBSERVED_EVENT_KIND_RCU_STALL) return;
  if (!e.has_cpu()) {
    if (std::optional<uint32_t> cpu = ParseRcuCpuLine(text)) e.set_cpu(*cpu);
  }
  if (!e.has_stall_jiffies()) {
    if (std::optional<uint64_t> t = ParseStallJiffies(text)) {
      e.set_stall_jiffies(*t);
    }
  }
}

void EventExtractor::Idle(std::vector<v1::ObservedEvent>* out) {
  if (!open_.has_value()) return;
  if (!open_->fed_since_idle) {
    Finish(out);
    return;
  }
  open_->fed_since_idle = false;
}

void EventExtractor::Finish(std::vector<v1::ObservedEvent>* out) {
  Open& o = *open_;
  Attribution a = Attribute(o.symbols);
  v1::ObservedEvent& e = o.event;
  e.set_model(a.model);
  e.set_matched_symbol(PrintableAscii(a.symbol, kMaxFrameBytes));
  for (v1::ProbeKind k : a.probe_kinds) e.add_probe_kinds(k);
  out->push_back(std::move(e));
  open_.reset();
}

}  // namespace tracehealth::agent
