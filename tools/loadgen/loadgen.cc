#include "tools/loadgen/loadgen.h"

#include <sys/resource.h>

#include <algorithm>
#include <deque>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc_code_name.h"
#include "common/report/heartbeat_form.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::server {
namespace {

// Reports leave as bytes: each host's report is encoded once without seq and
// observed_at, and every send appends those two fields (a protobuf parser
// reads concatenated encodings as one message). The server receives what an
// agent would send, while the generator's CPU, which shares the machine with
// the server, is not spent encoding the same report again and again.
using ReportStub = grpc::TemplatedGenericStub<grpc::ByteBuffer, v1::Ack>;
constexpr char kReportMethod[] = "/tracehealth.v1.TelemetryIngest/Report";
constexpr char kReportBatchesMethod[] =
    "/tracehealth.v1.TelemetryIngest/ReportBatches";

// What one stream of a host sends.
struct StreamPlan {
  uint64_t first_seq = 1;
  uint64_t reports = 0;  // 0: until the deadline
  bool hold_open = false;
};

// One stream of a simulated host: writes reports while its window allows,
// reads acks.
class HostStream : public grpc::ClientBidiReactor<grpc::ByteBuffer, v1::Ack> {
 public:
  // `body`: the host's report without seq and observed_at (not owned);
  // `form`: what follows the first report (e.g. its heartbeat form on it),
  // empty: `body` again.
  HostStream(ReportStub* stub, const std::string* body, std::string form,
             const StreamPlan& plan, const LoadOptions& opts,
             absl::Time deadline)
      : body_(*body),
        form_(std::move(form)),
        plan_(plan),
        opts_(opts),
        deadline_(deadline),
        next_seq_(plan.first_seq) {
    stub->PrepareBidiStreamingCall(
        &ctx_, opts.batch > 1 ? kReportBatchesMethod : kReportMethod,
        grpc::StubOptions(), this);
    StartRead(&ack_);
    StartCall();
    absl::MutexLock lock(&mu_);
    MaybeWriteLocked();
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (!ok) {
      write_failed_ = true;
      return;
    }
    MaybeWriteLocked();
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;  // the stream ended; OnDone follows
    {
      absl::MutexLock lock(&mu_);
      absl::Time now = absl::Now();
      rejected_ += ack_.rejected_size();
      while (!inflight_.empty() &&
             inflight_.front().first <= ack_.acked_seq()) {
        latencies_.push_back(
            absl::ToInt64Microseconds(now - inflight_.front().second));
        inflight_.pop_front();
        acked_++;
      }
      MaybeWriteLocked();
    }
    StartRead(&ack_);
  }

  // After OnDone the call is gone: no Start* may follow (done_ stops
  // MaybeWriteLocked), or gRPC calls into a freed call object ("pure virtual
  // method called" once the server went away under an idle stream).
  void OnDone(const grpc::Status& s) override {
    absl::MutexLock lock(&mu_);
    status_ = s;
    done_ = true;
  }

  void Wait() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&done_));
  }

  bool done() {
    absl::MutexLock l(&mu_);
    return done_;
  }

  // Sends what is due (a paced host's next report).
  void Nudge() {
    absl::MutexLock lock(&mu_);
    MaybeWriteLocked();
  }

  // Stops sending; the stream is half-closed once writes drain.
  void Stop() {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    MaybeWriteLocked();
  }

  // Totals (after Wait).
  uint64_t sent() {
    absl::MutexLock l(&mu_);
    return sent_;
  }
  uint64_t acked() {
    absl::MutexLock l(&mu_);
    return acked_;
  }
  uint64_t rejected() {
    absl::MutexLock l(&mu_);
    return rejected_;
  }
  grpc::Status status() {
    absl::MutexLock l(&mu_);
    return status_;
  }
  std::vector<int64_t> TakeLatencies() {
    absl::MutexLock l(&mu_);
    return std::move(latencies_);
  }

 private:
  void MaybeWriteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (writing_ || closed_ || write_failed_ || done_) return;
    bool out_of_reports = plan_.reports > 0 && sent_ >= plan_.reports;
    const bool past = absl::Now() >= deadline_;
    // An agent between reports: the stream stays open, idle.
    if (out_of_reports && plan_.hold_open && !stopping_ && !past) return;
    if (stopping_ || out_of_reports || past) {
      // Half-close once every sent report is acked.
      if (inflight_.empty()) {
        closed_ = true;
        StartWritesDone();
      }
      return;
    }
    if (inflight_.size() >= static_cast<size_t>(opts_.window)) return;
    absl::Time now = absl::Now();
    if (now < next_send_) return;
    next_send_ = now + opts_.report_interval;
    bytes_.clear();
    // A batch: as many reports as the window has room for, up to
    // opts_.batch, each as field 1 (ReportBatch.reports).
    const size_t room = static_cast<size_t>(opts_.window) - inflight_.size();
    const size_t n =
        opts_.batch > 1 ? std::min(room, static_cast<size_t>(opts_.batch)) : 1;
    for (size_t i = 0; i < n; ++i) {
      if (plan_.reports > 0 && sent_ >= plan_.reports) break;
      v1::HostReport tail;
      tail.set_seq(next_seq_);
      int64_t ns = absl::ToUnixNanos(now);
      tail.mutable_observed_at()->set_seconds(ns / 1000000000);
      tail.mutable_observed_at()->set_nanos(
          static_cast<int32_t>(ns % 1000000000));
      const std::string& head =
          next_seq_ == plan_.first_seq || form_.empty() ? body_ : form_;
      if (opts_.batch > 1) {
        uint64_t len = head.size() + tail.ByteSizeLong();
        bytes_.push_back('\x0a');  // field 1, length-delimited
        for (; len >= 0x80; len >>= 7) {
          bytes_.push_back(static_cast<char>(len | 0x80));
        }
        bytes_.push_back(static_cast<char>(len));
      }
      bytes_.append(head);
      tail.AppendToString(&bytes_);
      inflight_.emplace_back(next_seq_, now);
      next_seq_++;
      sent_++;
    }
    grpc::Slice slice(bytes_);
    out_ = grpc::ByteBuffer(&slice, 1);
    writing_ = true;
    StartWrite(&out_);
  }

  grpc::ClientContext ctx_;
  const std::string& body_;  // the report without seq and observed_at
  const std::string form_;   // the reports after the first; empty: body_
  const StreamPlan plan_;
  v1::Ack ack_;
  const LoadOptions& opts_;
  const absl::Time deadline_;
  absl::Mutex mu_;
  std::string bytes_ ABSL_GUARDED_BY(mu_);  // the report being written
  grpc::ByteBuffer out_ ABSL_GUARDED_BY(mu_);
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_);
  absl::Time next_send_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::deque<std::pair<uint64_t, absl::Time>> inflight_ ABSL_GUARDED_BY(mu_);
  std::vector<int64_t> latencies_ ABSL_GUARDED_BY(mu_);
  uint64_t sent_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t acked_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t rejected_ ABSL_GUARDED_BY(mu_) = 0;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool write_failed_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status status_ ABSL_GUARDED_BY(mu_);
};

// One simulated host: its report, its channel and the stream it sends on
// now, with the totals of its streams that ended.
struct Host {
  std::string body;       // the report without seq and observed_at
  v1::HostReport report;  // with heartbeat_forms: to make forms of
  ReportStub* stub = nullptr;
  std::unique_ptr<HostStream> stream;
  uint64_t next_seq = 1;
  absl::Time next_start;
  uint64_t sent = 0;   // on ended streams
  uint64_t acked = 0;  // on ended streams

  uint64_t Acked() const {
    return acked + (stream != nullptr ? stream->acked() : 0);
  }

  // Adds the stream's figures (once it is done) to the host's and `r`.
  void Harvest(LoadResult* r, std::vector<int64_t>* lat) {
    sent += stream->sent();
    acked += stream->acked();
    r->sent += stream->sent();
    r->acked += stream->acked();
    r->rejected += stream->rejected();
    grpc::Status st = stream->status();
    if (!st.ok()) {
      r->failed_streams++;
      if (r->first_error.empty()) {
        r->first_error = absl::StrCat(GrpcCodeName(st.error_code()), ": ",
                                      st.error_message());
      }
    }
    std::vector<int64_t> l = stream->TakeLatencies();
    lat->insert(lat->end(), l.begin(), l.end());
  }
};

absl::Duration Percentile(std::vector<int64_t>& us, double q) {
  if (us.empty()) return absl::ZeroDuration();
  size_t i = std::min(us.size() - 1, static_cast<size_t>(q * us.size()));
  std::nth_element(us.begin(), us.begin() + i, us.end());
  return absl::Microseconds(us[i]);
}

}  // namespace

uint64_t RaiseOpenFileLimit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 0;
  if (lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &lim);
  }
  return lim.rlim_max;
}

absl::StatusOr<LoadResult> RunLoad(const LoadOptions& opts) {
  if (opts.hosts <= 0 || opts.window <= 0 || opts.channels <= 0 ||
      opts.batch <= 0 || opts.batch > 256) {
    return absl::InvalidArgumentError(
        "hosts, window and channels must be > 0, batch 1 to 256");
  }
  auto creds =
      opts.credentials ? opts.credentials : grpc::InsecureChannelCredentials();
  std::vector<std::unique_ptr<ReportStub>> stubs;
  for (int c = 0; c < opts.channels; ++c) {
    grpc::ChannelArguments args;
    args.SetInt("grpc.channel_id", c);  // distinct connections
    if (!opts.tls_server_name.empty())
      args.SetSslTargetNameOverride(opts.tls_server_name);
    args.SetMaxSendMessageSize(64 << 20);
    stubs.push_back(std::make_unique<ReportStub>(
        grpc::CreateCustomChannel(opts.server, creds, args)));
  }
  LoadResult result;
  // The real models run once per host.
  std::vector<Host> hosts(opts.hosts);
  absl::Time now = absl::Now();
  for (int i = 0; i < opts.hosts; ++i) {
    v1::HostReport report =
        SampleReport(FleetHost(opts.first_host + i), opts.first_seq, now);
    if (i == 0)
      result.report_bytes = static_cast<int64_t>(report.ByteSizeLong());
    report.clear_seq();
    report.clear_observed_at();
    if (opts.heartbeat_forms) {
      report.mutable_heartbeat();  // sent whole as a base
      hosts[i].report = report;
    }
    hosts[i].body = report.SerializeAsString();
    hosts[i].stub = stubs[i % opts.channels].get();
    hosts[i].next_seq = opts.first_seq;
  }
  absl::Time start = absl::Now();
  absl::Time deadline = start + opts.duration;
  std::vector<int64_t> lat;
  std::vector<std::unique_ptr<HostStream>> retired, retiring;
  // Starts a host's next stream: one report, or all of them on one stream.
  auto begin = [&](Host& h, absl::Time at) {
    StreamPlan plan;
    plan.first_seq = h.next_seq;
    plan.reports = opts.stream_per_report ? 1 : opts.reports_per_host;
    plan.hold_open = opts.hold_open && !opts.stream_per_report;
    std::string form;
    if (opts.heartbeat_forms) {
      v1::HostReport f = HeartbeatFormOf(h.report, plan.first_seq);
      if (result.form_bytes == 0) {
        // As sent: with a seq and a time (nanoseconds too).
        f.set_seq(plan.first_seq + 1);
        f.mutable_observed_at()->set_seconds(absl::ToUnixSeconds(at));
        f.mutable_observed_at()->set_nanos(123456789);
        result.form_bytes = static_cast<int64_t>(f.ByteSizeLong());
      }
      f.clear_seq();
      f.clear_observed_at();
      form = f.SerializeAsString();
    }
    h.stream = std::make_unique<HostStream>(h.stub, &h.body, std::move(form),
                                            plan, opts, deadline);
    h.next_seq += plan.reports;
    h.next_start = at + opts.report_interval;
  };
  // Hosts not begun here begin in the loop below once next_start passes.
  for (int i = 0; i < opts.hosts; ++i) {
    hosts[i].next_start = start + opts.start_spread * i / opts.hosts;
    if (hosts[i].next_start <= start) begin(hosts[i], start);
  }
  bool started = false;
  auto notify_started = [&] {
    if (started || !hosts.back().stream) return;
    started = true;
    if (opts.on_started) opts.on_started();
  };
  notify_started();
  // Streams stop themselves at the deadline when an ack or write completes;
  // nudge idle ones.
  bool all_acked = false;
  while (absl::Now() < deadline) {
    absl::SleepFor(std::min(absl::Milliseconds(100), deadline - absl::Now()));
    if (opts.stop != nullptr && opts.stop->load()) break;
    // Streams that ended a round ago are no longer inside a callback.
    retired = std::move(retiring);
    retiring.clear();
    now = absl::Now();
    bool all_done = true;
    for (Host& h : hosts) {
      if (h.stream != nullptr &&
          (!opts.stream_per_report || !h.stream->done())) {
        all_done = all_done && h.stream->done();
        if (opts.report_interval > absl::ZeroDuration()) h.stream->Nudge();
        continue;
      }
      // The agent's behaviour: the stream closed once acked; the next report
      // goes on a new stream over the same channel when it is due.
      if (h.stream != nullptr) {
        h.Harvest(&result, &lat);
        retiring.push_back(std::move(h.stream));
      }
      const bool more =
          opts.reports_per_host == 0 || h.sent < opts.reports_per_host;
      if (more && now >= h.next_start) begin(h, now);
      all_done = all_done && !more;
    }
    notify_started();
    // Every stream ended (the server went away): nothing is left to send.
    if (all_done && !opts.stream_per_report) break;
    if (opts.reports_per_host > 0 && !all_acked) {
      bool all = true;
      for (Host& h : hosts) all = all && h.Acked() >= opts.reports_per_host;
      if (all) {
        all_acked = true;
        if (opts.on_all_acked) opts.on_all_acked();
        if (!opts.hold_open && !opts.stream_per_report) break;
      }
    }
  }
  for (Host& h : hosts) {
    if (h.stream != nullptr) h.stream->Stop();
  }
  for (Host& h : hosts) {
    if (h.stream == nullptr) continue;
    h.stream->Wait();
    h.Harvest(&result, &lat);
  }
  result.elapsed = absl::Now() - start;
  result.acked_per_second =
      static_cast<double>(result.acked) / absl::ToDoubleSeconds(result.elapsed);
  result.ack_p50 = Percentile(lat, 0.50);
  result.ack_p90 = Percentile(lat, 0.90);
  result.ack_p99 = Percentile(lat, 0.99);
  result.ack_max = Percentile(lat, 1.0);
  return result;
}

}  // namespace tracehealth::server
