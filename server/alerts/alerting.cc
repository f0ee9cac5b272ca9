#include "server/alerts/alerting.h"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "prometheus/metric_family.h"
#include "server/alerts/alert_series.h"

namespace tracehealth::server {
namespace {

prometheus::MetricFamily Family(const char* name, const char* help,
                                prometheus::MetricType type) {
  prometheus::MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

// A sample of `family` (a gauge or a counter, as the family says).
void AddSample(prometheus::MetricFamily& family, double value,
               std::vector<prometheus::ClientMetric::Label> labels = {}) {
  prometheus::ClientMetric m;
  m.label = std::move(labels);
  if (family.type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  family.metric.push_back(std::move(m));
}

}  // namespace

// Exports alert states and delivery counters at scrape time.
class Alerting::Collector : public prometheus::Collectable {
 public:
  explicit Collector(const Alerting* owner) : owner_(owner) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<prometheus::MetricFamily> out = AlertSeries(
        owner_->engine_.Briefs(), owner_->options_.metrics_max_hosts);
    prometheus::MetricFamily rules =
        Family("tracehealth_alert_rules", "Alert rules loaded.",
               prometheus::MetricType::Gauge);
    AddSample(rules, static_cast<double>(owner_->engine_.rules().size()));
    out.push_back(std::move(rules));
    // Stop() may be taking the notifier away on the owner's thread meanwhile.
    std::optional<AlertmanagerNotifier::Stats> stats;
    {
      absl::MutexLock lock(&owner_->mu_);
      for (const auto& n : owner_->notifiers_) {
        const AlertmanagerNotifier::Stats one = n->stats();
        if (!stats.has_value()) stats.emplace();
        stats->posts_ok += one.posts_ok;
        stats->posts_failed += one.posts_failed;
        stats->alerts_sent += one.alerts_sent;
        stats->alerts_dropped += one.alerts_dropped;
        stats->alerts_waiting += one.alerts_waiting;
      }
    }
    if (stats.has_value()) {
      const AlertmanagerNotifier::Stats& s = *stats;
      prometheus::MetricFamily posts =
          Family("tracehealth_alertmanager_posts_total",
                 "Posts to Alertmanager's v2 API, by result.",
                 prometheus::MetricType::Counter);
      AddSample(posts, static_cast<double>(s.posts_ok), {{"result", "ok"}});
      AddSample(posts, static_cast<double>(s.posts_failed),
                {{"result", "failed"}});
      prometheus::MetricFamily sent =
          Family("tracehealth_alertmanager_alerts_sent_total",
                 "Alerts delivered to Alertmanager (re-sends included).",
                 prometheus::MetricType::Counter);
      AddSample(sent, static_cast<double>(s.alerts_sent));
      prometheus::MetricFamily dropped = Family(
          "tracehealth_alertmanager_alerts_dropped_total",
          "Alerts Alertmanager was not told of (a new one past the "
          "notifier's bound on tracked alerts) or not told had resolved (a "
          "waiting resolved one evicted for a new one).",
          prometheus::MetricType::Counter);
      AddSample(dropped, static_cast<double>(s.alerts_dropped));
      prometheus::MetricFamily waiting = Family(
          "tracehealth_alertmanager_alerts_waiting",
          "Alerts due for delivery (changed, or firing and due for a resend) "
          "at the start of the notifiers' last rounds.",
          prometheus::MetricType::Gauge);
      AddSample(waiting, static_cast<double>(s.alerts_waiting));
      out.push_back(std::move(posts));
      out.push_back(std::move(sent));
      out.push_back(std::move(dropped));
      out.push_back(std::move(waiting));
    }
    return out;
  }

 private:
  const Alerting* const owner_;
};

Alerting::Alerting(std::vector<AlertRule> rules, AlertStore* storage,
                   const HostIndex* index, Options options,
                   std::function<absl::Time()> now)
    : engine_(std::move(rules)),
      storage_(storage),
      index_(index),
      options_(std::move(options)),
      now_(std::move(now)) {
  for (const AlertmanagerNotifier::Options& am : options_.alertmanagers) {
    notifiers_.push_back(std::make_unique<AlertmanagerNotifier>(am, now_));
  }
  collector_ = std::make_shared<Collector>(this);
  for (size_t i = 0; i < engine_.rules().size(); ++i) {
    if (engine_.rules()[i].condition.is_increase())
      increase_rules_.push_back(i);
  }
}

Alerting::Values Alerting::ValuesOf(const v1::HostReport& report) const {
  Values v;
  for (size_t i : increase_rules_) {
    v.push_back(engine_.rules()[i].condition.FirstValue(report));
  }
  return v;
}

Alerting::~Alerting() { Stop(); }

std::shared_ptr<prometheus::Collectable> Alerting::collector() const {
  return collector_;
}

absl::Status Alerting::Start() {
  absl::StatusOr<std::vector<AlertRow>> stored =
      storage_->ListAlerts(AlertFilter{});
  if (!stored.ok()) return stored.status();
  std::vector<v1::Alert> alerts;
  for (const AlertRow& row : *stored) {
    alerts.push_back(FromAlertRow(row));
    // Newest first: the first row of a (rule, host) is its current alert.
    stored_.try_emplace({row.rule, row.host_id},
                        AlertEpisode{row.active_since_ns, row.state});
  }
  engine_.Restore(alerts);
  // Firing alerts keep their original start: Alertmanager sees the same
  // alert again, not a new one.
  for (const auto& n : notifiers_) n->Update(engine_.Alerts());
  started_ = true;
  thread_ = std::thread([this] { Run(); });
  return absl::OkStatus();
}

void Alerting::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  if (started_) thread_.join();
  // Under mu_: the /metrics exposer's threads read notifiers_ in Collect().
  std::vector<std::unique_ptr<AlertmanagerNotifier>> notifiers;
  {
    absl::MutexLock lock(&mu_);
    notifiers.swap(notifiers_);
  }
  notifiers.clear();  // their last delivery attempts, outside mu_
}

void Alerting::OnCommitted(const PricedBatch& batch) {
  if (engine_.rules().empty()) return;
  // Previous report per host within this batch (reports of one host arrive
  // in seq order); keys and values point into the batch's reports.
  absl::flat_hash_map<absl::string_view, const v1::HostReport*> previous;
  std::vector<v1::Alert> changed;
  std::vector<std::optional<double>> before(engine_.rules().size());
  for (size_t i = 0; i < batch.size(); ++i) {
    const CommittedReport& c = batch.committed(i);
    const v1::HostReport& r = *batch.shown(i);
    auto it = previous.find(r.host_id());
    std::vector<v1::Alert> c1;
    if (it != previous.end()) {
      if (it->second->seq() >= r.seq()) continue;
      c1 = engine_.OnReport(r, it->second, c.received_at);
    } else {
      // A replayed older report says nothing about the host's state now.
      const uint64_t newest = batch.PreviousSeq(r.host_id());
      if (newest >= r.seq()) continue;
      std::fill(before.begin(), before.end(), std::nullopt);
      if (!increase_rules_.empty()) {
        std::optional<Values> kept;
        {
          absl::MutexLock lock(&values_mu_);
          auto v = previous_.find(r.host_id());
          if (v != previous_.end()) kept = v->second;
        }
        // Not seen since the start: its newest stored report, read once
        // for the batch (the value is kept below).
        if (!kept.has_value()) {
          std::shared_ptr<const v1::HostReport> p = batch.Previous(r.host_id());
          kept = p != nullptr ? ValuesOf(*p) : Values(increase_rules_.size());
        }
        for (size_t k = 0; k < increase_rules_.size(); ++k)
          before[increase_rules_[k]] = (*kept)[k];
      }
      c1 = engine_.OnReport(r, before, c.received_at);
    }
    changed.insert(changed.end(), c1.begin(), c1.end());
    previous[r.host_id()] = &r;
  }
  // What the next batch compares with: each host's newest report here.
  if (!increase_rules_.empty()) {
    absl::MutexLock lock(&values_mu_);
    for (const auto& [host, r] : previous) {
      previous_.insert_or_assign(std::string(host), ValuesOf(*r));
    }
  }
  if (changed.empty()) return;
  absl::MutexLock lock(&mu_);
  changed_.insert(changed_.end(), changed.begin(), changed.end());
}

std::optional<v1::Alert> Alerting::Transition(const v1::Alert& a) {
  const AlertRow next = ToAlertRow(a);
  const auto key = std::make_pair(a.rule(), a.host_id());
  auto it = stored_.find(key);
  std::optional<AlertEpisode> expected;
  if (it != stored_.end()) expected = it->second;
  absl::StatusOr<TransitionResult> r =
      options_.transitions->TransitionAlert(expected, next);
  // A new episode after one this server did not know of (resolved, or
  // stored before it started) is the transition it meant: try once more
  // from there.
  if (r.ok() && !r->applied && a.state() != v1::ALERT_STATE_UNSPECIFIED &&
      r->current.has_value() && r->current->state == v1::ALERT_STATE_RESOLVED &&
      r->current->active_since_ns < next.active_since_ns) {
    r = options_.transitions->TransitionAlert(
        AlertEpisode{r->current->active_since_ns, r->current->state}, next);
  }
  if (!r.ok()) {
    // The engine keeps its state; the next change of the pair retries from
    // the same expectation.
    std::fprintf(stderr, "tracehealth-server: storing alert %s/%s: %s\n",
                 a.rule().c_str(), a.host_id().c_str(),
                 r.status().ToString().c_str());
    return a;
  }
  if (r->current.has_value()) {
    stored_[key] = AlertEpisode{r->current->active_since_ns, r->current->state};
  } else {
    stored_.erase(key);
  }
  if (r->applied) return a;
  std::optional<v1::Alert> current;
  if (r->current.has_value()) current = FromAlertRow(*r->current);
  engine_.Adopt(a.rule(), a.host_id(), current);
  return current;
}

void Alerting::Publish(const std::vector<v1::Alert>& changed) {
  std::vector<v1::Alert> notify;
  notify.reserve(changed.size());
  for (const v1::Alert& a : changed) {
    if (options_.transitions != nullptr) {
      if (std::optional<v1::Alert> n = Transition(a))
        notify.push_back(*std::move(n));
      continue;
    }
    absl::Status s = a.state() == v1::ALERT_STATE_UNSPECIFIED
                         ? absl::OkStatus()  // PutAlert cannot remove it
                         : storage_->PutAlert(ToAlertRow(a));
    if (!s.ok()) {
      std::fprintf(stderr, "tracehealth-server: storing alert %s/%s: %s\n",
                   a.rule().c_str(), a.host_id().c_str(), s.ToString().c_str());
    }
    notify.push_back(a);
  }
  for (const auto& n : notifiers_) n->Update(notify);
}

void Alerting::Run() {
  absl::Time next_tick = now_();
  while (true) {
    std::vector<v1::Alert> changed;
    bool stopping;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !changed_.empty();
      };
      mu_.AwaitWithTimeout(
          absl::Condition(&ready),
          std::min(options_.eval_interval, absl::Milliseconds(250)));
      stopping = stopping_;
      changed.swap(changed_);
    }
    absl::Time now = now_();
    if (now >= next_tick) {
      std::vector<HostLiveness> hosts;
      if (engine_.has_silence_rules()) {
        hosts.reserve(index_->size());
        index_->ForEach([&](const std::string& id, const HostEntry& e) {
          hosts.push_back(
              {id, e.record.interval_seconds, e.last_seen, e.record.labels});
        });
      }
      std::vector<v1::Alert> ticked = engine_.Tick(now, hosts);
      changed.insert(changed.end(), ticked.begin(), ticked.end());
      next_tick = now + options_.eval_interval;
    }
    if (!changed.empty()) Publish(changed);
    if (stopping) return;
  }
}

}  // namespace tracehealth::server
