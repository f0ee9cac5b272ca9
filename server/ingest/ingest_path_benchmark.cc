// Per-report CPU cost of each server-side ingest stage, on a realistic
// report (prints figures; not a test): the walks of its bytes (the check,
// the head and the material content, alone and in one pass), validation,
// row build and storing in batched transactions (raw SQLite), plus for
// comparison what parsing and serializing the report would cost.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "common/report/material.h"
#include "common/report/report_scan.h"
#include "google/protobuf/arena.h"
#include "server/index/host_record_codec.h"
#include "server/ingest/report_row.h"
#include "server/ingest/validate.h"
#include "server/report/report_head.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::server {
namespace {

template <typename F>
double NsPerOp(int n, F f) {
  absl::Time t0 = absl::Now();
  for (int i = 0; i < n; ++i) f(i);
  return absl::ToDoubleNanoseconds(absl::Now() - t0) / n;
}

int Main() {
  const int n = 20000;
  v1::HostReport report = SampleReport(FleetHost(7), 1, absl::Now());
  const std::string wire = report.SerializeAsString();
  std::printf("report: %zu bytes\n", wire.size());
  double parse_heap = NsPerOp(n, [&](int) {
    v1::HostReport r;
    r.ParseFromString(wire);
  });
  double parse_arena = NsPerOp(n, [&](int) {
    google::protobuf::ArenaOptions o;
    o.start_block_size =
        std::clamp<size_t>(wire.size() * 5, 4 << 10, 256 << 10);
    google::protobuf::Arena arena(o);
    auto* r = google::protobuf::Arena::CreateMessage<v1::HostReport>(&arena);
    r->ParseFromString(wire);
  });
  absl::Time now = absl::Now();
  ValidationLimits limits;
  double head_ns = NsPerOp(n, [&](int) {
    if (!DecodeReportHead(wire).ok()) std::abort();
  });
  const ReportHead head = *DecodeReportHead(wire);
  double validate = NsPerOp(n, [&](int) {
    absl::Status st = ValidateReport(head, wire, now, limits);
    if (!st.ok()) std::abort();
  });
  double material = NsPerOp(n, [&](int) {
    if (MaterialOfWire(wire).digest == 0) std::abort();
  });
  const WireLimits wire_limits = WireLimitsOf(limits);
  double scan_ns = NsPerOp(n, [&](int) {
    if (ScanReport(wire, wire_limits).material.digest == 0) std::abort();
  });
  const ReportScan scan = ScanReport(wire, wire_limits);
  double validate_scanned = NsPerOp(n, [&](int) {
    absl::Status st = ValidateScannedReport(scan, wire.size(), now, limits);
    if (!st.ok()) std::abort();
  });
  double record = NsPerOp(n, [&](int) {
    if (EncodeHostRecord(report).empty()) std::abort();
  });
  double serialize =
      NsPerOp(n, [&](int) { std::string s = report.SerializeAsString(); });
  // Rows as ingest builds them, with the scan's material content.
  double row = NsPerOp(n, [&](int) {
    ReportRow r = MakeReportRow(head, wire, now, scan.material, nullptr);
  });
  const testing::ScopedTempDir dir("path");
  auto storage = SqliteStorage::Open(dir.path() + "/p.db");
  if (!storage.ok()) return 1;
  std::vector<ReportRow> rows;
  double store = NsPerOp(n, [&](int i) {
    ReportRow r = MakeReportRow(head, wire, now, scan.material, nullptr);
    r.seq = i + 1;
    rows.push_back(std::move(r));
    if (rows.size() == 4096 || i == n - 1) {
      if (!(*storage)->WriteBatch(rows).ok()) std::abort();
      rows.clear();
    }
  });
  {
    google::protobuf::ArenaOptions o;  // as the ingest service sizes it
    o.start_block_size =
        std::clamp<size_t>(wire.size() * 5, 4 << 10, 256 << 10);
    o.max_block_size = 256 << 10;
    google::protobuf::Arena arena(o);
    auto* r = google::protobuf::Arena::CreateMessage<v1::HostReport>(&arena);
    r->ParseFromString(wire);
    std::printf(
        "parsed report: %llu bytes used in %llu bytes of arena blocks\n",
        static_cast<unsigned long long>(arena.SpaceUsed()),
        static_cast<unsigned long long>(arena.SpaceAllocated()));
  }
  std::printf("parse (heap)        %8.0f ns/report\n", parse_heap);
  std::printf("parse (arena)       %8.0f ns/report\n", parse_arena);
  std::printf("decode head         %8.0f ns/report\n", head_ns);
  std::printf("validate (wire)     %8.0f ns/report\n", validate);
  std::printf("material (wire)     %8.0f ns/report\n", material);
  std::printf(
      "scan (all three)    %8.0f ns/report (the check, head and "
      "material in one walk)\n",
      scan_ns);
  std::printf("validate (scanned)  %8.0f ns/report\n", validate_scanned);
  std::printf("record (encode)     %8.0f ns/report\n", record);
  std::printf("serialize           %8.0f ns/report\n", serialize);
  std::printf("row build (copy)    %8.0f ns/report\n", row);
  std::printf("store (batch 4096)  %8.0f ns/report (incl. row build)\n", store);
  // What the server does per report: one walk of the bytes (check, head,
  // material), the rest of validation, the row (a parse, the record) and
  // storing it.
  double total = scan_ns + validate_scanned + store;
  std::printf(
      "server-side sum     %8.0f ns/report -> %.0f reports/s per core, before "
      "gRPC\n",
      total, 1e9 / total);
  return 0;
}

}  // namespace
}  // namespace tracehealth::server

int main() { return tracehealth::server::Main(); }
