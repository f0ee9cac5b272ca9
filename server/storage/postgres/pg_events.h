// The PostgreSQL store's events table: EventStore's two operations as SQL
// on a connection.
//
// Thread safety: the functions use only the connection passed in, which
// the caller serializes.
#ifndef TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_EVENTS_H_
#define TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_EVENTS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "server/storage/event_store.h"
#include "server/storage/postgres/pg_connection.h"

namespace tracehealth::server {

// EventStore::PutEvents, in one transaction of its own. Several replicas
// storing the same event store it once (the primary key decides).
absl::StatusOr<std::vector<bool>> PgPutEvents(PgConnection& conn,
                                              absl::Span<const EventRow> rows);

absl::StatusOr<std::vector<EventRow>> PgListEvents(PgConnection& conn,
                                                   const EventFilter& filter);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_EVENTS_H_
