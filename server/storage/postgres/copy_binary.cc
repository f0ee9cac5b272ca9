#include "server/storage/postgres/copy_binary.h"

#include <cstring>

namespace tracehealth::server {

CopyBinary::CopyBinary() {
  // Signature (11 bytes, "PGCOPY\n\377\r\n\0"), flags, header extension
  // length.
  static constexpr char kSignature[] = "PGCOPY\n\377\r\n";
  out_.append(kSignature, 10);
  out_.push_back('\0');
  Put32(0);
  Put32(0);
}

void CopyBinary::Put16(uint16_t v) {
  out_.push_back(static_cast<char>(v >> 8));
  out_.push_back(static_cast<char>(v));
}

void CopyBinary::Put32(uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out_.push_back(static_cast<char>(v >> shift));
  }
}

void CopyBinary::Put64(uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) {
    out_.push_back(static_cast<char>(v >> shift));
  }
}

void CopyBinary::BeginRow(int16_t fields) {
  Put16(static_cast<uint16_t>(fields));
}

void CopyBinary::AddBytes(absl::string_view v) {
  Put32(static_cast<uint32_t>(v.size()));
  out_.append(v.data(), v.size());
}

void CopyBinary::AddInt8(int64_t v) {
  Put32(8);
  Put64(static_cast<uint64_t>(v));
}

void CopyBinary::AddInt4(int32_t v) {
  Put32(4);
  Put32(static_cast<uint32_t>(v));
}

void CopyBinary::AddFloat8(double v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(bits));
  Put32(8);
  Put64(bits);
}

void CopyBinary::AddOptFloat8(const std::optional<double>& v) {
  if (v.has_value()) {
    AddFloat8(*v);
  } else {
    AddNull();
  }
}

void CopyBinary::AddNull() { Put32(0xFFFFFFFFu); }

std::string CopyBinary::Finish() {
  Put16(0xFFFF);  // -1: end of data
  return std::move(out_);
}

void AddReportRow(CopyBinary& copy, const ReportRow& r, int64_t seq) {
  std::string blob_scratch, record_scratch;
  const WholeParts parts = WholeOf(r, &blob_scratch, &record_scratch);
  copy.BeginRow(10);
  copy.AddBytes(r.host_id);
  copy.AddInt8(seq);
  copy.AddInt8(r.observed_at_ns);
  copy.AddInt8(r.received_at_ns);
  copy.AddInt4(r.worst_risk);
  copy.AddOptFloat8(r.attach_latency_seconds);
  copy.AddOptFloat8(r.pool_budget_ratio);
  copy.AddOptFloat8(r.purge_seconds);
  copy.AddBytes(*parts.blob);
  if (parts.record->empty()) {
    copy.AddNull();
  } else {
    copy.AddBytes(*parts.record);
  }
}

}  // namespace tracehealth::server
