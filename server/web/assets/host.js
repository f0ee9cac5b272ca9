// The fleet page's host view (/hosts/ID): a host's predictions with their
// inputs, basis and the calibration they use, its history charts, and the
// kernel events its agent observed. Loaded before app.js, whose
// helpers (el, api, fmt...) it calls when the view is shown. Every
// host-supplied string is put into the page with textContent or as an
// attribute value, never parsed as HTML.
'use strict';

// ---- Host --------------------------------------------------------------

// Past --retention (30 d by default) the charts show hourly rollups
// (HistoryPoint.rollup: the hour's last values).
const WINDOWS = [['1 h', 3600], ['6 h', 6 * 3600], ['24 h', 86400], ['7 d', 7 * 86400], ['30 d', 30 * 86400],
  ['90 d', 90 * 86400], ['1 y', 365 * 86400]];

async function showHost(main) {
  const id = decodeURIComponent(location.pathname.slice('/hosts/'.length));
  let state;
  try {
    state = await api('/api/v1/hosts/' + encodeURIComponent(id));
  } catch (err) {
    showError(main, err);
    return;
  }
  const r = state.latest;
  const snap = r.snapshot;
  const k = snap.kernel || {};
  const th = snap.thresholds || {};
  main.append(el('h1', {id: 'host-id'}, state.host_id),
      el('section', {id: 'host-facts'}, el('dl', {className: 'kv'},
          ...kv('Labels', el('span', {className: 'labels', id: 'host-labels'}, labelText(state.labels))),
          ...kv('Kernel', k.release || 'unknown'), ...kv('Architecture', k.arch || 'unknown'),
          ...kv('Preemption', (k.preempt_mode || 'PREEMPT_MODE_UNKNOWN').replace('PREEMPT_MODE_', '').toLowerCase() +
              (k.preempt_source ? ' (from ' + k.preempt_source + ')' : '')),
          ...kv('Threads', fmt(snap.threads && snap.threads.total)),
          ...kv('watchdog_thresh', th.watchdog_thresh_seconds === undefined ? 'unknown' : th.watchdog_thresh_seconds + ' s' +
              (th.softlockup_panic ? ' (softlockup_panic)' : '')),
          ...kv('rcu_cpu_stall_timeout', th.rcu_cpu_stall_timeout_seconds === undefined ? 'unknown'
              : th.rcu_cpu_stall_timeout_seconds + ' s' + (th.panic_on_rcu_stall ? ' (panic_on_rcu_stall)' : '')),
          ...kv('hung_task_timeout_secs', th.hung_task_timeout_seconds === undefined ? 'unknown'
              : th.hung_task_timeout_seconds === 0 ? 'off'
              : th.hung_task_timeout_seconds + ' s' + (th.hung_task_panic ? ' (hung_task_panic)' : '')),
          ...kv('Worst risk', riskBadge(r.predictions.worst_risk)),
          ...kv('Calibration', el('span', {id: 'host-calibration'}, calibrationText(state))),
          ...kv('Last report', fmtTime(state.last_seen) + (state.stale ? ' (stale)' : '') + ', ' + fmt(state.reports) + ' reports'),
          ...kv('What-if', el('a', {href: '/what-if?host=' + encodeURIComponent(state.host_id), id: 'whatif-link'}, 'ask about this host')))));

  main.append(renderPredictions(r.predictions));
  main.append(renderInputs(r.predictions, snap.unknown || []));
  const hist = el('section', {id: 'history'});
  main.append(hist);
  renderHistory(hist, state.host_id, 3600);
  const eventsBox = el('section', {id: 'host-events'});
  main.append(eventsBox);
  renderEvents(eventsBox, state.host_id);
  const alertsBox = el('section', {id: 'host-alerts'});
  main.append(alertsBox);
  try {
    renderAlerts(alertsBox, await api('/api/v1/alerts', {host_id: state.host_id, limit: 100}), 'Alerts of this host');
  } catch (err) {
    showError(alertsBox, err);
  }
}

function kv(name, value) { return [el('dt', {}, name), el('dd', {}, value)]; }

// Every tracehealth.v1.ConstantsOrigin in words
// (server/web/enum_names_test.sh checks the table against the proto).
const ORIGIN_TEXT = {
  CONSTANTS_ORIGIN_SEED_DEFAULT: 'seed constants (no calibration)',
  CONSTANTS_ORIGIN_HOST_CALIBRATION: 'this host\'s own calibration',
  CONSTANTS_ORIGIN_CLASS_CALIBRATION: 'its hardware class\'s calibration',
  CONSTANTS_ORIGIN_WHAT_IF: 'a what-if value',
  CONSTANTS_ORIGIN_UNSPECIFIED: 'not said',
};
// "this host's own calibration: c_visit 120 ns, measured 2026-12-01
// 15:40:00Z", from the server's typed origin (HostState.constants_origin).
function calibrationText(state) {
  const origin = state.constants_origin || 'CONSTANTS_ORIGIN_UNSPECIFIED';
  const c = state.latest.calibration || {};
  const ns = (s) => fmt(num(s) * 1e9, 1) + ' ns';
  let text = ORIGIN_TEXT[origin];
  if (origin === 'CONSTANTS_ORIGIN_HOST_CALIBRATION') {
    text += ': c_visit ' + ns(c.c_visit_seconds) + ', measured ' + fmtTime(c.measured_at);
  } else if (origin === 'CONSTANTS_ORIGIN_CLASS_CALIBRATION') {
    text += ': c_visit ' + ns(c.c_visit_seconds) + ', the median of ' + fmt(c.class_canaries) +
        (c.class_canaries === 1 ? ' canary' : ' canaries') + ' of ' + c.hardware_class;
  }
  return text;
}

function renderPredictions(p) {
  const body = el('tbody', {});
  for (const a of p.attach) {
    body.append(el('tr', {dataset: {kind: a.probe_kind}},
        el('td', {}, a.probe_kind.replace('PROBE_KIND_', '').toLowerCase()),
        el('td', {}, a.uses_fgraph ? (a.fgraph_already_active ? 'yes (already active)' : 'yes') : 'no'),
        el('td', {className: 'num'}, fmtSeconds(a.latency_seconds)),
        el('td', {}, riskBadge(a.risk)),
        el('td', {className: 'summary'}, a.summary)));
  }
  const sd = p.stack_depot || {};
  const vm = p.vmap_purge || {};
  return el('section', {id: 'predictions'}, el('h2', {}, 'Predictions'),
      el('table', {id: 'attach'}, el('thead', {}, el('tr', {},
          ...['Probe kind', 'Walks threads', 'Attach latency', 'Risk', 'Explanation'].map((t) => el('th', {}, t)))), body),
      el('h2', {}, 'Stack depot pool budget'),
      el('p', {id: 'depot-summary'}, riskBadge(sd.risk), ' ', sd.applies ? sd.summary : 'Not applicable: ' + (sd.summary || 'no stack depot')),
      el('h2', {}, 'KASAN vmalloc purge'),
      el('p', {id: 'vmap-summary'}, riskBadge(vm.risk), ' ', vm.applies ? vm.summary : 'Not applicable: ' + (vm.summary || 'no KASAN vmalloc')));
}

// Every input of every prediction with its source, and the unknown ones
// with the reason.
function renderInputs(p, unknown) {
  const seen = new Map();
  const add = (model, basis) => {
    for (const i of (basis && basis.inputs) || []) {
      const key = i.name + '\u0000' + i.value + '\u0000' + i.source;
      if (!seen.has(key)) seen.set(key, {name: i.name, value: i.value, source: i.source, models: []});
      if (!seen.get(key).models.includes(model)) seen.get(key).models.push(model);
    }
  };
  for (const a of p.attach) add('fgraph', a.basis);
  add('stack depot', p.stack_depot && p.stack_depot.basis);
  add('vmap purge', p.vmap_purge && p.vmap_purge.basis);
  const body = el('tbody', {});
  // Every tracehealth.v1.InputSource (server/web/input_source_names_test.sh).
  const srcText = {INPUT_SOURCE_MEASURED: 'measured', INPUT_SOURCE_DERIVED: 'derived',
    INPUT_SOURCE_DEFAULT: 'defaulted', INPUT_SOURCE_OVERRIDDEN: 'overridden',
    INPUT_SOURCE_NOT_APPLICABLE: 'not applicable', INPUT_SOURCE_UNSPECIFIED: 'unspecified'};
  for (const i of [...seen.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    body.append(el('tr', {},
        el('td', {}, i.name), el('td', {}, i.value),
        el('td', {className: 'src-' + i.source}, srcText[i.source] || i.source),
        el('td', {className: 'muted'}, i.models.join(', '))));
  }
  for (const u of unknown) {
    body.append(el('tr', {className: 'unknown-input'},
        el('td', {}, u.input), el('td', {}, '–'), el('td', {className: 'src-unknown'}, 'unknown'),
        el('td', {}, u.reason)));
  }
  return el('section', {id: 'inputs'}, el('h2', {}, 'Inputs'),
      el('table', {}, el('thead', {}, el('tr', {}, ...['Input', 'Value', 'Source', 'Used by / why unknown'].map((t) => el('th', {}, t)))), body));
}

const charts = [];

async function renderHistory(box, hostId, seconds) {
  while (charts.length) charts.pop().destroy();
  clear(box);
  const pick = el('select', {id: 'window', onchange: () => renderHistory(box, hostId, Number(pick.value))},
      ...WINDOWS.map(([t, s]) => el('option', {value: s, selected: s === seconds}, t)));
  box.append(el('h2', {}, 'History'), el('label', {}, 'Window ', pick));
  const to = new Date();
  const from = new Date(to.getTime() - seconds * 1000);
  let resp;
  try {
    resp = await api('/api/v1/hosts/' + encodeURIComponent(hostId) + '/history',
        {from: from.toISOString(), to: to.toISOString(), max_points: 500});
  } catch (err) {
    showError(box, err);
    return;
  }
  const points = resp.points || [];
  const rollups = resp.matched_rollups || 0;
  const reports = resp.matched_reports || 0;
  box.append(el('p', {className: 'muted', id: 'history-count'}, rollups ?
      points.length + ' points of ' + reports + ' reports and ' + rollups +
          ' hourly rollups in the window (before the oldest stored report: each hour\'s last values)' :
      points.length + ' of ' + reports + ' reports in the window'));
  const grid = el('div', {className: 'grid'});
  box.append(grid);
  const labels = points.map((p) => seconds > 86400 ?
      new Date(p.observed_at).toLocaleString('en-GB') : new Date(p.observed_at).toLocaleTimeString('en-GB'));
  const series = [
    ['Threads', (p) => num(p.threads), 'chart-threads'],
    ['Predicted attach latency (s, kprobe_multi_return)', (p) => num(p.attach_latency_seconds), 'chart-latency'],
    ['Stack depot pool budget (used / max)', (p) => num(p.pool_budget_ratio), 'chart-budget'],
    ['KASAN vmalloc purge (s)', (p) => num(p.purge_seconds), 'chart-purge'],
  ];
  for (const [title, pick, id] of series) {
    const canvas = el('canvas', {id});
    grid.append(el('div', {}, el('h3', {}, title), el('div', {className: 'chart'}, canvas)));
    if (typeof Chart === 'undefined') continue;
    charts.push(new Chart(canvas, {
      type: 'line',
      data: {labels, datasets: [{label: title, data: points.map(pick), borderColor: '#175cd3',
        backgroundColor: '#175cd3', pointRadius: points.length > 60 ? 0 : 2, spanGaps: true,
        pointStyle: points.map((p) => (p.rollup ? 'rectRot' : 'circle'))}]},
      options: {animation: false, maintainAspectRatio: false, plugins: {legend: {display: false}},
        scales: {x: {ticks: {maxTicksLimit: 8}}}},
    }));
  }
}
