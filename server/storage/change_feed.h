// ChangeFeed: the hosts whose stored state other writers changed, for a
// replica's latest-state index (server/index/host_index.h).
//
// Several server replicas share one database; each replica's index takes
// its own commits directly (after each commit) and everyone else's from this
// feed, polled a few times a second.
//
// Contract (server/storage/conformance/ tests it):
// - Poll delivers the current state of every host whose state another store
//   (another replica, on the same database) changed since the previous Poll,
//   or since the store was opened for the first Poll. The state is that of
//   LoadLatest (the host's newest report's stored record and its
//   bookkeeping), except that the report's bytes (LatestRow::blob) are
//   always there.
// - Changes made through this store are not delivered.
// - A host may be delivered again although nothing changed (a change that
//   was still being committed at the previous Poll); what is delivered is
//   never older than what was committed before the previous Poll returned.
// - A backend with a single writer (SQLite) delivers nothing.
//
// Thread safety: Poll is called from one thread at a time.
#ifndef TRACEHEALTH_SERVER_STORAGE_CHANGE_FEED_H_
#define TRACEHEALTH_SERVER_STORAGE_CHANGE_FEED_H_

#include <functional>

#include "absl/status/status.h"
#include "server/storage/report_store.h"

namespace tracehealth::server {

class ChangeFeed {
 public:
  virtual ~ChangeFeed() = default;

  // Calls `fn` once per changed host (`fn` may move from the row). On an
  // error nothing is lost: the next Poll delivers from the same position.
  virtual absl::Status Poll(const std::function<void(LatestRow&)>& fn) = 0;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_CHANGE_FEED_H_
