// KmsgReader: the kernel log's records from ROOT/dev/kmsg (record format:
// agent/parsers/kmsg.h).
//
// On a live host that is the character device. It is opened once (read
// only, non-blocking) and kept open, so each Read goes on after the last
// record the previous one returned; the first Read starts at the oldest
// record the kernel still holds. One read(2) returns one record; EAGAIN
// ends a Read (nothing more for now); EPIPE means the kernel overwrote
// records before they were read, and reading goes on with the oldest one
// left (the gap in sequence numbers says how many were lost).
//
// Under a fixture root it is a regular file of records, one a line, each
// followed by its dictionary lines (" KEY=value"). The first Read reads it
// from the start, the next ones from where the previous one stopped; a file
// replaced or cut shorter is read again from its start. A last line without
// its '\n' is left for a later Read (it may still be being written).
//
// Records longer than max_record_bytes are skipped and counted (oversized),
// as are records that do not parse (malformed, truncated); empty lines are
// skipped. A Read returns at most max_records records (parsed or skipped)
// and stops early, before reading another, when `more` returns false.
//
// The path is fixed (ROOT + "/dev/kmsg"), so no lookup leaves the root;
// nothing is written. Errors name the host path ("/dev/kmsg: Permission
// denied") with ErrnoToStatus's codes.
//
// Thread safety: not thread-safe; one owner.
#ifndef TRACEHEALTH_AGENT_COLLECT_KMSG_READER_H_
#define TRACEHEALTH_AGENT_COLLECT_KMSG_READER_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/parsers/kmsg.h"

namespace tracehealth::agent {

inline constexpr char kKmsgPath[] = "/dev/kmsg";

class KmsgReader {
 public:
  struct Options {
    // The kernel formats a record into at most 8 KiB (CONSOLE_EXT_LOG_MAX).
    size_t max_record_bytes = 8192;
    size_t max_records = 20000;
  };
  // Records skipped, since the reader was made; `overruns` counts EPIPE.
  struct Counts {
    uint64_t malformed = 0;
    uint64_t truncated = 0;
    uint64_t oversized = 0;
    uint64_t overruns = 0;
  };

  // `root` as HostFs takes it ("/" for the live host).
  KmsgReader(std::string root, Options options);
  ~KmsgReader();
  KmsgReader(const KmsgReader&) = delete;
  KmsgReader& operator=(const KmsgReader&) = delete;

  // Reads records in log order and calls `on_record` with each one that
  // parses (its text is valid during the call only), while `more()` says
  // so. True when it read all the log holds now; false when it stopped
  // before (max_records, or `more`).
  absl::StatusOr<bool> Read(
      const std::function<bool()>& more,
      const std::function<void(const KmsgRecord&)>& on_record);

  const Counts& counts() const { return counts_; }
  // Whether the log is the character device (known after a Read opened it).
  bool is_device() const { return device_; }

 private:
  absl::Status Open();
  void Close();
  absl::StatusOr<bool> ReadDevice(
      const std::function<bool()>& more,
      const std::function<void(const KmsgRecord&)>& on_record);
  absl::StatusOr<bool> ReadRegularFile(
      const std::function<bool()>& more,
      const std::function<void(const KmsgRecord&)>& on_record);
  // Counts a record that did not parse; calls on_record with one that did.
  void Deliver(absl::string_view bytes,
               const std::function<void(const KmsgRecord&)>& on_record);

  const std::string path_;  // root-joined
  const Options options_;
  Counts counts_;
  int fd_ = -1;
  bool device_ = false;
  // Regular file: where the next Read starts, the file's inode, and
  // whether a line longer than the bound is being skipped up to its '\n'.
  off_t offset_ = 0;
  ino_t inode_ = 0;
  bool skipping_line_ = false;
};

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_COLLECT_KMSG_READER_H_
