#include "agent/report/events_text.h"

#include <string>

#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

TEST(EventsTextTest, ShowsTheReadingAndEachEvent) {
  v1::HostReport r;
  v1::KmsgHealth* h = r.mutable_health()->mutable_kmsg();
  h->set_records_total(1234);
  h->set_malformed_total(1);
  h->set_truncated_total(2);
  h->set_oversized_total(3);
  h->set_lost_total(4);
  h->set_events_pending(5);
  v1::ObservedEvent* e = r.add_observed_events();
  e->set_kind(v1::OBSERVED_EVENT_KIND_SOFT_LOCKUP);
  e->set_cpu(5);
  e->set_seconds(22);
  e->set_comm("bpftrace");
  e->set_pid(4242);
  // 20786 days (2026-11-29) + 73800 s (20:30:00).
  e->mutable_logged_at()->set_seconds(20786LL * 86400 + 73800);
  e->set_model(v1::EVENT_MODEL_FGRAPH_ATTACH);
  e->set_matched_symbol("bpf_kprobe_multi_link_attach");
  e->add_probe_kinds(v1::PROBE_KIND_KPROBE_MULTI);
  e->add_probe_kinds(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  for (const char* f :
       {"a+0x1/0x2", "b+0x1/0x2", "c+0x1/0x2", "d+0x1/0x2", "e+0x1/0x2"}) {
    e->add_frames(f);
  }
  v1::ObservedEvent* hung = r.add_observed_events();
  hung->set_kind(v1::OBSERVED_EVENT_KIND_HUNG_TASK);
  hung->set_seconds(120);
  hung->set_ts_usec(7200000000);
  std::string out;
  AppendKernelLog(r, &out);
  EXPECT_EQ(out,
            "\nKernel log  2 event(s) in this report, 5 waiting; 1234 records "
            "read, 6 skipped (1 malformed, 2 cut short, 3 oversized), 4 lost\n"
            "  2026-11-29 20:30:00Z  soft lockup, CPU#5 stuck 22 s, "
            "bpftrace[4242]\n"
            "      fgraph attach (bpf_kprobe_multi_link_attach; kprobe_multi, "
            "kprobe_multi return)\n"
            "      a+0x1/0x2 < b+0x1/0x2 < c+0x1/0x2 < d+0x1/0x2 < ...\n"
            "  +7200s after boot  hung task, blocked 120 s\n"
            "      unattributed\n");
}

TEST(EventsTextTest, SaysWhyTheLogWasNotRead) {
  v1::HostReport r;
  r.mutable_health()->mutable_kmsg()->set_error(
      "/dev/kmsg: No such file or directory");
  std::string out;
  AppendKernelLog(r, &out);
  EXPECT_EQ(out,
            "\nKernel log  not read: /dev/kmsg: No such file or directory\n");
  std::string none;
  AppendKernelLog(v1::HostReport(), &none);
  EXPECT_EQ(none, "");
}

}  // namespace
}  // namespace tracehealth::agent
