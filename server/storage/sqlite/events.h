// The SQLite store's events table: EventStore's two operations as SQL on a
// connection.
//
// Thread safety: the functions use only the connection passed in, which
// the caller serializes (PutEventRows: the write connection, ListEventRows:
// the read connection).
#ifndef TRACEHEALTH_SERVER_STORAGE_SQLITE_EVENTS_H_
#define TRACEHEALTH_SERVER_STORAGE_SQLITE_EVENTS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "server/storage/event_store.h"

struct sqlite3;

namespace tracehealth::server {

// EventStore::PutEvents, in one transaction of its own.
absl::StatusOr<std::vector<bool>> PutEventRows(sqlite3* db,
                                               absl::Span<const EventRow> rows);

// EventStore::ListEvents.
absl::StatusOr<std::vector<EventRow>> ListEventRows(sqlite3* db,
                                                    const EventFilter& filter);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_SQLITE_EVENTS_H_
