#include "server/report/stored_report.h"

#include <algorithm>
#include <utility>

#include "google/protobuf/arena.h"

namespace tracehealth::server {

StoredReport::StoredReport(std::string host_id, uint64_t seq, std::string blob)
    : host_id_(std::move(host_id)), seq_(seq), blob_(std::move(blob)) {}

std::shared_ptr<const StoredReport> StoredReport::Of(
    const v1::HostReport& report) {
  return std::make_shared<StoredReport>(report.host_id(), report.seq(),
                                        report.SerializeAsString());
}

StoredReport::StoredReport(std::string host_id, uint64_t seq,
                           std::shared_ptr<const v1::HostReport> parsed)
    : host_id_(std::move(host_id)), seq_(seq) {
  parsed_ = std::move(parsed);
  // Nothing left to parse.
  absl::call_once(parse_once_, [] {});
}

namespace {

// One arena per report: one or two block allocations instead of one per
// string and sub-message, released with the last holder. A parsed report
// takes about 4x its wire size.
std::shared_ptr<v1::HostReport> NewInArena(size_t wire_size) {
  google::protobuf::ArenaOptions opts;
  opts.start_block_size = std::clamp<size_t>(wire_size * 5, 4 << 10, 256 << 10);
  opts.max_block_size = 256 << 10;
  auto arena = std::make_shared<google::protobuf::Arena>(opts);
  auto* r = google::protobuf::Arena::CreateMessage<v1::HostReport>(arena.get());
  return std::shared_ptr<v1::HostReport>(std::move(arena), r);
}

}  // namespace

std::shared_ptr<v1::HostReport> CopyStoredReport(const v1::HostReport& report,
                                                 size_t wire_size) {
  std::shared_ptr<v1::HostReport> r = NewInArena(wire_size);
  r->CopyFrom(report);
  return r;
}

std::shared_ptr<const v1::HostReport> ParseStoredReport(
    const std::string& host_id, uint64_t seq, const std::string& blob,
    bool* parsed) {
  std::shared_ptr<v1::HostReport> r = NewInArena(blob.size());
  const bool ok = r->ParseFromString(blob);
  if (parsed != nullptr) *parsed = ok;
  if (!ok) {
    r->Clear();
    r->set_host_id(host_id);
    r->set_seq(seq);
  }
  return r;
}

std::shared_ptr<const v1::HostReport> StoredReport::report() const {
  absl::call_once(parse_once_, [this] {
    parsed_ = ParseStoredReport(host_id_, seq_, blob_);
    std::string().swap(blob_);
  });
  return parsed_;
}

}  // namespace tracehealth::server
