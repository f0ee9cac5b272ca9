// HeartbeatFormer: decides, report by report, whether the streamer sends a
// report whole or in heartbeat form (report.proto HeartbeatForm,
// common/report/heartbeat_form.h), by the rule the server's stores fold
// reports by (common/report/material.h).
//
// A report goes in heartbeat form on the base (the last report this former
// let go whole) when there is a base (none at first and after Reset), the
// report's seq is above the base's, its material content equals the base's
// (digests equal, predictions' numbers within the tolerance), and it was
// observed less than `whole_interval` after the base. Otherwise it goes
// whole, marked as a base (heartbeat.base_seq 0), and becomes the base. A
// zero `whole_interval` lets every report go whole, unmarked.
//
// The server keeps each base it was sent; the streamer calls Reset when a
// stream fails (a base it sent may not have arrived) and when the server
// does not accept heartbeat forms.
//
// Thread safety: none; the streamer's sender thread owns it.
#ifndef TRACEHEALTH_AGENT_UPLINK_HEARTBEAT_FORMER_H_
#define TRACEHEALTH_AGENT_UPLINK_HEARTBEAT_FORMER_H_

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth::agent {

class HeartbeatFormer {
 public:
  explicit HeartbeatFormer(absl::Duration whole_interval)
      : whole_interval_(whole_interval) {}

  // `report` (whose encoding is `wire`) as it is to be sent: replaced by
  // its heartbeat form, or left whole (marked as a base when forms are on).
  // True when it was replaced.
  bool Form(absl::string_view wire, v1::HostReport* report);
  // The next report goes whole.
  void Reset() { has_base_ = false; }

 private:
  const absl::Duration whole_interval_;
  bool has_base_ = false;
  uint64_t base_seq_ = 0;
  absl::Time base_observed_;
  uint64_t base_digest_ = 0;
  std::vector<float> base_numbers_;
};

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_UPLINK_HEARTBEAT_FORMER_H_
