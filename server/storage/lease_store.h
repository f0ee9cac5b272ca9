// LeaseStore: named leases with an expiry, so that a job that must run once
// across replicas (retention, partition upkeep) runs on one of them.
//
// A lease row (not a session lock) survives a database failover and works
// through a transaction-pooling proxy such as PgBouncer, where a session
// advisory lock would be released or held by the wrong client.
//
// Contract (server/storage/conformance/ tests it):
// - AcquireLease(name, holder, ttl) returns true, and holder holds the lease
//   until ttl from now, when the lease is free, expired, or already held by
//   `holder` (a renewal); otherwise false, and nothing changes.
// - ReleaseLease(name, holder) frees a lease `holder` holds (anything else
//   is left alone).
// - Expiry is measured by one clock for every holder (the database's for
//   PostgreSQL; the process's for SQLite, whose store one server holds).
//
// Thread safety: safe from several threads and processes.
#ifndef TRACEHEALTH_SERVER_STORAGE_LEASE_STORE_H_
#define TRACEHEALTH_SERVER_STORAGE_LEASE_STORE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tracehealth::server {

class LeaseStore {
 public:
  virtual ~LeaseStore() = default;

  virtual absl::StatusOr<bool> AcquireLease(const std::string& name,
                                            const std::string& holder,
                                            absl::Duration ttl) = 0;
  virtual absl::Status ReleaseLease(const std::string& name,
                                    const std::string& holder) = 0;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_LEASE_STORE_H_
