// Fuzzes the kernel-log record and backtrace parsers and the extractor of
// soft lockups, RCU stalls and hung tasks, on a file of /dev/kmsg records
// as the agent reads under --root (one record a line, dictionary lines
// after it).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "agent/events/event_extractor.h"
#include "agent/parsers/kmsg.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

bool Printable(absl::string_view s) {
  for (char c : s) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

void CheckEvent(const tracehealth::v1::ObservedEvent& e) {
  namespace a = tracehealth::agent;
  FUZZ_CHECK(e.kind() != tracehealth::v1::OBSERVED_EVENT_KIND_UNSPECIFIED);
  FUZZ_CHECK(tracehealth::v1::EventModel_IsValid(e.model()));
  FUZZ_CHECK(static_cast<size_t>(e.frames_size()) <= a::kMaxEventFrames);
  FUZZ_CHECK(static_cast<uint32_t>(e.frames_size()) <= e.frames_total());
  for (const std::string& f : e.frames()) {
    FUZZ_CHECK(f.size() <= a::kMaxFrameBytes);
    FUZZ_CHECK(Printable(f));
  }
  FUZZ_CHECK(e.comm().size() <= a::kMaxCommBytes);
  FUZZ_CHECK(Printable(e.comm()));
  FUZZ_CHECK(e.message().size() <= a::kMaxMessageBytes);
  FUZZ_CHECK(Printable(e.message()));
  FUZZ_CHECK(e.matched_symbol().empty() ==
             (e.model() == tracehealth::v1::EVENT_MODEL_UNATTRIBUTED));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace a = tracehealth::agent;
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  a::EventExtractor extractor;
  std::vector<tracehealth::v1::ObservedEvent> events;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty() || line[0] == ' ') continue;  // dictionary lines
    absl::StatusOr<a::KmsgRecord> r = a::ParseKmsgRecord(line);
    if (!r.ok()) continue;
    FUZZ_CHECK(r->level >= 0 && r->level <= 7);
    // The text is a view into the line, after the ';'.
    FUZZ_CHECK(r->text.data() >= line.data() &&
               r->text.data() + r->text.size() <= line.data() + line.size());
    if (std::optional<a::KmsgFrame> f = a::ParseKmsgFrame(r->text)) {
      FUZZ_CHECK(!f->symbol.empty());
      FUZZ_CHECK(f->symbol.size() <= f->frame.size());
    }
    (void)a::IsKmsgStackMarker(r->text);
    extractor.Add(*r, &events);
  }
  extractor.Idle(&events);
  extractor.Idle(&events);
  for (const tracehealth::v1::ObservedEvent& e : events) CheckEvent(e);
  return 0;
}
