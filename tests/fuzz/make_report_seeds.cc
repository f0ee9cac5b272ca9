// Writes serialized HostReports (the bytes an agent sends) to the files named
// on the command line: varied hosts of the synthetic fleet, one report each,
// for the report_validation fuzz seeds. Exits 1 on a write error.
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/time/time.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "tools/loadgen/sample_report.h"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const tracehealth::server::SampleHost host =
        tracehealth::server::FleetHost(i * 7);
    const tracehealth::v1::HostReport report =
        tracehealth::server::SampleReport(host, static_cast<uint64_t>(i),
                                          absl::FromUnixSeconds(1764000000));
    std::string bytes;
    if (!report.SerializeToString(&bytes)) {
      std::fprintf(stderr, "make_report_seeds: cannot serialize report %d\n",
                   i);
      return 1;
    }
    std::ofstream out(argv[i], std::ios::binary | std::ios::trunc);
    out << bytes;
    if (!out.flush()) {
      std::fprintf(stderr, "make_report_seeds: cannot write %s\n", argv[i]);
      return 1;
    }
  }
  return 0;
}
