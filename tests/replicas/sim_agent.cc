#include "tests/replicas/sim_agent.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::testing {

SimAgent::SimAgent(std::vector<std::string> addresses,
                   const std::string& prefix, int index, size_t first,
                   absl::Duration period)
    : addresses_(std::move(addresses)),
      host_id_(absl::StrCat(prefix, index)),
      period_(period),
      next_(first % addresses_.size()) {
  server::SampleHost host = server::FleetHost(index);
  host.host_id = host_id_;
  report_ = server::SampleReport(host, 1, absl::Now());
}

void SimAgent::Run(const std::atomic<bool>& stop, absl::Duration phase,
                   absl::Duration drain) {
  absl::SleepFor(phase);
  absl::Time next = absl::Now();
  while (!stop.load()) {
    Make();
    Pump();
    next += period_;
    absl::SleepFor(next - absl::Now());
  }
  const absl::Time deadline = absl::Now() + drain;
  while (absl::Now() < deadline && acked() < made()) {
    Pump();
    absl::SleepFor(absl::Milliseconds(50));
  }
  if (stream_ != nullptr) {
    stream_->WaitAcked(made(), absl::Seconds(5));
    Absorb();
    stream_->Finish();
  }
}

uint64_t SimAgent::made() {
  absl::MutexLock lock(&mu_);
  return made_;
}

uint64_t SimAgent::acked() {
  absl::MutexLock lock(&mu_);
  return acked_;
}

std::string SimAgent::address() {
  absl::MutexLock lock(&mu_);
  return address_;
}

void SimAgent::Make() {
  absl::MutexLock lock(&mu_);
  unacked_.push_back(++made_);
}

void SimAgent::Absorb() {
  if (stream_ == nullptr) return;
  const uint64_t a = stream_->acked();
  absl::MutexLock lock(&mu_);
  if (a > acked_) acked_on_stream_ = true;
  acked_ = std::max(acked_, a);
  while (!unacked_.empty() && unacked_.front() <= acked_) unacked_.pop_front();
}

void SimAgent::Pump() {
  Absorb();
  if (stream_ != nullptr && !stream_ok_) {
    stream_->Finish();
    stream_.reset();
    channel_.reset();
    // The next address at once, unless a whole round failed.
    failed_in_a_row_ = acked_on_stream_ ? 0 : failed_in_a_row_ + 1;
    if (failed_in_a_row_ > 0 && failed_in_a_row_ % addresses_.size() == 0) {
      retry_at_ = absl::Now() + absl::Milliseconds(200);
    }
  }
  if (stream_ == nullptr) {
    if (absl::Now() < retry_at_) return;
    const std::string& addr = addresses_[next_];
    next_ = (next_ + 1) % addresses_.size();
    {
      absl::MutexLock lock(&mu_);
      address_ = addr;
    }
    channel_ = grpc::CreateChannel(addr, grpc::InsecureChannelCredentials());
    stub_ = v1::TelemetryIngest::NewStub(channel_);
    stream_ = std::make_unique<ReportStream>(stub_.get());
    stream_ok_ = true;
    acked_on_stream_ = false;
    sent_upto_ = 0;
    ++streams_;
  }
  std::vector<uint64_t> to_send;
  {
    absl::MutexLock lock(&mu_);
    for (uint64_t s : unacked_) {
      if (s > sent_upto_) to_send.push_back(s);
    }
  }
  for (uint64_t s : to_send) {
    report_.set_seq(s);
    report_.mutable_observed_at()->set_seconds(
        absl::ToUnixSeconds(absl::Now()));
    if (!stream_->Send(report_)) {
      stream_ok_ = false;
      return;
    }
    sent_upto_ = s;
  }
}

}  // namespace tracehealth::testing
