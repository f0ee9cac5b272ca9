#include "server/alerts/engine.h"

#include "common/proto_time.h"

namespace tracehealth {

AlertEngine::AlertEngine(std::vector<AlertRule> rules,
                         absl::Duration keep_resolved)
    : rules_(std::move(rules)), keep_resolved_(keep_resolved) {}

const AlertRule* AlertEngine::FindRule(const std::string& name) const {
  for (const AlertRule& r : rules_) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

void AlertEngine::Restore(const std::vector<v1::Alert>& alerts) {
  absl::MutexLock lock(&mu_);
  for (const v1::Alert& a : alerts) {
    if (FindRule(a.rule()) == nullptr) continue;
    Key key{a.rule(), a.host_id()};
    if (instances_.count(key) != 0) continue;
    Instance inst;
    inst.alert = a;
    inst.matching = a.state() != v1::ALERT_STATE_RESOLVED;
    instances_.emplace(std::move(key), std::move(inst));
  }
}

void AlertEngine::Promote(Instance& inst, const AlertRule& rule, absl::Time now,
                          std::vector<v1::Alert>* changed) {
  if (inst.alert.state() != v1::ALERT_STATE_PENDING || !inst.matching) return;
  if (now - FromProto(inst.alert.active_since()) < rule.for_duration) return;
  inst.alert.set_state(v1::ALERT_STATE_FIRING);
  *inst.alert.mutable_fired_at() = ToProto(now);
  changed->push_back(inst.alert);
}

void AlertEngine::Apply(const AlertRule& rule, const std::string& host,
                        const std::map<std::string, std::string>& host_labels,
                        const v1::HostReport* report, bool matched,
                        double value, absl::Time now,
                        std::vector<v1::Alert>* changed) {
  Key key{rule.name, host};
  auto it = instances_.find(key);
  bool live = it != instances_.end() &&
              it->second.alert.state() != v1::ALERT_STATE_RESOLVED;
  if (!matched) {
    if (!live) return;
    Instance& inst = it->second;
    inst.matching = false;
    if (inst.alert.state() == v1::ALERT_STATE_PENDING) {
      // Never fired: dropped without a notification; the store drops it too.
      v1::Alert cleared = inst.alert;
      cleared.set_state(v1::ALERT_STATE_UNSPECIFIED);
      changed->push_back(std::move(cleared));
      instances_.erase(it);
      return;
    }
    inst.alert.set_state(v1::ALERT_STATE_RESOLVED);
    inst.alert.set_value(value);
    *inst.alert.mutable_resolved_at() = ToProto(now);
    changed->push_back(inst.alert);
    return;
  }
  if (!live) {
    Instance inst;
    v1::Alert& a = inst.alert;
    a.set_rule(rule.name);
    a.set_host_id(host);
    a.set_state(v1::ALERT_STATE_PENDING);
    a.set_severity(rule.severity);
    (*a.mutable_labels())["alertname"] = rule.name;
    (*a.mutable_labels())["host"] = host;
    (*a.mutable_labels())["severity"] = rule.severity;
    for (const auto& [k, v] : rule.labels) (*a.mutable_labels())[k] = v;
    *a.mutable_active_since() = ToProto(now);
    inst.matching = true;
    it = instances_.insert_or_assign(key, std::move(inst)).first;
  }
  Instance& inst = it->second;
  inst.matching = true;
  inst.alert.set_value(value);
  inst.alert.clear_annotations();
  AnnotationContext context;
  context.rule = rule.name;
  context.host = host;
  context.severity = rule.severity;
  context.value = value;
  context.threshold = rule.condition.threshold();
  context.labels = &host_labels;
  context.report = report;
  for (const auto& [k, tmpl] : rule.annotations) {
    (*inst.alert.mutable_annotations())[k] = tmpl.Expand(context);
  }
  size_t before = changed->size();
  Promote(inst, rule, now, changed);
  if (!live && changed->size() == before) changed->push_back(inst.alert);
}

bool AlertEngine::has_silence_rules() const {
  for (const AlertRule& r : rules_) {
    if (r.condition.is_silence()) return true;
  }
  return false;
}

bool AlertEngine::Live(const std::string& rule, const std::string& host) const {
  auto it = instances_.find(Key{rule, host});
  return it != instances_.end() &&
         it->second.alert.state() != v1::ALERT_STATE_RESOLVED;
}

std::vector<v1::Alert> AlertEngine::OnReport(const v1::HostReport& report,
                                             const v1::HostReport* previous,
                                             absl::Time now) {
  return Evaluate(report, previous, {}, now);
}

std::vector<v1::Alert> AlertEngine::OnReport(
    const v1::HostReport& report,
    absl::Span<const std::optional<double>> previous_values, absl::Time now) {
  return Evaluate(report, nullptr, previous_values, now);
}

std::vector<v1::Alert> AlertEngine::Evaluate(
    const v1::HostReport& report, const v1::HostReport* previous,
    absl::Span<const std::optional<double>> previous_values, absl::Time now) {
  std::map<std::string, std::string> labels(report.labels().begin(),
                                            report.labels().end());
  std::vector<v1::Alert> changed;
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < rules_.size(); ++i) {
    const AlertRule& rule = rules_[i];
    if (rule.condition.is_silence()) {
      // A report ends the silence.
      Apply(rule, report.host_id(), labels, &report, false, 0, now, &changed);
      continue;
    }
    EvalInput input;
    input.report = &report;
    input.previous = previous;
    if (i < previous_values.size()) input.previous_value = previous_values[i];
    EvalResult r = rule.condition.Evaluate(input);
    Apply(rule, report.host_id(), labels, &report, r.matched,
          r.value.value_or(0), now, &changed);
  }
  return changed;
}

std::vector<v1::Alert> AlertEngine::Tick(
    absl::Time now, const std::vector<HostLiveness>& hosts) {
  std::vector<v1::Alert> changed;
  absl::MutexLock lock(&mu_);
  for (const HostLiveness& h : hosts) {
    // Built only for a host whose silence alert changes or stays live: most
    // hosts of a fleet are not silent.
    std::optional<std::map<std::string, std::string>> labels;
    for (const AlertRule& rule : rules_) {
      if (!rule.condition.is_silence()) continue;
      EvalInput input;
      input.silent_seconds = absl::ToDoubleSeconds(now - h.last_seen);
      input.interval_seconds = h.interval_seconds;
      EvalResult r = rule.condition.Evaluate(input);
      if (!r.value) continue;  // interval unknown: cannot tell
      if (!r.matched && !Live(rule.name, h.host_id)) continue;
      if (!labels) labels = h.labels.ToMap();
      // The index keeps no report of a silent host: its {{report.*}}
      // annotations read "unknown".
      Apply(rule, h.host_id, *labels, nullptr, r.matched, *r.value, now,
            &changed);
    }
  }
  for (auto it = instances_.begin(); it != instances_.end();) {
    Instance& inst = it->second;
    if (inst.alert.state() == v1::ALERT_STATE_RESOLVED &&
        now - FromProto(inst.alert.resolved_at()) > keep_resolved_) {
      it = instances_.erase(it);
      continue;
    }
    if (const AlertRule* rule = FindRule(inst.alert.rule())) {
      Promote(inst, *rule, now, &changed);
    }
    ++it;
  }
  return changed;
}

void AlertEngine::Adopt(const std::string& rule, const std::string& host,
                        const std::optional<v1::Alert>& current) {
  absl::MutexLock lock(&mu_);
  Key key{rule, host};
  if (!current.has_value() || FindRule(rule) == nullptr) {
    instances_.erase(key);
    return;
  }
  Instance& inst = instances_[key];
  inst.alert = *current;
  // The server that stored it saw the condition hold, unless it resolved.
  inst.matching = current->state() != v1::ALERT_STATE_RESOLVED;
}

std::vector<v1::Alert> AlertEngine::Alerts() const {
  absl::MutexLock lock(&mu_);
  std::vector<v1::Alert> out;
  out.reserve(instances_.size());
  for (const auto& [key, inst] : instances_) out.push_back(inst.alert);
  return out;
}

std::vector<AlertBrief> AlertEngine::Briefs() const {
  absl::MutexLock lock(&mu_);
  std::vector<AlertBrief> out;
  out.reserve(instances_.size());
  for (const auto& [key, inst] : instances_) {
    const v1::Alert& a = inst.alert;
    out.push_back({a.rule(), a.host_id(), a.state(), a.severity(),
                   absl::ToUnixNanos(FromProto(a.active_since()))});
  }
  return out;
}

}  // namespace tracehealth
