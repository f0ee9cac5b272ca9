// Conversions between the API's tracehealth.v1.Alert and the stored AlertRow.
#ifndef TRACEHEALTH_SERVER_ALERTS_ALERT_ROW_H_
#define TRACEHEALTH_SERVER_ALERTS_ALERT_ROW_H_

#include "proto/tracehealth/v1/query.pb.h"
#include "server/storage/alert_store.h"

namespace tracehealth::server {

AlertRow ToAlertRow(const v1::Alert& alert);
v1::Alert FromAlertRow(const AlertRow& row);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_ALERTS_ALERT_ROW_H_
