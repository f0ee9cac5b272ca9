#include "server/ingest/ingest_service.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/happens_before.h"
#include "common/host_identity.h"
#include "common/report/report_scan.h"
#include "grpcpp/grpcpp.h"
#include "server/ingest/report_batch.h"
#include "server/ingest/report_row.h"
#include "server/storage/heartbeat_report.h"

namespace tracehealth::server {

// State machine of one Report stream. Invariants (under mu_):
// - at most one read and one write in flight;
// - Finish is called once, when no read is in flight, every submitted
//   report has been committed (or failed) and its ack has been written.
// Reads and writes raw bytes: the wire bytes of a report are validated and
// stored as they arrived (no second serialization), and a report that does
// not decode ends the stream with INVALID_ARGUMENT instead of looking like a
// half-close.
class ReportReactor
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  // `batched`: a ReportBatches stream (each message a ReportBatch).
  ReportReactor(IngestService* service, grpc::CallbackServerContext* ctx,
                bool batched)
      : service_(service), ctx_(ctx), batched_(batched) {
    if (service_->options_.require_client_identity) {
      auto auth = ctx_->auth_context();
      if (auth != nullptr) {
        for (const char* prop :
             {"x509_common_name", "x509_subject_alternative_name"}) {
          for (const auto& v : auth->FindPropertyValues(prop)) {
            identities_.emplace_back(v.data(), v.size());
          }
        }
      }
    }
    service_->metrics_->StreamOpened();
  }

  // Starts reading, or ends the stream at once with `refuse` when it is not
  // OK (shutting down, at the stream limit).
  void Begin(const grpc::Status& refuse) {
    Actions a;
    {
      absl::MutexLock lock(&mu_);
      if (!refuse.ok()) {
        stop_ = refuse;
        MaybeFinishLocked(a);
      } else {
        read_in_flight_ = true;
        a.read = true;
      }
    }
    Run(a);
  }

  void Drain() {
    absl::MutexLock lock(&mu_);
    draining_ = true;
  }

  void OnReadDone(bool ok) override {
    HappensAfter(&incoming_);
    Actions a;
    if (!ok) {
      {
        absl::MutexLock lock(&mu_);
        read_in_flight_ = false;
        reads_done_ = true;
        MaybeFinishLocked(a);
      }
      EndReaction(a);
      return;
    }
    bool dropped = false;
    {
      absl::MutexLock lock(&mu_);
      if (finished_ || !stop_.ok()) {
        // The stream is ending; the client replays what it sent after the
        // failure on a new stream.
        dropped = true;
        read_in_flight_ = false;
        MaybeFinishLocked(a);
      }
    }
    if (dropped) {
      incoming_.Clear();
      EndReaction(a);
      return;
    }
    std::string wire;
    {
      std::vector<grpc::Slice> slices;
      (void)incoming_.Dump(&slices);
      wire.reserve(incoming_.Length());
      for (const grpc::Slice& sl : slices) {
        wire.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
      }
      incoming_.Clear();
    }
    const bool writer_full = HandleMessage(std::move(wire));
    {
      absl::MutexLock lock(&mu_);
      read_in_flight_ = false;
      if (writer_full && outstanding_ > 0) {
        // Backpressure without blocking a callback thread: the next read
        // starts when a report of this stream has been committed.
        reads_paused_ = true;
      } else {
        MaybeReadLocked(a);
      }
      MaybeWriteAckLocked(a);
      MaybeFinishLocked(a);
    }
    EndReaction(a);
  }

  void OnWriteDone(bool ok) override {
    HappensAfter(&out_);
    Actions a;
    {
      absl::MutexLock lock(&mu_);
      write_in_flight_ = false;
      if (!ok) write_failed_ = true;
      MaybeWriteAckLocked(a);
      MaybeFinishLocked(a);
    }
    EndReaction(a);
  }

  // Nothing to do on cancellation (the pending read or write fails and its
  // reaction ends the stream), but gRPC read the reactor to call this on
  // whichever thread: that happens before OnDone's delete (see EndReaction).
  void OnCancel() override { HappensBefore(this); }

  void OnDone() override {
    HappensAfter(this);  // after Finish and every reaction (Run, EndReaction)
    service_->metrics_->StreamClosed();
    service_->Unregister(this);
    delete this;
  }

 private:
  // What to start once mu_ is released (gRPC may run a reaction inline in a
  // Start* or Finish call, and OnDone may follow Finish at once).
  struct Actions {
    bool read = false;
    bool write = false;
    bool finish = false;
    grpc::Status status;
  };

  // Starts what `a` says, Finish last: when Run is not called from a
  // reaction (OnCommitted), `this` may be deleted as soon as Finish returns.
  //
  // gRPC orders these hand-offs inside libgrpc++, invisibly to
  // ThreadSanitizer; HappensBefore/After state them: an operation's reaction
  // runs after the operation was started (one tag per kind: a read's and a
  // write's reactions may run at the same time), and OnDone after Finish.
  void Run(const Actions& a) {
    if (a.write) {
      HappensBefore(&out_);
      StartWrite(&out_);
    }
    if (a.read) {
      HappensBefore(&incoming_);
      StartRead(&incoming_);
    }
    if (a.finish) {
      HappensBefore(this);
      Finish(a.status);
    }
  }

  // The last step of every reaction: Run, then state that OnDone comes after
  // all of it, gRPC's own use of the reactor in Start*/Finish included. gRPC
  // calls OnDone only after the running reaction has returned, so `this`
  // outlives Finish here.
  void EndReaction(const Actions& a) {
    Run(a);
    HappensBefore(this);
  }

  // Starts the next read unless the stream is stopping.
  void MaybeReadLocked(Actions& a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (draining_ && stop_.ok()) {
      stop_ =
          grpc::Status(grpc::StatusCode::UNAVAILABLE, "server shutting down");
    }
    if (stop_.ok()) {
      read_in_flight_ = true;
      a.read = true;
    }
  }

  // Checks and queues the report of a Report stream's message, or each
  // report of a ReportBatches stream's message in order, as long as the
  // stream goes on. Returns whether the writer's queue is full.
  bool HandleMessage(std::string wire) {
    if (!batched_) return HandleReport(std::move(wire));
    absl::StatusOr<std::vector<absl::string_view>> reports =
        SplitReportBatch(wire);
    if (!reports.ok()) {
      EndUndecodable(Undecodable::kBatch, reports.status());
      return false;
    }
    bool full = false;
    for (absl::string_view report : *reports) {
      {
        absl::MutexLock lock(&mu_);
        if (!stop_.ok()) break;  // the rest comes again on a new stream
      }
      full = HandleReport(std::string(report)) || full;
    }
    return full;
  }

  // Checks and queues one report. Its bytes are walked once (ScanReport):
  // the wire check, the few fields ingest needs and the material content;
  // the report is parsed only once it passed, for its row. Returns whether
  // the writer's queue is full.
  bool HandleReport(std::string blob) {
    const IngestOptions& opts = service_->options_;
    absl::Time now = opts.now();
    ReportScan scan = ScanReport(blob, WireLimitsOf(opts.limits));
    if (!scan.head_status.ok()) {
      EndUndecodable(Undecodable::kReport, scan.head_status);
      return false;
    }
    const ReportHead* const head = &scan.head;
    {
      absl::MutexLock lock(&mu_);
      // Identity first: a stream belongs to one host.
      if (host_.empty() && IsValidHostId(head->host_id)) {
        if (opts.require_client_identity &&
            std::find(identities_.begin(), identities_.end(), head->host_id) ==
                identities_.end()) {
          stop_ = grpc::Status(
              grpc::StatusCode::PERMISSION_DENIED,
              absl::StrCat("client certificate does not name host \"",
                           head->host_id, "\""));
          return false;
        }
        // acked_ starts at 0, not at the host's newest stored seq: an earlier
        // stream may have stored seq N after failing to store N-1, and only
        // what this stream sees committed may be acked.
        host_ = std::string(head->host_id);
      } else if (!host_.empty() && head->host_id != host_) {
        stop_ = grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                             absl::StrCat("stream reports for host \"", host_,
                                          "\"; got a report for \"",
                                          head->host_id.substr(0, 253), "\""));
        return false;
      }
    }
    absl::Status valid =
        ValidateScannedReport(scan, blob.size(), now, opts.limits);
    if (absl::IsDataLoss(valid)) {
      EndUndecodable(Undecodable::kReport, valid);
      return false;
    }
    if (!valid.ok()) {
      service_->metrics_->CountRejected();
      absl::MutexLock lock(&mu_);
      v1::Rejection* rej = pending_.add_rejected();
      rej->set_seq(head->seq);
      rej->set_code(static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
      rej->set_message(std::string(valid.message()));
      ack_pending_ = true;
      return false;  // the ack is started by OnReadDone
    }
    if (!service_->limiter_.Allow(head->host_id, now)) {
      service_->metrics_->CountRateLimited();
      absl::MutexLock lock(&mu_);
      stop_ = grpc::Status(
          grpc::StatusCode::RESOURCE_EXHAUSTED,
          absl::StrFormat(
              "host \"%s\" is over its report rate limit (%g/s, burst %g); "
              "retry later",
              head->host_id, service_->limiter_.per_second(),
              service_->limiter_.burst()));
      return false;
    }
    const uint64_t seq = head->seq;
    WriteRequest req;
    if (head->heartbeat_base_seq > 0) {
      if (!RebuildHeartbeatForm(*head, blob, now, &req)) return false;
    } else {
      const bool base = head->has_heartbeat;
      req.row = MakeReportRow(*head, std::move(blob), now,
                              std::move(scan.material), &req.parsed);
      HeartbeatBases* bases = opts.heartbeat_bases;
      // Parsed (its material known): a base heartbeat forms may name.
      if (base && bases != nullptr && req.row.material_digest != 0) {
        HeartbeatBase b;
        b.report = req.parsed;
        b.wire_size = req.row.blob.size();
        b.digest = req.row.material_digest;
        b.numbers = req.row.material_numbers;
        bases->Put(req.row.host_id, seq, std::move(b));
      }
    }
    req.done = [this, seq](absl::StatusOr<WriteOutcome> outcome) {
      OnCommitted(seq, outcome.status());
    };
    req.cancelled = cancelled_;
    {
      absl::MutexLock lock(&mu_);
      outstanding_++;
    }
    bool full = false;
    if (!service_->writer_->Enqueue(std::move(req), &full)) {
      absl::MutexLock lock(&mu_);
      outstanding_--;
      stop_ =
          grpc::Status(grpc::StatusCode::UNAVAILABLE, "server shutting down");
      return false;
    }
    return full;
  }

  // A report in heartbeat form (report.proto HeartbeatForm): the report it
  // stands for is its base (HeartbeatBases) with what the form carries put
  // in (PutBeat), stored like a report sent whole. False when the base is
  // not held: the stream ends with FAILED_PRECONDITION (what came before is
  // still acked) and the agent sends the report whole on a new stream.
  bool RebuildHeartbeatForm(const ReportHead& head, const std::string& wire,
                            absl::Time now, WriteRequest* req) {
    HeartbeatBases* bases = service_->options_.heartbeat_bases;
    const std::string host(head.host_id);
    absl::StatusOr<std::shared_ptr<const HeartbeatBase>> base =
        bases == nullptr ? absl::FailedPreconditionError(
                               "this server does not accept heartbeat forms")
                         : bases->Get(host, head.heartbeat_base_seq);
    if (!base.ok()) {
      service_->metrics_->CountHeartbeatFormNoBase();
      absl::MutexLock lock(&mu_);
      stop_ = grpc::Status(
          grpc::StatusCode::FAILED_PRECONDITION,
          absl::StrCat("report seq ", head.seq, " is in heartbeat form on seq ",
                       head.heartbeat_base_seq, ", which this server cannot ",
                       "rebuild it from (", base.status().message(),
                       "): send it whole"));
      return false;
    }
    Beat beat;
    beat.seq = head.seq;
    beat.observed_at_ns =
        head.observed_at_seconds * 1000000000LL + head.observed_at_nanos;
    beat.threads = head.threads_total;
    beat.attach_latency_seconds = head.attach_latency_seconds;
    beat.pool_budget_ratio = head.pool_budget_ratio;
    beat.purge_seconds = head.purge_seconds;
    std::shared_ptr<v1::HostReport> full =
        CopyStoredReport(*(*base)->report, (*base)->wire_size);
    PutBeat(beat, full.get());
    req->parsed = full;
    req->row = MakeReportRowOf(head, std::move(full), now, **base);
    service_->metrics_->CountHeartbeatForm();
    return true;
  }

  // What did not decode: a report, or a ReportBatches stream's message.
  enum class Undecodable { kReport, kBatch };

  // A message that does not decode cannot be answered by seq: the stream
  // ends with INVALID_ARGUMENT (what was read before it is still acked).
  void EndUndecodable(Undecodable what, const absl::Status& why) {
    service_->metrics_->CountRejected();
    absl::MutexLock lock(&mu_);
    stop_ = grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        absl::StrCat(
            what == Undecodable::kReport
                ? "report does not decode as a tracehealth.v1.HostReport"
                : "message does not decode as a "
                  "tracehealth.v1.ReportBatch",
            " (", why.message(), ")"));
  }

  // The report's `done`: on the ReportWriter's publisher thread, or on its
  // writer thread (Aborted) when the report was cancelled after a failure.
  void OnCommitted(uint64_t seq, const absl::Status& status) {
    Actions a;
    {
      absl::MutexLock lock(&mu_);
      outstanding_--;
      if (!status.ok()) {
        // Never ack this seq or any later one on this stream, even when a
        // later batch commits: the ack is cumulative. The agent replays from
        // the last ack on a new stream; what did get stored is deduplicated.
        first_failed_seq_ = std::min(first_failed_seq_, seq);
        // Later reports of this stream still queued are not written either,
        // so what is stored stays contiguous (the replay fills the rest).
        cancelled_->store(true);
        if (stop_.ok()) {
          stop_ = grpc::Status(grpc::StatusCode::UNAVAILABLE,
                               absl::StrCat("storage: ", status.message()));
        }
      } else if (seq < first_failed_seq_) {
        acked_ = std::max(acked_, seq);
        ack_pending_ = true;
      }
      if (reads_paused_) {
        reads_paused_ = false;
        MaybeReadLocked(a);
      }
      MaybeWriteAckLocked(a);
      MaybeFinishLocked(a);
    }
    Run(a);
  }

  void MaybeWriteAckLocked(Actions& a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (write_in_flight_ || !ack_pending_ || finished_ || write_failed_) return;
    ack_pending_ = false;
    pending_.set_acked_seq(acked_);
    pending_.set_heartbeat_forms(service_->options_.heartbeat_bases != nullptr);
    pending_.set_report_batches(true);
    bool own_buffer = false;
    out_.Clear();
    (void)grpc::SerializationTraits<v1::Ack>::Serialize(pending_, &out_,
                                                        &own_buffer);
    pending_.Clear();
    write_in_flight_ = true;
    a.write = true;
  }

  void MaybeFinishLocked(Actions& a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_ || write_in_flight_ || outstanding_ > 0) return;
    // A stream that failed finishes even with a read in flight: its client
    // may be waiting for an ack before it sends or half-closes again. The
    // read then completes (ok=false, or with a message that is dropped)
    // before OnDone.
    if (read_in_flight_ && stop_.ok()) return;
    if (!reads_done_ && stop_.ok()) return;
    if (ack_pending_ && !write_failed_) return;
    finished_ = true;
    a.finish = true;
    a.status = stop_;
  }

  IngestService* const service_;
  grpc::CallbackServerContext* const ctx_;
  const bool batched_;
  std::vector<std::string> identities_;
  grpc::ByteBuffer incoming_;  // read buffer; only touched by the read path

  absl::Mutex mu_;
  std::string host_ ABSL_GUARDED_BY(mu_);
  uint64_t acked_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t first_failed_seq_ ABSL_GUARDED_BY(mu_) = ~uint64_t{0};
  const std::shared_ptr<std::atomic<bool>> cancelled_ =
      std::make_shared<std::atomic<bool>>(false);
  v1::Ack pending_ ABSL_GUARDED_BY(mu_);
  grpc::ByteBuffer out_ ABSL_GUARDED_BY(mu_);  // the ack being written
  bool ack_pending_ ABSL_GUARDED_BY(mu_) = false;
  bool read_in_flight_ ABSL_GUARDED_BY(mu_) = false;
  // No read in flight because the writer's queue was full; OnCommitted
  // resumes reading.
  bool reads_paused_ ABSL_GUARDED_BY(mu_) = false;
  bool write_in_flight_ ABSL_GUARDED_BY(mu_) = false;
  bool write_failed_ ABSL_GUARDED_BY(mu_) = false;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  int outstanding_ ABSL_GUARDED_BY(mu_) = 0;
  grpc::Status stop_ ABSL_GUARDED_BY(mu_);
};

IngestService::IngestService(ReportWriter* writer, ServerMetrics* metrics,
                             IngestOptions options)
    : writer_(writer),
      metrics_(metrics),
      options_(std::move(options)),
      limiter_(options_.host_reports_per_second, options_.host_report_burst) {}

IngestService::~IngestService() {
  // Every reactor's OnDone (and so Unregister) has returned before
  // grpc::Server::Shutdown does, but through an atomic count inside
  // libgrpc++ that ThreadSanitizer cannot see; taking mu_ orders the last
  // Unregister before reactors_ and mu_ are destroyed, visibly to it.
  absl::MutexLock lock(&mu_);
}

grpc::ServerUnaryReactor* IngestService::SubmitCalibration(
    grpc::CallbackServerContext* context, const v1::Calibration* request,
    v1::SubmitCalibrationResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (options_.calibrations == nullptr) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                                 "this server keeps no calibrations"));
    return reactor;
  }
  std::vector<std::string> identities;
  if (options_.require_client_identity) {
    if (auto auth = context->auth_context()) {
      for (const char* prop :
           {"x509_common_name", "x509_subject_alternative_name"}) {
        for (const auto& v : auth->FindPropertyValues(prop)) {
          identities.emplace_back(v.data(), v.size());
        }
      }
    }
  }
  absl::Status s = options_.calibrations->Submit(
      *request, options_.require_client_identity ? &identities : nullptr,
      response);
  reactor->Finish(s.ok() ? grpc::Status::OK
                         : grpc::Status(static_cast<grpc::StatusCode>(s.code()),
                                        std::string(s.message())));
  return reactor;
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>*
IngestService::Report(grpc::CallbackServerContext* context) {
  return StartStream(context, /*batched=*/false);
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>*
IngestService::ReportBatches(grpc::CallbackServerContext* context) {
  return StartStream(context, /*batched=*/true);
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>*
IngestService::StartStream(grpc::CallbackServerContext* context, bool batched) {
  auto* r = new ReportReactor(this, context, batched);
  grpc::Status refuse;
  // Outside mu_: the guard may count the open descriptors.
  const absl::Status room = options_.descriptors == nullptr
                                ? absl::OkStatus()
                                : options_.descriptors->Admit(context->peer());
  {
    absl::MutexLock lock(&mu_);
    if (shutting_down_) {
      refuse =
          grpc::Status(grpc::StatusCode::UNAVAILABLE, "server shutting down");
    } else if (options_.max_streams > 0 &&
               serving_.size() >= static_cast<size_t>(options_.max_streams)) {
      // Refused before it costs more than the stream's own setup: the
      // agent backs off and retries, on a new connection.
      refuse = grpc::Status(
          grpc::StatusCode::RESOURCE_EXHAUSTED,
          absl::StrFormat("server at its limit of %d agent streams "
                          "(--max_agent_streams); retry later",
                          options_.max_streams));
    } else if (!room.ok()) {
      refuse = grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                            std::string(room.message()));
    } else {
      serving_.insert(r);
    }
    reactors_.insert(r);
  }
  if (refuse.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED)
    metrics_->CountStreamRefused();
  r->Begin(refuse);
  return r;
}

void IngestService::BeginShutdown() {
  absl::MutexLock lock(&mu_);
  shutting_down_ = true;
  for (ReportReactor* r : reactors_) r->Drain();
}

void IngestService::Unregister(ReportReactor* r) {
  absl::MutexLock lock(&mu_);
  reactors_.erase(r);
  serving_.erase(r);
}

}  // namespace tracehealth::server
