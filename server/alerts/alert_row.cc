#include "server/alerts/alert_row.h"

#include "google/protobuf/util/time_util.h"

namespace tracehealth::server {
namespace {

using google::protobuf::util::TimeUtil;

int64_t Nanos(const google::protobuf::Timestamp& ts) {
  return TimeUtil::TimestampToNanoseconds(ts);
}

google::protobuf::Timestamp Ts(int64_t ns) {
  return TimeUtil::NanosecondsToTimestamp(ns);
}

}  // namespace

AlertRow ToAlertRow(const v1::Alert& a) {
  AlertRow row;
  row.rule = a.rule();
  row.host_id = a.host_id();
  row.state = a.state();
  row.severity = a.severity();
  row.labels = {a.labels().begin(), a.labels().end()};
  row.annotations = {a.annotations().begin(), a.annotations().end()};
  row.value = a.value();
  row.active_since_ns = Nanos(a.active_since());
  if (a.has_fired_at()) row.fired_at_ns = Nanos(a.fired_at());
  if (a.has_resolved_at()) row.resolved_at_ns = Nanos(a.resolved_at());
  return row;
}

v1::Alert FromAlertRow(const AlertRow& row) {
  v1::Alert a;
  a.set_rule(row.rule);
  a.set_host_id(row.host_id);
  a.set_state(static_cast<v1::AlertState>(row.state));
  a.set_severity(row.severity);
  a.mutable_labels()->insert(row.labels.begin(), row.labels.end());
  a.mutable_annotations()->insert(row.annotations.begin(),
                                  row.annotations.end());
  a.set_value(row.value);
  *a.mutable_active_since() = Ts(row.active_since_ns);
  if (row.fired_at_ns) *a.mutable_fired_at() = Ts(*row.fired_at_ns);
  if (row.resolved_at_ns) *a.mutable_resolved_at() = Ts(*row.resolved_at_ns);
  return a;
}

}  // namespace tracehealth::server
