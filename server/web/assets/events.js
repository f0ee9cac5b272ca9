// The host view's observed kernel events (GET /api/v1/events of the host):
// the soft lockups, RCU stalls and hung tasks its agent read in the kernel
// log, and how each compares with the prediction current when it was
// logged. Loaded before app.js, whose helpers (el, api, fmt...) it calls.
// Every host-supplied string is put into the page with textContent.
'use strict';

// Every value of the enums shown, in words (server/web/enum_names_test.sh
// checks each table against the proto).
const EVENT_KIND_TEXT = {
  OBSERVED_EVENT_KIND_SOFT_LOCKUP: 'soft lockup', OBSERVED_EVENT_KIND_RCU_STALL: 'RCU stall',
  OBSERVED_EVENT_KIND_HUNG_TASK: 'hung task', OBSERVED_EVENT_KIND_UNSPECIFIED: 'unknown',
};
const EVENT_MODEL_TEXT = {
  EVENT_MODEL_FGRAPH_ATTACH: 'fgraph attach', EVENT_MODEL_VMAP_PURGE: 'vmap purge',
  EVENT_MODEL_STACK_DEPOT: 'stack depot', EVENT_MODEL_UNATTRIBUTED: 'unattributed',
};
const EVENT_PREDICTION_TEXT = {
  EVENT_PREDICTION_YES: 'predicted', EVENT_PREDICTION_NO: 'missed',
  EVENT_PREDICTION_UNKNOWN: 'not comparable', EVENT_PREDICTION_UNSPECIFIED: 'not compared',
};

// The kernel events the agent saw in this host's log (7 days).
async function renderEvents(box, hostId) {
  box.append(el('h2', {}, 'Observed kernel events'));
  let resp;
  try {
    resp = await api('/api/v1/events', {host_id: hostId, limit: 50});
  } catch (err) {
    showError(box, err);
    return;
  }
  if (!resp.events.length) {
    box.append(el('p', {className: 'muted', id: 'no-events'}, 'None in the last 7 days.'));
    return;
  }
  const body = el('tbody', {});
  for (const s of resp.events) {
    const e = s.event;
    const what = [e.seconds === undefined ? null : e.seconds + ' s', e.comm ? e.comm + (e.pid === undefined ? '' : ':' + e.pid) : null,
      e.matched_symbol || null].filter((x) => x).join(', ');
    body.append(el('tr', {dataset: {kind: e.kind, predicted: s.predicted}},
        el('td', {}, fmtTime(e.logged_at)), el('td', {className: 'kind'}, EVENT_KIND_TEXT[e.kind]),
        el('td', {className: 'model'}, EVENT_MODEL_TEXT[e.model]),
        el('td', {className: 'predicted'}, EVENT_PREDICTION_TEXT[s.predicted],
            s.prediction_seq === undefined ? '' : ' (' + RISK_TEXT[s.predicted_risk] + ', report ' + s.prediction_seq + ')'),
        el('td', {}, what)));
  }
  box.append(el('table', {id: 'events'}, el('thead', {}, el('tr', {},
      ...['Logged', 'Event', 'Model', 'Prediction', 'Seconds, task, symbol'].map((t) => el('th', {}, t)))), body));
}
