#include "agent/events/kmsg_events.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/procfs/proc.h"

namespace tracehealth::agent {
namespace {

constexpr size_t kSmallFile = 64 * 1024;
constexpr size_t kStatMax = 4 << 20;
constexpr size_t kMaxBootIdBytes = 64;

bool IsBootIdChar(char c) { return absl::ascii_isalnum(c) || c == '-'; }

// The boot's name in events: its boot id, else "btime-N".
std::string BootName(const BootIdentity& boot) {
  const std::string& id = boot.boot_id;
  if (!id.empty() && id.size() <= kMaxBootIdBytes &&
      std::all_of(id.begin(), id.end(), IsBootIdChar)) {
    return id;
  }
  if (boot.btime.has_value()) return absl::StrCat("btime-", *boot.btime);
  return "unknown";
}

}  // namespace

KmsgEvents::KmsgEvents(const HostFs* fs, KmsgEventsOptions options)
    : fs_(fs),
      options_(std::move(options)),
      reader_(fs->root(), options_.read),
      cursor_(options_.state_dir) {}

std::vector<std::string> KmsgEvents::TakeWarnings() {
  std::vector<std::string> out;
  out.swap(warnings_);
  return out;
}

void KmsgEvents::Start() {
  started_ = true;
  absl::StatusOr<std::string> id =
      fs_->ReadFile("/proc/sys/kernel/random/boot_id", kSmallFile);
  if (id.ok()) boot_.boot_id = std::string(absl::StripAsciiWhitespace(*id));
  absl::StatusOr<std::string> stat = fs_->ReadFile("/proc/stat", kStatMax);
  if (stat.ok()) {
    absl::StatusOr<int64_t> btime = ParseStatBtime(*stat);
    if (btime.ok()) boot_.btime = *btime;
  }
  boot_name_ = BootName(boot_);
  absl::Status loaded = cursor_.Load();
  if (!loaded.ok()) warnings_.push_back(std::string(loaded.message()));
  after_ = cursor_.After(boot_);
}

void KmsgEvents::OnRecord(const KmsgRecord& r) {
  // Delivered by an earlier run, or read already (a fixture file replaced).
  if (after_.has_value() && r.seq <= *after_) return;
  if (last_seq_.has_value() && r.seq <= *last_seq_) return;
  const std::optional<uint64_t> before = last_seq_ ? last_seq_ : after_;
  if (before.has_value() && r.seq > *before + 1) lost_ += r.seq - *before - 1;
  last_seq_ = r.seq;
  ++records_;
  std::vector<v1::ObservedEvent> done;
  extractor_.Add(r, &done);
  Take(&done);
}

void KmsgEvents::Take(std::vector<v1::ObservedEvent>* done) {
  for (v1::ObservedEvent& e : *done) {
    e.set_boot_id(boot_name_);
    if (boot_.btime.has_value()) {
      google::protobuf::Timestamp* at = e.mutable_logged_at();
      at->set_seconds(*boot_.btime +
                      static_cast<int64_t>(e.ts_usec() / 1000000));
      at->set_nanos(static_cast<int32_t>(e.ts_usec() % 1000000) * 1000);
    }
    ++events_;
    pending_.push_back(std::move(e));
  }
  done->clear();
}

void KmsgEvents::ReadLog() {
  absl::StatusOr<bool> at_end =
      reader_.Read([this] { return pending_.size() < options_.max_pending; },
                   [this](const KmsgRecord& r) { OnRecord(r); });
  if (!at_end.ok()) {
    error_ = std::string(at_end.status().message());
    // No log under a fixture root is the common case, not worth a line.
    if (!absl::IsNotFound(at_end.status()) && error_ != warned_error_) {
      warnings_.push_back(absl::StrCat("kernel log: ", error_));
      warned_error_ = error_;
    }
    return;
  }
  error_.clear();
  if (*at_end) {
    std::vector<v1::ObservedEvent> done;
    extractor_.Idle(&done);
    Take(&done);
  }
}

void KmsgEvents::Fill(v1::HostReport* report) {
  if (!started_) Start();
  // Events of a report that was not delivered are still the oldest.
  in_flight_ = 0;
  ReadLog();
  in_flight_ = std::min(pending_.size(), options_.max_events_per_report);
  for (size_t i = 0; i < in_flight_; ++i) {
    *report->add_observed_events() = pending_[i];
  }
  const KmsgReader::Counts& c = reader_.counts();
  v1::KmsgHealth* h = report->mutable_health()->mutable_kmsg();
  h->set_records_total(records_);
  h->set_malformed_total(c.malformed);
  h->set_truncated_total(c.truncated);
  h->set_oversized_total(c.oversized);
  h->set_lost_total(lost_);
  h->set_events_total(events_);
  h->set_events_pending(pending_.size() - in_flight_);
  if (last_seq_.has_value()) h->set_last_seq(*last_seq_);
  h->set_error(error_);
}

std::optional<uint64_t> KmsgEvents::DeliveredThrough() const {
  std::optional<uint64_t> through = last_seq_ ? last_seq_ : after_;
  // Not past a waiting event, nor past one still being logged.
  std::vector<uint64_t> firsts;
  if (!pending_.empty()) firsts.push_back(pending_.front().kmsg_seq());
  if (std::optional<uint64_t> open = extractor_.open_seq()) {
    firsts.push_back(*open);
  }
  for (uint64_t first : firsts) {
    if (first == 0) return std::nullopt;
    if (!through.has_value() || first - 1 < *through) through = first - 1;
  }
  return through;
}

void KmsgEvents::Delivered() {
  pending_.erase(pending_.begin(), pending_.begin() + in_flight_);
  in_flight_ = 0;
  std::optional<uint64_t> through = DeliveredThrough();
  if (!through.has_value() || !boot_.known()) return;
  absl::Status saved = cursor_.Save(boot_, *through);
  if (!saved.ok()) warnings_.push_back(std::string(saved.message()));
}

}  // namespace tracehealth::agent
