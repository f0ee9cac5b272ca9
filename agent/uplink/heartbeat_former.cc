#include "agent/uplink/heartbeat_former.h"

#include <utility>

#include "common/proto_time.h"
#include "common/report/heartbeat_form.h"
#include "common/report/material.h"

namespace tracehealth::agent {

bool HeartbeatFormer::Form(absl::string_view wire, v1::HostReport* report) {
  if (whole_interval_ <= absl::ZeroDuration()) return false;
  const absl::Time observed = FromProto(report->observed_at());
  Material m = MaterialOfWire(wire);
  if (has_base_ && report->seq() > base_seq_ &&
      observed - base_observed_ < whole_interval_ &&
      SameMaterial(m.digest, m.numbers, base_digest_, base_numbers_)) {
    *report = HeartbeatFormOf(*report, base_seq_);
    return true;
  }
  report->mutable_heartbeat()->set_base_seq(0);
  has_base_ = m.digest != 0;
  base_seq_ = report->seq();
  base_observed_ = observed;
  base_digest_ = m.digest;
  base_numbers_ = std::move(m.numbers);
  return false;
}

}  // namespace tracehealth::agent
