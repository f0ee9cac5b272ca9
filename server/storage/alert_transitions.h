// AlertTransitions: compare-and-set on the current alert of a (rule, host),
// so that a transition (pending -> firing, firing -> resolved, a new
// episode) is applied once when several replicas evaluate the same host.
//
// The current alert of (rule, host) is its stored alert (AlertStore) with
// the latest active_since, if any. A replica that loses a race takes the
// current alert it is given back instead of its own.
//
// Contract (server/storage/conformance/ tests it):
// - TransitionAlert(expected, next) stores `next` as the current alert of
//   (next.rule, next.host_id) if and only if the current one is `expected`:
//   nullopt means none; otherwise its active_since and state must both
//   match; and `next` must either continue the current episode (same
//   active_since) or start a new one (a later active_since) when there is
//   none or it is resolved; a pending or firing episode is never replaced
//   by another.
// - next.state == 0 (ALERT_STATE_UNSPECIFIED) clears: the current alert (a
//   pending one whose condition stopped matching before it fired) is
//   removed; the episode before it, if any, is current again.
// - Either way the result says whether it was applied and gives the
//   current alert afterwards.
//
// Thread safety: implementations are safe to call from several threads and
// from several processes sharing the database.
#ifndef TRACEHEALTH_SERVER_STORAGE_ALERT_TRANSITIONS_H_
#define TRACEHEALTH_SERVER_STORAGE_ALERT_TRANSITIONS_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "server/storage/alert_store.h"

namespace tracehealth::server {

// Which alert a caller believes is current.
struct AlertEpisode {
  int64_t active_since_ns = 0;
  int state = 0;  // tracehealth.v1.AlertState
};

struct TransitionResult {
  bool applied = false;
  // The current alert of (rule, host) after the call; nullopt: none.
  std::optional<AlertRow> current;
};

// Whether `current` (the stored current alert, if any) is the episode
// `expected` names.
inline bool IsExpectedEpisode(const std::optional<AlertEpisode>& expected,
                              const std::optional<AlertRow>& current) {
  if (!expected.has_value() || !current.has_value()) {
    return expected.has_value() == current.has_value();
  }
  return expected->active_since_ns == current->active_since_ns &&
         expected->state == current->state;
}

// Whether `next` may follow `current`: same episode, or a later one when
// there is no live (pending or firing) alert.
inline bool IsAllowedTransition(const std::optional<AlertRow>& current,
                                const AlertRow& next) {
  if (!current.has_value()) return true;
  if (next.active_since_ns == current->active_since_ns) return true;
  const bool live = current->state == 1 || current->state == 2;
  return !live && next.state != 0 &&
         next.active_since_ns > current->active_since_ns;
}

class AlertTransitions {
 public:
  virtual ~AlertTransitions() = default;

  virtual absl::StatusOr<TransitionResult> TransitionAlert(
      const std::optional<AlertEpisode>& expected, const AlertRow& next) = 0;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_ALERT_TRANSITIONS_H_
