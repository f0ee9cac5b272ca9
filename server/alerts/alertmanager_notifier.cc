#include "server/alerts/alertmanager_notifier.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/proto_time.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "server/alerts/http_client.h"

namespace tracehealth {
namespace {

std::string Rfc3339(absl::Time t) {
  return absl::FormatTime(absl::RFC3339_full, t, absl::UTCTimeZone());
}

}  // namespace

AlertmanagerNotifier::AlertmanagerNotifier(Options options,
                                           std::function<absl::Time()> now)
    : options_(std::move(options)), now_(std::move(now)) {
  thread_ = std::thread([this] { Run(); });
}

AlertmanagerNotifier::~AlertmanagerNotifier() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

void AlertmanagerNotifier::Update(const std::vector<v1::Alert>& alerts) {
  absl::MutexLock lock(&mu_);
  for (const v1::Alert& a : alerts) {
    if (a.state() != v1::ALERT_STATE_FIRING &&
        a.state() != v1::ALERT_STATE_RESOLVED) {
      continue;
    }
    Entry& e = entries_[{a.rule(), a.host_id()}];
    e.alert = a;
    e.dirty = true;
  }
  // Bound memory: drop resolved alerts first, oldest first.
  while (entries_.size() > options_.max_alerts) {
    auto victim = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second.alert.state() != v1::ALERT_STATE_RESOLVED) continue;
      if (victim == entries_.end() ||
          FromProto(it->second.alert.resolved_at()) <
              FromProto(victim->second.alert.resolved_at())) {
        victim = it;
      }
    }
    if (victim == entries_.end()) victim = entries_.begin();
    entries_.erase(victim);
    ++stats_.alerts_dropped;
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
  google::protobuf::ListValue list;
  for (const v1::Alert& a : alerts) {
    google::protobuf::Struct* obj = list.add_values()->mutable_struct_value();
    auto& fields = *obj->mutable_fields();
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
  }
  std::string json;
  // Serializing a Struct/ListValue of strings cannot fail.
  (void)google::protobuf::util::MessageToJsonString(list, &json);
  return json;
}

bool AlertmanagerNotifier::SendDue() {
  absl::Time now = now_();
  std::vector<v1::Alert> due;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [key, e] : entries_) {
      bool resend = e.alert.state() == v1::ALERT_STATE_FIRING &&
                    now - e.last_sent >= options_.resend_interval;
      if (e.dirty || resend) due.push_back(e.alert);
    }
  }
  if (due.empty()) return true;
  std::string body =
      ToJson(due, now, options_.resend_interval, options_.generator_url);
  absl::StatusOr<HttpResponse> r = HttpPostJson(
      absl::StrCat(options_.url, "/api/v2/alerts"), body, options_.timeout);
  absl::MutexLock lock(&mu_);
  if (!r.ok() || r->status / 100 != 2) {
    ++stats_.posts_failed;
    stats_.last_error = r.ok() ? absl::StrCat("HTTP ", r->status, ": ", r->body)
                               : std::string(r.status().message());
    return false;
  }
  ++stats_.posts_ok;
  stats_.alerts_sent += due.size();
  for (const v1::Alert& sent : due) {
    auto it = entries_.find({sent.rule(), sent.host_id()});
    if (it == entries_.end()) continue;
    // An Update that arrived during the post keeps the entry dirty.
    if (it->second.alert.SerializeAsString() != sent.SerializeAsString())
      continue;
    if (sent.state() == v1::ALERT_STATE_RESOLVED) {
      entries_.erase(it);
    } else {
      it->second.dirty = false;
      it->second.last_sent = now;
    }
  }
  return true;
}

void AlertmanagerNotifier::Run() {
  absl::Duration backoff = absl::Seconds(1);
  absl::Time retry_at = absl::InfinitePast();
  while (true) {
    bool stopping;
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.poll);
      stopping = stopping_;
    }
    if (stopping || now_() >= retry_at) {
      if (SendDue()) {
        backoff = absl::Seconds(1);
        retry_at = absl::InfinitePast();
      } else {
        retry_at = now_() + backoff;
        backoff = std::min(backoff * 2, absl::Minutes(1));
      }
    }
    if (stopping) return;
  }
}

}  // namespace tracehealth
