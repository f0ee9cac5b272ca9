#include "agent/calibrate/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/calibrate/tracefs_write.h"
#include "agent/state/state_file.h"
#include "common/proto_json.h"
#include "common/status.h"
#include "google/protobuf/util/json_util.h"

namespace tracehealth::agent {

std::string JournalPath(absl::string_view state_dir) {
  return absl::StrCat(state_dir, "/", kJournalFile);
}

absl::Status WriteJournal(absl::string_view state_dir,
                          const v1::CalibrationJournal& journal) {
  absl::StatusOr<std::string> json = ProtoToJson(journal);
  if (!json.ok()) return json.status();
  *json += "\n";
  return WriteFileAtomically(JournalPath(state_dir), *json, /*durable=*/true);
}

absl::StatusOr<std::optional<v1::CalibrationJournal>> ReadJournal(
    absl::string_view state_dir) {
  const std::string path = JournalPath(state_dir);
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (absl::IsNotFound(text.status())) return std::nullopt;
  if (!text.ok()) return text.status();
  v1::CalibrationJournal journal;
  auto s = google::protobuf::util::JsonStringToMessage(*text, &journal);
  if (!s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", s.message().as_string()));
  }
  return journal;
}

absl::Status RemoveJournal(absl::string_view state_dir) {
  const std::string path = JournalPath(state_dir);
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoToStatus(errno, absl::StrCat("unlink ", path));
  }
  return absl::OkStatus();
}

std::vector<std::string> FilterToRestore(absl::string_view filter) {
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(filter, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || absl::StartsWith(line, "#")) continue;
    // "vfs_read [ext4]": the function of a module.
    const size_t sp = line.find(" [");
    if (sp != absl::string_view::npos && absl::EndsWith(line, "]")) {
      const absl::string_view mod = line.substr(sp + 2, line.size() - sp - 3);
      out.push_back(absl::StrCat(line.substr(0, sp), ":mod:", mod));
    } else {
      out.emplace_back(line);
    }
  }
  return out;
}

absl::Status RestoreFromJournal(absl::string_view root,
                                const v1::CalibrationJournal& journal,
                                std::vector<std::string>* refused) {
  const std::string tracer_path =
      absl::StrCat(journal.tracefs(), "/current_tracer");
  const std::string filter_path =
      absl::StrCat(journal.tracefs(), "/set_ftrace_filter");
  // Every step is tried; the first error is returned.
  absl::Status status = WriteTracefsFile(root, tracer_path, "nop\n");
  absl::Status emptied = WriteTracefsFile(root, filter_path, "");
  if (status.ok()) status = emptied;
  if (emptied.ok()) {
    for (const std::string& line : FilterToRestore(journal.ftrace_filter())) {
      if (!AppendTracefsFile(root, filter_path, line + "\n").ok() &&
          refused != nullptr) {
        refused->push_back(line);
      }
    }
  }
  const std::string tracer(
      absl::StripAsciiWhitespace(journal.current_tracer()));
  if (!tracer.empty() && tracer != "nop") {
    absl::Status t = WriteTracefsFile(root, tracer_path, tracer + "\n");
    if (status.ok()) status = t;
  }
  return status;
}

absl::StatusOr<std::unique_ptr<CalibrationLock>> CalibrationLock::TryAcquire(
    absl::string_view state_dir) {
  const std::string path = absl::StrCat(state_dir, "/", kLockFile);
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoToStatus(errno, absl::StrCat("open ", path));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    close(fd);
    if (err == EWOULDBLOCK) {
      return absl::UnavailableError(
          absl::StrCat("another calibration holds ", path));
    }
    return ErrnoToStatus(err, absl::StrCat("flock ", path));
  }
  return std::unique_ptr<CalibrationLock>(new CalibrationLock(fd));
}

CalibrationLock::~CalibrationLock() { close(fd_); }

absl::StatusOr<std::string> RecoverInterruptedCalibration(
    absl::string_view root, absl::string_view state_dir) {
  if (state_dir.empty()) return std::string();
  absl::StatusOr<std::optional<v1::CalibrationJournal>> journal =
      ReadJournal(state_dir);
  if (!journal.ok()) return journal.status();
  if (!journal->has_value()) return std::string();
  absl::StatusOr<std::unique_ptr<CalibrationLock>> lock =
      CalibrationLock::TryAcquire(state_dir);
  if (absl::IsUnavailable(lock.status())) return std::string();
  if (!lock.ok()) return lock.status();
  const v1::CalibrationJournal& j = **journal;
  std::vector<std::string> refused;
  absl::Status restored = RestoreFromJournal(root, j, &refused);
  if (!restored.ok()) {
    return absl::Status(restored.code(),
                        absl::StrCat("restoring an interrupted calibration: ",
                                     restored.message()));
  }
  absl::Status removed = RemoveJournal(state_dir);
  if (!removed.ok()) return removed;
  return absl::StrCat("restored current_tracer (",
                      absl::StripAsciiWhitespace(j.current_tracer()),
                      ") and set_ftrace_filter under ", j.tracefs(),
                      " left by an interrupted calibration (pid ", j.pid(),
                      ")");
}

}  // namespace tracehealth::agent
