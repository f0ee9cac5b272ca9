// Parser for /proc/PID/fdinfo/FD of BPF links (kernel/bpf/syscall.c
// bpf_link_show_fdinfo, kernel/trace/bpf_trace.c
// bpf_kprobe_multi_show_fdinfo):
//
//   pos:	0
//   flags:	02000000
//   mnt_id:	15
//   ino:	2094
//   link_type:	kprobe_multi
//   link_id:	3
//   prog_tag:	a04f5eef06a7f555
//   prog_id:	20
//   kprobe_cnt:	2
//   missed:	0
//   cookie	 func
//   1	 bpf_fentry_test1+0x0/0x20
//
// From 6.17 a link with the return flag shows link_type kretprobe_multi.
#ifndef TRACEHEALTH_AGENT_PARSERS_FDINFO_H_
#define TRACEHEALTH_AGENT_PARSERS_FDINFO_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth::agent {

struct BpfLinkFdinfo {
  std::string link_type;
  std::optional<uint32_t> link_id;
  std::optional<uint32_t> prog_id;
  std::optional<uint64_t> kprobe_cnt;
  std::optional<uint64_t> missed;
};

// nullopt when the fd is not a BPF link (no "link_type:" line). Errors
// (InvalidArgument): an empty link_type, or a kprobe_cnt / missed / link_id /
// prog_id value that is not a number.
absl::StatusOr<std::optional<BpfLinkFdinfo>> ParseBpfLinkFdinfo(
    absl::string_view text);

// link_type is kprobe_multi or kretprobe_multi.
bool IsKprobeMultiLink(const BpfLinkFdinfo& link);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_PARSERS_FDINFO_H_
