// EventStore: the server's durable store of observed kernel events (soft
// lockups, RCU stalls, hung tasks the agents read from the kernel log), each
// with how it compares with the prediction current for its host when it was
// logged (query.proto StoredEvent).
//
// Implemented by every storage backend beside ReportStore and AlertStore;
// server/storage/conformance/ holds the contract tests every backend passes.
//
// Thread safety: implementations are safe to call from several threads.
#ifndef TRACEHEALTH_SERVER_STORAGE_EVENT_STORE_H_
#define TRACEHEALTH_SERVER_STORAGE_EVENT_STORE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace tracehealth::server {

// One event as stored: the columns queries filter on plus the serialized
// tracehealth.v1.StoredEvent. Times are Unix nanoseconds.
struct EventRow {
  std::string host_id;
  std::string boot_id;
  uint64_t kmsg_seq = 0;
  int64_t logged_at_ns = 0;
  int kind = 0;       // tracehealth.v1.ObservedEventKind
  int model = 0;      // tracehealth.v1.EventModel
  int predicted = 0;  // tracehealth.v1.EventPrediction
  int64_t received_at_ns = 0;
  std::string blob;
};

struct EventFilter {
  std::string host_id;  // empty: every host
  // Logged in [from_ns, to_ns).
  int64_t from_ns = 0;
  int64_t to_ns = 0;
  int predicted = 0;     // 0: any
  uint32_t limit = 100;  // 0: 100
};

class EventStore {
 public:
  virtual ~EventStore() = default;

  // Stores `rows` in ONE transaction (all or nothing). Returns, per row in
  // order, whether it was stored: a row whose (host_id, boot_id, kmsg_seq)
  // is stored already, or appears earlier in `rows`, is left as it is
  // (false). On an error nothing of the call is stored.
  virtual absl::StatusOr<std::vector<bool>> PutEvents(
      absl::Span<const EventRow> rows) = 0;

  // The events matching `filter`, newest logged first (ties by host_id,
  // boot_id, then kmsg_seq, ascending), at most `filter.limit` of them.
  virtual absl::StatusOr<std::vector<EventRow>> ListEvents(
      const EventFilter& filter) = 0;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_EVENT_STORE_H_
