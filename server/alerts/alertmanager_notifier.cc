#include "server/alerts/alertmanager_notifier.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/proto_time.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace tracehealth {
namespace {

std::string Rfc3339(absl::Time t) {
  return absl::FormatTime(absl::RFC3339_full, t, absl::UTCTimeZone());
}

// One alert as Alertmanager's v2 API takes it: a JSON object.
std::string AlertJson(const v1::Alert& a, absl::Time now,
                      absl::Duration resend_interval,
                      const std::string& generator_url) {
  google::protobuf::Struct obj;
  auto& fields = *obj.mutable_fields();
  google::protobuf::Struct* labels = fields["labels"].mutable_struct_value();
  for (const auto& [k, v] : a.labels()) {
    (*labels->mutable_fields())[k].set_string_value(v);
  }
  google::protobuf::Struct* annotations =
      fields["annotations"].mutable_struct_value();
  for (const auto& [k, v] : a.annotations()) {
    (*annotations->mutable_fields())[k].set_string_value(v);
  }
  absl::Time starts =
      FromProto(a.has_fired_at() ? a.fired_at() : a.active_since());
  fields["startsAt"].set_string_value(Rfc3339(starts));
  absl::Time ends = a.state() == v1::ALERT_STATE_RESOLVED
                        ? FromProto(a.resolved_at())
                        : now + 4 * resend_interval;
  fields["endsAt"].set_string_value(Rfc3339(ends));
  if (!generator_url.empty())
    fields["generatorURL"].set_string_value(generator_url);
  std::string json;
  // Serializing a Struct of strings cannot fail.
  (void)google::protobuf::util::MessageToJsonString(obj, &json);
  return json;
}

std::string JoinBody(const std::vector<std::string>& objects, size_t begin,
                     size_t end) {
  std::string body = "[";
  for (size_t i = begin; i < end; ++i) {
    if (i > begin) body += ',';
    body += objects[i];
  }
  body += ']';
  return body;
}

}  // namespace

AlertmanagerNotifier::AlertmanagerNotifier(Options options,
                                           std::function<absl::Time()> now,
                                           Poster post)
    : options_(std::move(options)),
      now_(std::move(now)),
      post_(post ? std::move(post)
                 : Poster([timeout = options_.timeout](
                              const std::string& url, const std::string& body) {
                     return HttpPostJson(url, body, timeout);
                   })),
      retry_(options_.retry),
      last_round_(now_()) {
  if (options_.background) thread_ = std::thread([this] { Run(); });
}

AlertmanagerNotifier::~AlertmanagerNotifier() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void AlertmanagerNotifier::Forget(const Key& key, const Entry& e) {
  if (e.alert.state() == v1::ALERT_STATE_RESOLVED) {
    resolved_.erase({FromProto(e.alert.resolved_at()), key.first, key.second});
  }
}

void AlertmanagerNotifier::Update(const std::vector<v1::Alert>& alerts) {
  absl::MutexLock lock(&mu_);
  for (const v1::Alert& a : alerts) {
    if (a.state() != v1::ALERT_STATE_FIRING &&
        a.state() != v1::ALERT_STATE_RESOLVED) {
      continue;
    }
    Key key{a.rule(), a.host_id()};
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      if (entries_.size() >= options_.max_alerts) {
        ++stats_.alerts_dropped;
        if (resolved_.empty()) continue;  // the new alert is dropped
        auto oldest = resolved_.begin();
        entries_.erase({std::get<1>(*oldest), std::get<2>(*oldest)});
        resolved_.erase(oldest);
      }
      it = entries_.try_emplace(key).first;
    } else {
      Forget(key, it->second);
    }
    Entry& e = it->second;
    e.alert = a;
    ++e.version;
    e.dirty = true;
    if (a.state() == v1::ALERT_STATE_RESOLVED)
      resolved_.insert({FromProto(a.resolved_at()), key.first, key.second});
  }
}

AlertmanagerNotifier::Stats AlertmanagerNotifier::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

std::string AlertmanagerNotifier::ToJson(const std::vector<v1::Alert>& alerts,
                                         absl::Time now,
                                         absl::Duration resend_interval,
                                         const std::string& generator_url) {
  std::vector<std::string> objects;
  objects.reserve(alerts.size());
  for (const v1::Alert& a : alerts)
    objects.push_back(AlertJson(a, now, resend_interval, generator_url));
  return JoinBody(objects, 0, objects.size());
}

std::vector<std::pair<size_t, size_t>> AlertmanagerNotifier::BatchRanges(
    const std::vector<size_t>& sizes, size_t max_alerts, size_t max_bytes) {
  std::vector<std::pair<size_t, size_t>> out;
  size_t begin = 0;
  size_t bytes = 2;  // "[]"
  for (size_t i = 0; i < sizes.size(); ++i) {
    const size_t add = sizes[i] + (i > begin ? 1 : 0);  // "," before
    if (i > begin && (i - begin >= max_alerts || bytes + add > max_bytes)) {
      out.push_back({begin, i});
      begin = i;
      bytes = 2 + sizes[i];
      continue;
    }
    bytes += add;
  }
  if (begin < sizes.size()) out.push_back({begin, sizes.size()});
  return out;
}

std::vector<AlertmanagerNotifier::Due> AlertmanagerNotifier::CollectDue(
    absl::Time now, absl::Duration since_last_round) {
  std::vector<Due> due;
  // Firing alerts sent resend_interval ago or more: (last_sent, entry).
  std::vector<std::pair<absl::Time, const std::pair<const Key, Entry>*>> resend;
  uint64_t firing = 0;
  for (const auto& kv : entries_) {
    const Entry& e = kv.second;
    const bool is_firing = e.alert.state() == v1::ALERT_STATE_FIRING;
    firing += is_firing;
    if (e.dirty) {
      due.push_back({kv.first, e.alert, e.version});
    } else if (is_firing && now - e.last_sent >= options_.resend_interval) {
      resend.push_back({e.last_sent, &kv});
    }
  }
  const double elapsed =
      absl::ToDoubleSeconds(std::max(since_last_round, absl::ZeroDuration()));
  const size_t budget = static_cast<size_t>(
      std::ceil(static_cast<double>(firing) * elapsed /
                absl::ToDoubleSeconds(options_.resend_interval)));
  if (resend.size() > budget) {
    std::nth_element(resend.begin(), resend.begin() + budget, resend.end(),
                     [](const auto& a, const auto& b) {
                       if (a.first != b.first) return a.first < b.first;
                       return a.second->first < b.second->first;
                     });
    resend.resize(budget);
  }
  for (const auto& [t, kv] : resend)
    due.push_back({kv->first, kv->second.alert, kv->second.version});
  stats_.alerts_waiting = due.size();
  return due;
}

std::vector<bool> AlertmanagerNotifier::PostAll(
    const std::vector<std::string>& bodies,
    std::optional<absl::Duration>* retry_after) {
  std::vector<bool> ok(bodies.size(), false);
  const std::string url = absl::StrCat(options_.url, "/api/v2/alerts");
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  absl::Mutex err_mu;
  std::string error;
  std::optional<absl::Duration> after;
  uint64_t n_ok = 0, n_failed = 0;
  auto worker = [&] {
    while (!failed.load()) {
      const size_t i = next.fetch_add(1);
      if (i >= bodies.size()) return;
      absl::StatusOr<HttpResponse> r = post_(url, bodies[i]);
      absl::MutexLock lock(&err_mu);
      if (r.ok() && r->status / 100 == 2) {
        ok[i] = true;
        ++n_ok;
        continue;
      }
      ++n_failed;
      failed.store(true);
      error = r.ok() ? absl::StrCat("HTTP ", r->status, ": ", r->body)
                     : std::string(r.status().message());
      if (r.ok()) {
        std::optional<absl::Duration> a =
            ParseRetryAfter(r->retry_after, now_());
        if (a.has_value()) after = std::max(after.value_or(*a), *a);
      }
    }
  };
  const size_t workers = std::min(
      std::max<size_t>(options_.max_concurrent_posts, 1), bodies.size());
  std::vector<std::thread> threads;
  for (size_t w = 1; w < workers; ++w) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  *retry_after = after;
  absl::MutexLock lock(&mu_);
  stats_.posts_ok += n_ok;
  stats_.posts_failed += n_failed;
  if (n_failed > 0) stats_.last_error = error;
  return ok;
}

void AlertmanagerNotifier::Round(bool final) {
  absl::MutexLock round(&round_mu_);
  const absl::Time now = now_();
  if (!final && now < retry_.retry_at()) return;
  std::vector<Due> due;
  {
    absl::MutexLock lock(&mu_);
    due = CollectDue(now, now - last_round_);
  }
  last_round_ = now;
  if (due.empty()) return;
  std::vector<std::string> objects;
  std::vector<size_t> sizes;
  objects.reserve(due.size());
  sizes.reserve(due.size());
  for (const Due& d : due) {
    objects.push_back(AlertJson(d.alert, now, options_.resend_interval,
                                options_.generator_url));
    sizes.push_back(objects.back().size());
  }
  const std::vector<std::pair<size_t, size_t>> ranges =
      BatchRanges(sizes, options_.max_batch_alerts, options_.max_batch_bytes);
  std::vector<std::string> bodies;
  bodies.reserve(ranges.size());
  for (const auto& [b, e] : ranges) bodies.push_back(JoinBody(objects, b, e));
  objects.clear();
  std::optional<absl::Duration> retry_after;
  const std::vector<bool> ok = PostAll(bodies, &retry_after);
  bool all_ok = true;
  absl::MutexLock lock(&mu_);
  for (size_t r = 0; r < ranges.size(); ++r) {
    if (!ok[r]) {
      all_ok = false;
      continue;
    }
    stats_.alerts_sent += ranges[r].second - ranges[r].first;
    for (size_t i = ranges[r].first; i < ranges[r].second; ++i) {
      auto it = entries_.find(due[i].key);
      if (it == entries_.end()) continue;
      // An Update that arrived during the post keeps the entry dirty.
      if (it->second.version != due[i].version) continue;
      if (it->second.alert.state() == v1::ALERT_STATE_RESOLVED) {
        Forget(it->first, it->second);
        entries_.erase(it);
      } else {
        it->second.dirty = false;
        it->second.last_sent = now;
      }
    }
  }
  if (all_ok) {
    retry_.Succeeded();
  } else {
    retry_.Failed(now, retry_after);
  }
}

void AlertmanagerNotifier::Run() {
  while (true) {
    bool stopping;
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.poll);
      stopping = stopping_;
    }
    Round(/*final=*/stopping);
    if (stopping) return;
  }
}

}  // namespace tracehealth
