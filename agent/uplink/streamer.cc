#include "agent/uplink/streamer.h"

#include <atomic>
#include <deque>
#include <iostream>
#include <random>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/uplink/heartbeat_former.h"
#include "common/client_credentials.h"
#include "common/grpc_code_name.h"
#include "common/proto_time.h"
#include "common/status.h"
#include "grpcpp/grpcpp.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"

namespace tracehealth::agent {

// A batch is written once it holds this many bytes of reports (the
// server's default message limit is 4 MiB).
constexpr size_t kMaxBatchBytes = 1 << 20;

class Streamer::Impl {
 public:
  Impl(StreamerOptions options, Spool* spool,
       std::shared_ptr<grpc::ChannelCredentials> creds)
      : options_(std::move(options)),
        spool_(spool),
        creds_(std::move(creds)),
        backoff_(options_.backoff, options_.random),
        former_(options_.whole_report_interval) {}

  ~Impl() { Stop(); }

  void Start() {
    absl::MutexLock lock(&mu_);
    if (thread_.joinable()) return;
    thread_ = std::thread([this] { Run(); });
  }

  void Wake() {
    absl::MutexLock lock(&mu_);
    ++wakes_;
  }

  bool Flush(absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (spool_->depth() > 0) {
      const absl::Time now = absl::Now();
      if (now >= deadline) return false;
      absl::MutexLock lock(&mu_);
      const uint64_t progress = progress_;
      auto changed = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || progress_ != progress;
      };
      mu_.AwaitWithTimeout(absl::Condition(&changed),
                           std::min(absl::Milliseconds(50), deadline - now));
    }
    return true;
  }

  void Stop() {
    std::thread t;
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
      if (context_ != nullptr) context_->TryCancel();
      t = std::move(thread_);
    }
    if (t.joinable()) t.join();
  }

  v1::AgentHealth Health() const {
    v1::AgentHealth h;
    h.set_spool_depth(spool_->depth());
    h.set_spool_dropped_total(spool_->dropped_total());
    absl::MutexLock lock(&mu_);
    h.set_spool_corrupt_total(spool_->corrupt_total() + unparsable_);
    h.set_rejected_total(rejected_);
    if (last_acked_.has_value()) {
      h.set_last_acked_seq(*last_acked_);
      *h.mutable_last_ack_at() = ToProto(*last_ack_at_);
    }
    return h;
  }

  uint64_t connects() const {
    absl::MutexLock lock(&mu_);
    return connects_;
  }

  uint64_t streams() const {
    absl::MutexLock lock(&mu_);
    return streams_;
  }

  uint64_t heartbeat_forms() const {
    absl::MutexLock lock(&mu_);
    return heartbeat_forms_;
  }

 private:
  void HandleAck(const v1::Ack& ack) {
    // Our own counters first, so that once the spool is empty (what Flush
    // waits for) Health() already reflects this ack.
    {
      absl::MutexLock lock(&mu_);
      rejected_ += ack.rejected_size();
      if (ack.heartbeat_forms()) accepts_heartbeat_forms_ = true;
      if (ack.report_batches() && !batches_unimplemented_) {
        accepts_report_batches_ = true;
      }
      if (ack.acked_seq() > 0) {
        last_acked_ = ack.acked_seq();
        last_ack_at_ = absl::Now();
        acked_this_stream_ = true;
        while (!in_flight_.empty() && in_flight_.front() <= ack.acked_seq()) {
          in_flight_.pop_front();
        }
      }
      for (const v1::Rejection& r : ack.rejected()) {
        for (auto it = in_flight_.begin(); it != in_flight_.end(); ++it) {
          if (*it == r.seq()) {
            in_flight_.erase(it);
            break;
          }
        }
      }
    }
    for (const v1::Rejection& r : ack.rejected()) {
      if (spool_->Remove(r.seq())) {
        std::cerr << "tracehealth-agent: server rejected report seq " << r.seq()
                  << " (code " << r.code() << "): " << r.message() << "\n";
      }
    }
    if (ack.acked_seq() > 0) {
      absl::Status s = spool_->Ack(ack.acked_seq());
      if (!s.ok()) {
        std::cerr << "tracehealth-agent: spool: " << s.message() << "\n";
      }
    }
    absl::MutexLock lock(&mu_);
    ++progress_;
  }

  // How a stream ended.
  enum class End {
    kDone,       // everything sent was answered; we half-closed, status OK
    kFailed,     // broken, refused, or ended by the server
    kWhole,      // the server needs the next report whole (no failure)
    kUnbatched,  // the server has no ReportBatches: again, one a message
    kStopped,    // Stop()
  };

  // One stream on `channel`: sends what the spool holds (a replay of every
  // unacked record first) until the spool is empty and every record written
  // was acked or rejected, then half-closes and reads to the end. Ends
  // early when the stream breaks or on Stop().
  End RunStream(const std::shared_ptr<grpc::Channel>& channel) {
    auto stub = v1::TelemetryIngest::NewStub(channel);
    grpc::ClientContext context;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return End::kStopped;
      context_ = &context;
      in_flight_.clear();
      acked_this_stream_ = false;
      stream_broken_ = false;
      ++streams_;
    }
    // A server whose acks offered ReportBatches gets the backlog several
    // reports a message; otherwise (and for a single report) one a message.
    bool batched;
    {
      absl::MutexLock lock(&mu_);
      batched = accepts_report_batches_ && options_.max_batch_reports > 1;
    }
    std::unique_ptr<grpc::ClientReaderWriter<v1::HostReport, v1::Ack>> single;
    std::unique_ptr<grpc::ClientReaderWriter<v1::ReportBatch, v1::Ack>> batches;
    if (batched) {
      batches = stub->ReportBatches(&context);
    } else {
      single = stub->Report(&context);
    }
    std::thread reader([&] {
      v1::Ack ack;
      while (batched ? batches->Read(&ack) : single->Read(&ack)) {
        HandleAck(ack);
      }
      absl::MutexLock lock(&mu_);
      stream_broken_ = true;
    });
    v1::ReportBatch batch;  // gathered, not yet written (batched streams)
    size_t batch_bytes = 0;
    auto write_batch = [&] {
      const bool ok = batches->Write(batch);
      batch.Clear();
      batch_bytes = 0;
      return ok;
    };
    uint64_t last_sent = 0;
    bool done = false;  // we half-close: nothing left to send or answer
    while (true) {
      bool window_full;
      uint64_t wakes;
      {
        absl::MutexLock lock(&mu_);
        if (stopping_ || stream_broken_) break;
        window_full = in_flight_.size() >= options_.max_in_flight;
        // Read before the spool: a record appended after NextAfter below
        // comes with a Wake that changes wakes_.
        wakes = wakes_;
      }
      std::optional<std::pair<uint64_t, std::string>> rec;
      if (!window_full) rec = spool_->NextAfter(last_sent);
      if (!rec.has_value() && batch.reports_size() > 0) {
        // Nothing more to gather now: what is gathered goes.
        if (!write_batch()) break;
        continue;
      }
      if (!rec.has_value()) {
        absl::MutexLock lock(&mu_);
        if (in_flight_.empty() && !stream_broken_) {
          done = true;
          wakes_at_close_ = wakes;
          break;
        }
        // Wait for new records, an ack, a broken stream or Stop().
        const uint64_t progress = progress_;
        auto changed = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return stopping_ || stream_broken_ || wakes_ != wakes ||
                 progress_ != progress;
        };
        mu_.AwaitWithTimeout(absl::Condition(&changed),
                             absl::Milliseconds(200));
        continue;
      }
      v1::HostReport report;
      if (!report.ParseFromString(rec->second)) {
        spool_->Remove(rec->first);
        absl::MutexLock lock(&mu_);
        ++unparsable_;
        continue;
      }
      bool forms;
      {
        // In flight before it is written: its ack may come before Write
        // returns.
        absl::MutexLock lock(&mu_);
        in_flight_.push_back(rec->first);
        forms = accepts_heartbeat_forms_;
      }
      if (!forms) {
        former_.Reset();
      } else if (former_.Form(rec->second, &report)) {
        absl::MutexLock lock(&mu_);
        ++heartbeat_forms_;
      }
      last_sent = rec->first;
      if (!batched) {
        if (!single->Write(report)) break;
        continue;
      }
      batch_bytes += report.ByteSizeLong();
      *batch.add_reports() = std::move(report);
      if (static_cast<uint64_t>(batch.reports_size()) >=
              options_.max_batch_reports ||
          batch_bytes >= kMaxBatchBytes) {
        if (!write_batch()) break;
      }
    }
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) context.TryCancel();
    }
    if (batched) {
      batches->WritesDone();
    } else {
      single->WritesDone();
    }
    reader.join();
    grpc::Status status = batched ? batches->Finish() : single->Finish();
    absl::MutexLock lock(&mu_);
    context_ = nullptr;
    if (stopping_) return End::kStopped;
    // The server finishes a half-closed stream with OK once it has answered
    // everything on it: the end of a send, not a failure.
    if (done && status.ok()) {
      last_error_.clear();
      return End::kDone;
    }
    // Whatever this stream sent whole may not have arrived.
    former_.Reset();
    if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
      return End::kWhole;
    }
    if (batched && status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
      // A server without ReportBatches (another replica behind the same
      // address, of an older version): one report a message from now on.
      accepts_report_batches_ = false;
      batches_unimplemented_ = true;  // until the next channel
      return End::kUnbatched;
    }
    // Log each new kind of failure once, not once per retry.
    std::string error = status.ok()
                            ? std::string("server closed the stream")
                            : absl::StrCat(GrpcCodeName(status.error_code()),
                                           ": ", status.error_message());
    if (error != last_error_) {
      std::cerr << "tracehealth-agent: stream to " << address_
                << " ended: " << error << "; reconnecting with backoff\n";
      last_error_ = error;
    }
    if (acked_this_stream_) last_error_.clear();
    return End::kFailed;
  }

  // Waits until the spool holds records and, when `need_wake`, Wake() was
  // called since the last stream decided to close (records that stream
  // could not remove, e.g. after a spool write error, wait for the next
  // report instead of opening stream after stream). False on Stop().
  bool WaitForWork(bool need_wake) {
    absl::MutexLock lock(&mu_);
    while (true) {
      if (stopping_) return false;
      if (!need_wake || wakes_ != wakes_at_close_) {
        // depth() takes the spool's lock, never ours: safe under mu_.
        if (spool_->depth() > 0) return true;
        wakes_at_close_ = wakes_;
        need_wake = true;
      }
      const uint64_t wakes = wakes_;
      auto changed = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || wakes_ != wakes;
      };
      mu_.AwaitWithTimeout(absl::Condition(&changed), absl::Milliseconds(200));
    }
  }

  void Run() {
    grpc::ChannelArguments args;
    // Our own backoff paces reconnects; keep gRPC's short so it does not add
    // a hidden second one.
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    args.SetMaxSendMessageSize(64 << 20);
    // A channel of its own pool: a fresh channel is a fresh connection, not
    // the old one found again in gRPC's global subchannel pool.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    ClientTls tls;
    tls.server_name = options_.tls_server_name;
    ApplyServerName(tls, &args);
    const std::vector<std::string> addresses =
        absl::StrSplit(options_.server, ',');
    size_t next = 0;
    size_t failed_in_a_row = 0;  // streams that ended without an ack
    std::shared_ptr<grpc::Channel> channel;
    bool need_wake = false;
    while (true) {
      if (!WaitForWork(need_wake)) return;
      if (channel == nullptr) {
        // A fresh channel after a failure: a server restarted on the same
        // address is found at once, and a refused connection is closed.
        {
          absl::MutexLock lock(&mu_);
          address_ = addresses[next];
          ++connects_;
        }
        channel = grpc::CreateCustomChannel(addresses[next], creds_, args);
      }
      const End end = RunStream(channel);
      if (end == End::kStopped) return;
      if (end == End::kWhole || end == End::kUnbatched) {
        // Again at once, on the same channel: the next stream starts with
        // the oldest unacked report, whole.
        need_wake = false;
        continue;
      }
      if (end == End::kDone) {
        // Idle until the next report, on the same connection (the server
        // closes it after 5 minutes without a stream; gRPC then reconnects
        // on the next one).
        absl::MutexLock lock(&mu_);
        backoff_.Reset();
        failed_in_a_row = 0;
        need_wake = true;
        continue;
      }
      need_wake = false;
      channel.reset();
      {
        // A new channel may reach another server: forms and batches once
        // it says so.
        absl::MutexLock lock(&mu_);
        accepts_heartbeat_forms_ = false;
        accepts_report_batches_ = false;
        batches_unimplemented_ = false;
      }
      // The next attempt goes to the next address: away from a replica that
      // failed, and around the list when one asked its clients to go away.
      next = (next + 1) % addresses.size();
      absl::Duration delay;
      {
        absl::MutexLock lock(&mu_);
        if (acked_this_stream_) {
          backoff_.Reset();
          failed_in_a_row = 0;
        } else {
          ++failed_in_a_row;
        }
        // Each address is tried once at once; the backoff paces the rounds.
        delay = acked_this_stream_ || failed_in_a_row % addresses.size() != 0
                    ? absl::ZeroDuration()
                    : backoff_.Next();
      }
      if (delay == absl::ZeroDuration()) continue;
      if (options_.on_backoff) options_.on_backoff(delay);
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&stopping_), delay);
      if (stopping_) return;
    }
  }

  const StreamerOptions options_;
  Spool* const spool_;
  const std::shared_ptr<grpc::ChannelCredentials> creds_;

  mutable absl::Mutex mu_;
  Backoff backoff_ ABSL_GUARDED_BY(mu_);
  // Used by the sender thread only (RunStream).
  HeartbeatFormer former_;
  // The server of the current channel accepts heartbeat forms.
  bool accepts_heartbeat_forms_ ABSL_GUARDED_BY(mu_) = false;
  // The server of the current channel takes ReportBatches streams.
  bool accepts_report_batches_ ABSL_GUARDED_BY(mu_) = false;
  // A ReportBatches stream on the current channel ended UNIMPLEMENTED: its
  // acks' offers are not taken up again.
  bool batches_unimplemented_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t heartbeat_forms_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::string address_ ABSL_GUARDED_BY(mu_);  // of the current stream
  grpc::ClientContext* context_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool stream_broken_ ABSL_GUARDED_BY(mu_) = false;
  bool acked_this_stream_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<uint64_t> in_flight_ ABSL_GUARDED_BY(mu_);
  uint64_t wakes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t progress_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t rejected_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t unparsable_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t connects_ ABSL_GUARDED_BY(mu_) = 0;  // channels made
  uint64_t streams_ ABSL_GUARDED_BY(mu_) = 0;
  // wakes_ when the last stream found nothing more to send.
  uint64_t wakes_at_close_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<uint64_t> last_acked_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Time> last_ack_at_ ABSL_GUARDED_BY(mu_);
  std::string last_error_ ABSL_GUARDED_BY(mu_);
};

absl::StatusOr<std::unique_ptr<Streamer>> Streamer::Create(
    StreamerOptions options, Spool* spool) {
  if (options.server.empty() ||
      absl::StrContains(absl::StrCat(",", options.server, ","), ",,")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "streamer: empty server address in \"", options.server, "\""));
  }
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> creds =
      ClientCredentials({options.tls_ca, options.tls_cert, options.tls_key,
                         options.tls_server_name});
  if (!creds.ok()) return creds.status();
  if (!options.random) {
    auto rng = std::make_shared<std::mt19937_64>(std::random_device{}());
    options.random = [rng] {
      return std::uniform_real_distribution<double>(0.0, 1.0)(*rng);
    };
  }
  return std::unique_ptr<Streamer>(new Streamer(
      std::make_unique<Impl>(std::move(options), spool, *std::move(creds))));
}

Streamer::Streamer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Streamer::~Streamer() { impl_->Stop(); }
void Streamer::Start() { impl_->Start(); }
void Streamer::Wake() { impl_->Wake(); }
bool Streamer::Flush(absl::Duration timeout) { return impl_->Flush(timeout); }
void Streamer::Stop() { impl_->Stop(); }
v1::AgentHealth Streamer::Health() const { return impl_->Health(); }
uint64_t Streamer::connects() const { return impl_->connects(); }
uint64_t Streamer::streams() const { return impl_->streams(); }
uint64_t Streamer::heartbeat_forms() const { return impl_->heartbeat_forms(); }

}  // namespace tracehealth::agent
