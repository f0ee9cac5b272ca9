// The configuration checks and start-up choices of RunAgent, made before
// anything runs: exit code 0 to go on, else the code RunAgent returns (2
// for a configuration error, 1 for a runtime failure), the reason on `err`.
//
// Thread safety: call from RunAgent's thread, before any other starts.
#ifndef TRACEHEALTH_AGENT_AGENT_SETUP_H_
#define TRACEHEALTH_AGENT_AGENT_SETUP_H_

#include <optional>
#include <ostream>
#include <string>

#include "agent/agent_runner.h"
#include "common/kernel/feature_table.h"
#include "common/procfs/host_fs.h"
#include "proto/tracehealth/v1/features.pb.h"

namespace tracehealth::agent {

// Exit code 2 for a configuration the agent cannot run with (a bad format,
// host id, interval, label, calibration setting or TLS pair).
int CheckConfig(const AgentConfig& config, std::ostream& err);

// What the agent runs with but the operator may not expect: warnings only.
void WarnAboutConfig(const AgentConfig& config, std::ostream& err);

// --host_id, else the hostname; where reports leave the process (anything
// but --once) a valid id, derived from /etc/machine-id when the hostname is
// none. Exit code 2 when there is none.
int ChooseHostId(const AgentConfig& config, const HostFs& fs,
                 std::string* host_id, std::ostream& err);

// The feature table: the built-in one, or with the operator's override
// rows, which every report then carries.
struct Features {
  std::optional<FeatureTable> table;
  std::optional<v1::FeatureTableOverride> rows;
  const FeatureTable* get() const {
    return table ? &*table : &FeatureTable::Builtin();
  }
};

// --feature_table: `path` ("" : none) read into `f`. Exit code 2 for an
// unreadable or invalid file.
int LoadFeatures(const std::string& path, Features* f, std::ostream& err);

// The state directory. A one-shot run works without one (nothing is
// remembered then); a long-running agent needs it (exit code 1 otherwise).
int PrepareStateDir(const AgentConfig& config, std::string* state_dir,
                    std::ostream& err);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_AGENT_SETUP_H_
