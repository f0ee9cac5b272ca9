#include "agent/agent_setup.h"

#include <sys/stat.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/calibrate/calibrator.h"
#include "agent/calibrate/host_pricing.h"
#include "agent/collect/default_host_id.h"
#include "agent/state/state_file.h"
#include "common/host_identity.h"
#include "common/kernel/feature_table_override.h"

namespace tracehealth::agent {

int CheckConfig(const AgentConfig& config, std::ostream& err) {
  if (config.format != "text" && config.format != "json") {
    err << "tracehealth-agent: --format must be text or json\n";
    return 2;
  }
  if (!config.host_id.empty() && !IsValidHostId(config.host_id)) {
    err << "tracehealth-agent: host id '" << config.host_id
        << "' must match [A-Za-z0-9._-]{1,253} and not be dots only (set "
           "--host_id)\n";
    return 2;
  }
  if (config.interval <= absl::ZeroDuration()) {
    err << "tracehealth-agent: --interval must be positive\n";
    return 2;
  }
  if (config.labels.size() > kMaxLabels) {
    err << "tracehealth-agent: at most " << kMaxLabels << " labels\n";
    return 2;
  }
  for (const auto& [k, v] : config.labels) {
    if (k.size() > kMaxLabelKeyBytes || !IsValidLabelKey(k) ||
        v.size() > kMaxLabelValueBytes) {
      err << "tracehealth-agent: label '" << k.substr(0, 64)
          << "': key [A-Za-z_][A-Za-z0-9_]* of <= " << kMaxLabelKeyBytes
          << " bytes, value <= " << kMaxLabelValueBytes << " bytes\n";
      return 2;
    }
  }
  if (config.calibrate && config.once) {
    err << "tracehealth-agent: --calibrate and --once go separately\n";
    return 2;
  }
  if (config.calibrate && config.calibrate_budget <= absl::ZeroDuration()) {
    err << "tracehealth-agent: --calibrate_budget must be positive\n";
    return 2;
  }
  if (config.calibrate_threads > kMaxCalibrationThreads) {
    err << "tracehealth-agent: --calibrate_threads: at most "
        << kMaxCalibrationThreads << "\n";
    return 2;
  }
  if (!config.tls_cert.empty() != !config.tls_key.empty()) {
    err << "tracehealth-agent: --tls_cert and --tls_key go together\n";
    return 2;
  }
  return 0;
}

int ChooseHostId(const AgentConfig& config, const HostFs& fs,
                 std::string* host_id, std::ostream& err) {
  if (!config.host_id.empty()) {
    *host_id = config.host_id;
    return 0;
  }
  absl::StatusOr<DefaultHostId> id = ResolveDefaultHostId(fs, !config.once);
  if (!id.ok()) {
    err << "tracehealth-agent: " << id.status().message() << "\n";
    return 2;
  }
  if (id->source != "hostname") {
    err << "tracehealth-agent: host id " << id->host_id << " (from "
        << id->source << "; the hostname is no valid host id)\n";
  }
  *host_id = id->host_id;
  return 0;
}

void WarnAboutConfig(const AgentConfig& config, std::ostream& err) {
  if (config.once && !config.server.empty()) {
    err << "tracehealth-agent: warning: --once prints this host's report and "
           "sends nothing: --server="
        << config.server << " is ignored\n";
  }
  struct stat st;
  const std::string proc = absl::StrCat(config.root, "/proc");
  if (stat(proc.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    err << "tracehealth-agent: warning: --root=" << config.root
        << " has no proc/ directory: every /proc input will be unknown\n";
  }
}

int LoadFeatures(const std::string& path, Features* f, std::ostream& err) {
  if (path.empty()) return 0;
  absl::StatusOr<std::string> yaml = ReadWholeFile(path);
  absl::StatusOr<FeatureTable> table =
      yaml.ok() ? FeatureTable::WithOverride(*yaml)
                : absl::StatusOr<FeatureTable>(yaml.status());
  absl::StatusOr<v1::FeatureTableOverride> rows =
      table.ok() ? FeatureTableOverrideOf(*yaml)
                 : absl::StatusOr<v1::FeatureTableOverride>(table.status());
  if (!rows.ok()) {
    err << "tracehealth-agent: --feature_table: " << rows.status().message()
        << "\n";
    return 2;
  }
  // No rows: the built-in table as it is, and nothing for reports to carry.
  if (rows->rows_size() == 0) return 0;
  f->table = *std::move(table);
  f->rows = *std::move(rows);
  return 0;
}

int PrepareStateDir(const AgentConfig& config, std::string* state_dir,
                    std::ostream& err) {
  *state_dir = config.state_dir;
  if (state_dir->empty() && (!config.once || config.calibrate))
    *state_dir = kDefaultStateDir;
  if (state_dir->empty()) return 0;
  absl::Status state_ok = MakeDirs(*state_dir);
  if (state_ok.ok()) return 0;
  if (!config.once) {
    err << "tracehealth-agent: --state_dir: " << state_ok.message() << "\n";
    return 1;
  }
  err << "tracehealth-agent: warning: --state_dir: " << state_ok.message()
      << "; nothing is remembered\n";
  state_dir->clear();
  return 0;
}

}  // namespace tracehealth::agent
