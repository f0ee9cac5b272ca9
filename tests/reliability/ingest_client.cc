#include "tests/reliability/ingest_client.h"

#include <algorithm>
#include <utility>

#include "tools/loadgen/sample_report.h"

namespace tracehealth::testing {

ReportStream::ReportStream(v1::TelemetryIngest::Stub* stub) {
  stream_ = stub->Report(&ctx_);
  reader_ = std::thread([this] {
    v1::Ack ack;
    while (stream_->Read(&ack)) {
      absl::MutexLock lock(&mu_);
      acked_ = std::max(acked_, ack.acked_seq());
      if (ack.heartbeat_forms()) heartbeat_forms_ = true;
      for (const auto& r : ack.rejected()) rejections_.push_back(r);
    }
    absl::MutexLock lock(&mu_);
    closed_ = true;
  });
}

ReportStream::~ReportStream() {
  if (reader_.joinable()) {
    ctx_.TryCancel();
    reader_.join();
  }
}

bool ReportStream::Send(const v1::HostReport& report) {
  return stream_->Write(report);
}

bool ReportStream::WaitAcked(uint64_t seq, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return acked_ >= seq || closed_;
  };
  mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
  return acked_ >= seq;
}

bool ReportStream::WaitRejections(size_t n, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return rejections_.size() >= n || closed_;
  };
  mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
  return rejections_.size() >= n;
}

bool ReportStream::WaitClosed(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return closed_; };
  return mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
}

uint64_t ReportStream::acked() {
  absl::MutexLock lock(&mu_);
  return acked_;
}

bool ReportStream::heartbeat_forms() {
  absl::MutexLock lock(&mu_);
  return heartbeat_forms_;
}

std::vector<v1::Rejection> ReportStream::rejections() {
  absl::MutexLock lock(&mu_);
  return rejections_;
}

grpc::Status ReportStream::Finish() {
  if (finished_) return status_;
  finished_ = true;
  stream_->WritesDone();
  reader_.join();
  status_ = stream_->Finish();
  return status_;
}

Bystander::Bystander(std::shared_ptr<grpc::Channel> channel,
                     std::string host_id, absl::Duration period)
    : channel_(std::move(channel)),
      stub_(v1::TelemetryIngest::NewStub(channel_)),
      host_id_(std::move(host_id)),
      period_(period) {
  stream_ = std::make_unique<ReportStream>(stub_.get());
  sender_ = std::thread([this] { Run(); });
  watcher_ = std::thread([this] {
    while (!stop_.load()) {
      UpdateLatency();
      absl::SleepFor(absl::Milliseconds(2));
    }
  });
}

void Bystander::UpdateLatency() {
  const uint64_t acked = stream_->acked();
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&mu_);
  const uint64_t known = std::min<uint64_t>(acked, send_times_.size());
  for (uint64_t s = seen_acked_ + 1; s <= known; ++s) {
    max_latency_ = std::max(max_latency_, now - send_times_[s - 1]);
  }
  seen_acked_ = std::max(seen_acked_, known);
}

Bystander::~Bystander() { Stop(); }

void Bystander::Run() {
  server::SampleHost host = server::FleetHost(7);
  host.host_id = host_id_;
  v1::HostReport report = server::SampleReport(host, 1, absl::Now());
  for (uint64_t seq = 1; !stop_.load(); ++seq) {
    report.set_seq(seq);
    const absl::Time now = absl::Now();
    report.mutable_observed_at()->set_seconds(absl::ToUnixSeconds(now));
    {
      absl::MutexLock lock(&mu_);
      send_times_.push_back(now);
    }
    if (!stream_->Send(report)) break;
    sent_.store(seq);
    absl::SleepFor(period_);
  }
}

grpc::Status Bystander::Stop() {
  if (stopped_) return status_;
  stopped_ = true;
  stop_.store(true);
  sender_.join();
  watcher_.join();
  stream_->WaitAcked(sent_.load(), absl::Seconds(20));
  UpdateLatency();
  status_ = stream_->Finish();
  return status_;
}

uint64_t Bystander::acked() { return stream_->acked(); }

absl::Duration Bystander::max_ack_latency() {
  absl::MutexLock lock(&mu_);
  return max_latency_;
}

bool Bystander::WaitProgress(uint64_t n, absl::Duration timeout) {
  return stream_->WaitAcked(stream_->acked() + n, timeout);
}

}  // namespace tracehealth::testing
