// The tracehealth fleet page: views of /api/v1 (protobuf JSON of the
// FleetQuery messages, proto field names). Every host-supplied string is
// put into the page with textContent or as an attribute value, never parsed
// as HTML.
'use strict';

const RISKS = ['RISK_STALL', 'RISK_WARNING', 'RISK_LATENCY', 'RISK_NONE', 'RISK_UNKNOWN'];
const RISK_TEXT = {
  RISK_STALL: 'stall', RISK_WARNING: 'warning', RISK_LATENCY: 'latency',
  RISK_NONE: 'none', RISK_UNKNOWN: 'unknown',
};
const PROBE_KINDS = [
  'PROBE_KIND_KPROBE_MULTI_RETURN', 'PROBE_KIND_FUNCTION_GRAPH_TRACER',
  'PROBE_KIND_FUNCTION_PROFILER', 'PROBE_KIND_GRAPH_LATENCY_TRACER', 'PROBE_KIND_KPROBE_MULTI',
  'PROBE_KIND_KPROBE_SESSION', 'PROBE_KIND_FPROBE_EVENT', 'PROBE_KIND_FPROBE_RETURN_EVENT',
  'PROBE_KIND_KRETPROBE', 'PROBE_KIND_FENTRY_FEXIT',
];
const PREEMPT_MODES = ['PREEMPT_MODE_NONE', 'PREEMPT_MODE_VOLUNTARY', 'PREEMPT_MODE_FULL',
  'PREEMPT_MODE_LAZY', 'PREEMPT_MODE_RT'];
const PAGE_SIZES = [50, 100, 500];
const STRIP_CELLS = 1000;

// Views by path (rollout.js, accuracy.js and host.js define theirs).
const VIEWS = [
  {name: 'Fleet', href: '/', match: (p) => p === '/', show: showFleet},
  {name: 'What-if', href: '/what-if', match: (p) => p === '/what-if', show: showWhatIf},
  {name: 'Rollout plan', href: '/rollout', match: (p) => p === '/rollout', show: showRollout},
  {name: 'Accuracy', href: '/accuracy', match: (p) => p === '/accuracy', show: showAccuracy},
  {name: null, match: (p) => p.startsWith('/hosts/'), show: showHost},
];

// ---- DOM helpers -------------------------------------------------------

// el('td', {className: 'num'}, 'text', child...): text arguments become
// text nodes.
function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e[k] = v;
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

function hostHref(id) { return '/hosts/' + encodeURIComponent(id); }

function riskBadge(risk) {
  const r = risk || 'RISK_UNKNOWN';
  return el('span', {className: 'badge ' + r, title: r}, RISK_TEXT[r] || r);
}

function num(v) { return v === undefined || v === null || v === '' ? null : Number(v); }

function fmt(v, digits) {
  const n = num(v);
  if (n === null || Number.isNaN(n)) return '–';
  if (digits === undefined) return n.toLocaleString('en-US');
  return n.toLocaleString('en-US', {maximumFractionDigits: digits, minimumFractionDigits: 0});
}

function fmtSeconds(v) {
  const n = num(v);
  if (n === null) return '–';
  if (n >= 100) return fmt(n, 0) + ' s';
  if (n >= 1) return fmt(n, 2) + ' s';
  if (n >= 0.001) return fmt(n * 1000, 2) + ' ms';
  return fmt(n * 1e6, 1) + ' µs';
}

function fmtTime(ts) { return ts ? new Date(ts).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '–'; }

// Labels as "k=v" lines; control characters shown as \xNN so that they
// cannot fake lines or move the cursor.
function labelText(labels) {
  const esc = (s) => String(s).replace(/[\u0000-\u001f\u007f-\u009f]/g,
      (c) => '\\x' + c.charCodeAt(0).toString(16).padStart(2, '0'));
  return Object.keys(labels || {}).sort().map((k) => esc(k) + '=' + esc(labels[k])).join('\n');
}

function marginColor(m) {
  if (m === null || m === undefined) return '#d0d5dd';
  const x = Math.max(0, Math.min(1, Number(m) / 2));  // 0 .. 2x the threshold
  const hue = 140 - 140 * x;                          // green .. red
  return 'hsl(' + hue + ', 75%, ' + (m >= 1 ? 38 : 48) + '%)';
}

// ---- API ---------------------------------------------------------------

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

function token() { return sessionStorage.getItem('tracehealth-token') || ''; }

async function api(path, params, body) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params || {})) {
    if (Array.isArray(v)) v.forEach((x) => url.searchParams.append(k, x));
    else if (v !== '' && v !== undefined && v !== null) url.searchParams.set(k, v);
  }
  const headers = {};
  if (token()) headers.Authorization = 'Bearer ' + token();
  const init = {headers};
  if (body !== undefined) {
    init.method = 'POST';
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(url, init);
  const text = await resp.text();
  let json = null;
  try { json = JSON.parse(text); } catch (e) { json = null; }
  if (!resp.ok) {
    const msg = json && json.error ? json.error.message : text;
    throw new ApiError(resp.status, msg);
  }
  return json;
}

// A failed call: ask for the token on 401/403, else say what failed.
function showError(container, err) {
  if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
    askToken(container, err.status === 403 ? 'That token was refused.' : null);
    return;
  }
  container.append(el('p', {className: 'error'}, 'Error: ' + err.message));
}

function askToken(container, note) {
  const input = el('input', {type: 'password', id: 'token', autocomplete: 'off', size: 40});
  const form = el('form', {id: 'token-form', onsubmit: (ev) => {
    ev.preventDefault();
    sessionStorage.setItem('tracehealth-token', input.value.trim());
    route();
  }}, el('label', {}, 'Bearer token (--query_token_file)', input), el('button', {type: 'submit'}, 'Use token'));
  clear(container).append(el('section', {}, el('h2', {}, 'This server needs a token'),
      note ? el('p', {className: 'error'}, note) : null, form));
}

// ---- Fleet -------------------------------------------------------------

const SORTS = {
  host: 'HOST_SORT_HOST_ID', risk: 'HOST_SORT_RISK', latency: 'HOST_SORT_ATTACH_LATENCY',
  margin: 'HOST_SORT_MARGIN', threads: 'HOST_SORT_THREADS', seen: 'HOST_SORT_LAST_SEEN',
};

function fleetState() {
  const q = new URLSearchParams(location.search);
  return {
    selector: q.get('selector') || '', min_risk: q.get('min_risk') || '',
    kernel: q.get('kernel') || '', stale: q.get('stale') || '',
    sort: q.get('sort') || 'risk', reverse: q.get('reverse') === '1',
    offset: Number(q.get('offset') || 0), limit: Number(q.get('limit') || 50),
  };
}

function setFleetState(s) {
  const q = new URLSearchParams();
  for (const k of ['selector', 'min_risk', 'kernel', 'stale', 'sort']) if (s[k]) q.set(k, s[k]);
  if (s.reverse) q.set('reverse', '1');
  if (s.offset) q.set('offset', s.offset);
  if (s.limit !== 50) q.set('limit', s.limit);
  const qs = q.toString();
  history.pushState(null, '', '/' + (qs ? '?' + qs : ''));
  route();
}

async function showFleet(main) {
  const s = fleetState();
  const summaryBox = el('div', {id: 'summary'});
  const stripBox = el('section', {id: 'strip-section'});
  const tableBox = el('section', {id: 'hosts-section'});
  const alertsBox = el('section', {id: 'alerts-section'});
  main.append(el('h1', {}, 'Fleet'), summaryBox, stripBox, tableBox, alertsBox);
  try {
    const [summary, hosts, alerts] = await Promise.all([
      api('/api/v1/summary', {'hosts.labels': s.selector, strip_cells: STRIP_CELLS, worst: 1}),
      api('/api/v1/hosts', {
        'hosts.labels': s.selector, min_risk: s.min_risk, kernel_prefix: s.kernel,
        stale: s.stale, sort: SORTS[s.sort] || SORTS.risk, reverse: s.reverse ? 'true' : '',
        offset: s.offset, limit: s.limit,
      }),
      api('/api/v1/alerts', {state: 'ALERT_STATE_FIRING', limit: 200}),
    ]);
    renderSummary(summaryBox, summary);
    renderStrip(stripBox, summary);
    renderHostTable(tableBox, s, hosts);
    renderAlerts(alertsBox, alerts, 'Firing alerts');
  } catch (err) {
    clear(main);
    showError(main, err);
  }
}

function renderSummary(box, summary) {
  const cards = el('div', {className: 'cards', id: 'risk-counts'});
  cards.append(el('div', {className: 'card'}, el('div', {className: 'n', id: 'count-hosts'}, fmt(summary.hosts)),
      el('div', {className: 'l'}, 'hosts')));
  for (const rc of summary.by_risk) {
    cards.append(el('div', {className: 'card risk-' + rc.risk, dataset: {risk: rc.risk}},
        el('div', {className: 'n', id: 'count-' + rc.risk}, fmt(rc.hosts)),
        el('div', {className: 'l'}, RISK_TEXT[rc.risk])));
  }
  cards.append(el('div', {className: 'card'}, el('div', {className: 'n', id: 'count-stale'}, fmt(summary.stale_hosts)),
      el('div', {className: 'l'}, 'stale')));
  cards.append(el('div', {className: 'card'}, el('div', {className: 'n', id: 'count-firing'}, fmt(summary.firing_alerts)),
      el('div', {className: 'l'}, 'firing alerts')));
  box.append(cards);
}

function renderStrip(box, summary) {
  box.append(el('h2', {}, 'Hosts by worst margin'));
  const strip = el('div', {className: 'strip', id: 'strip'});
  for (const c of summary.margin_strip) {
    const range = c.max_margin === undefined ? 'no threshold applies'
        : 'margin ' + fmt(c.min_margin, 3) + '–' + fmt(c.max_margin, 3);
    const title = (c.hosts > 1 ? c.hosts + ' hosts from ' : '') + c.first_host_id + ': ' + range;
    const a = el('a', {href: hostHref(c.first_host_id), title});
    a.style.background = marginColor(c.max_margin);
    strip.append(a);
  }
  const per = summary.margin_strip.length ? Math.ceil(summary.hosts / summary.margin_strip.length) : 0;
  box.append(strip, el('p', {className: 'legend'},
      'Each cell: ' + (per > 1 ? per + ' hosts' : 'one host') +
      ', coloured by the largest predicted / threshold ratio (green 0, red 2 or more; grey: no threshold applies). Worst first.'));
}

function renderHostTable(box, s, resp) {
  const selector = el('input', {id: 'f-selector', value: s.selector, placeholder: 'role=db,zone=~us-.*', size: 28});
  const minRisk = el('select', {id: 'f-risk'}, el('option', {value: ''}, 'any'),
      ...RISKS.slice(0, 4).map((r) => el('option', {value: r, selected: r === s.min_risk}, '≥ ' + RISK_TEXT[r])));
  const kernel = el('input', {id: 'f-kernel', value: s.kernel, placeholder: '6.16', size: 10});
  const stale = el('select', {id: 'f-stale'}, el('option', {value: ''}, 'any'),
      el('option', {value: 'true', selected: s.stale === 'true'}, 'stale only'),
      el('option', {value: 'false', selected: s.stale === 'false'}, 'fresh only'));
  const limit = el('select', {id: 'f-limit'},
      ...PAGE_SIZES.map((n) => el('option', {value: n, selected: n === s.limit}, n + ' a page')));
  const apply = () => setFleetState(Object.assign({}, s, {
    selector: selector.value.trim(), min_risk: minRisk.value, kernel: kernel.value.trim(),
    stale: stale.value, limit: Number(limit.value), offset: 0,
  }));
  const filters = el('form', {className: 'filters', id: 'filters', onsubmit: (ev) => { ev.preventDefault(); apply(); }},
      el('label', {}, 'Label selector', selector), el('label', {}, 'Risk', minRisk),
      el('label', {}, 'Kernel starts with', kernel), el('label', {}, 'Staleness', stale),
      el('label', {}, 'Page', limit), el('button', {type: 'submit', id: 'f-apply'}, 'Apply'));

  const cols = [
    ['Host', 'host'], ['Labels', null], ['Kernel', null], ['Threads', 'threads', 'num'],
    ['Attach latency', 'latency', 'num'], ['Risk', 'risk'], ['Worst margin', 'margin', 'num'],
    ['Pool budget', null, 'num'], ['Purge', null, 'num'], ['Last seen', 'seen'],
  ];
  const head = el('tr', {}, ...cols.map(([name, key, cls]) => {
    if (!key) return el('th', {className: cls || ''}, name);
    const sorted = s.sort === key;
    return el('th', {
      className: ['sortable', cls || '', sorted ? 'sorted' : '', sorted && s.reverse ? 'rev' : ''].join(' '),
      dataset: {sort: key}, title: 'sort by ' + name.toLowerCase(),
      onclick: () => setFleetState(Object.assign({}, s, {sort: key, reverse: sorted ? !s.reverse : false, offset: 0})),
    }, name);
  }));
  const body = el('tbody', {});
  for (const h of resp.hosts) {
    body.append(el('tr', {dataset: {host: h.host_id}},
        el('td', {className: 'host'}, el('a', {href: hostHref(h.host_id)}, h.host_id)),
        el('td', {className: 'labels'}, labelText(h.labels)),
        el('td', {}, h.kernel_release === undefined ? '–' : h.kernel_release),
        el('td', {className: 'num'}, fmt(h.threads)),
        el('td', {className: 'num'}, fmtSeconds(h.attach_latency_seconds)),
        el('td', {className: 'risk'}, riskBadge(h.worst_risk)),
        el('td', {className: 'num margin'}, fmt(h.worst_margin, 3)),
        el('td', {className: 'num'}, h.pool_budget_ratio === undefined ? '–' : fmt(h.pool_budget_ratio * 100, 1) + ' %'),
        el('td', {className: 'num'}, fmtSeconds(h.purge_seconds)),
        el('td', {}, fmtTime(h.last_seen), h.stale ? el('span', {className: 'badge'}, 'stale') : null)));
  }
  const first = resp.hosts.length ? s.offset + 1 : 0;
  const last = s.offset + resp.hosts.length;
  const pager = el('div', {className: 'pager'},
      el('button', {id: 'prev', disabled: s.offset === 0,
        onclick: () => setFleetState(Object.assign({}, s, {offset: Math.max(0, s.offset - s.limit)}))}, '← previous'),
      el('span', {id: 'page-info'}, fmt(first) + '–' + fmt(last) + ' of ' + fmt(resp.matched_hosts) + ' hosts'),
      el('button', {id: 'next', disabled: last >= resp.matched_hosts,
        onclick: () => setFleetState(Object.assign({}, s, {offset: s.offset + s.limit}))}, 'next →'));
  box.append(el('h2', {}, 'Hosts'), filters,
      el('table', {id: 'hosts'}, el('thead', {}, head), body), pager);
}

function renderAlerts(box, resp, title) {
  box.append(el('h2', {}, title));
  if (!resp.alerts.length) {
    box.append(el('p', {className: 'muted', id: 'no-alerts'}, 'None.'));
    return;
  }
  const body = el('tbody', {});
  for (const a of resp.alerts) {
    body.append(el('tr', {},
        el('td', {}, a.rule), el('td', {}, el('a', {href: hostHref(a.host_id)}, a.host_id)),
        el('td', {}, a.state.replace('ALERT_STATE_', '').toLowerCase()), el('td', {}, a.severity),
        el('td', {}, a.annotations.summary || a.annotations.description || ''),
        el('td', {}, fmtTime(a.fired_at || a.active_since))));
  }
  box.append(el('table', {className: 'alerts'},
      el('thead', {}, el('tr', {}, ...['Rule', 'Host', 'State', 'Severity', 'Summary', 'Since'].map((t) => el('th', {}, t)))),
      body));
}

// ---- What-if -----------------------------------------------------------

function showWhatIf(main) {
  const q = new URLSearchParams(location.search);
  const field = (id, label, input) => { input.id = id; return el('label', {}, label, input); };
  const hosts = el('input', {value: q.get('host') || '', placeholder: 'db-17, db-18', size: 24});
  const selector = el('input', {placeholder: 'role=db', size: 20});
  const kind = el('select', {}, ...PROBE_KINDS.map((k) => el('option', {value: k}, k.replace('PROBE_KIND_', '').toLowerCase())));
  const threads = el('input', {type: 'number', min: 0, step: 1, placeholder: 'host\'s'});
  const batch = el('input', {type: 'number', min: 1, step: 1, placeholder: '32'});
  const preempt = el('select', {}, el('option', {value: ''}, 'host\'s'),
      ...PREEMPT_MODES.map((m) => el('option', {value: m}, m.replace('PREEMPT_MODE_', '').toLowerCase())));
  const kernel = el('input', {placeholder: 'host\'s, e.g. 6.19.0', size: 14});
  const out = el('div', {id: 'whatif-result'});
  const form = el('form', {className: 'whatif', id: 'whatif', onsubmit: async (ev) => {
    ev.preventDefault();
    const what = {};
    if (threads.value !== '') what.threads = threads.value;
    if (batch.value !== '') what.batch = Number(batch.value);
    if (preempt.value) what.preempt_mode = preempt.value;
    if (kernel.value.trim()) what.kernel_release = kernel.value.trim();
    const ids = hosts.value.split(',').map((s) => s.trim()).filter((s) => s);
    const req = {hosts: {host_ids: ids, labels: selector.value.trim()}, probe_kind: kind.value, what_if: what, limit: 100};
    clear(out);
    try {
      renderAnswers(out, await api('/api/v1/predict', null, req));
    } catch (err) {
      showError(out, err);
    }
  }},
  field('w-hosts', 'Host ids (comma-separated)', hosts), field('w-selector', 'or label selector', selector),
  field('w-kind', 'Probe kind', kind), field('w-threads', 'Threads', threads), field('w-batch', 'Batch', batch),
  field('w-preempt', 'Preemption', preempt), field('w-kernel', 'Kernel release', kernel),
  el('button', {type: 'submit', id: 'w-submit'}, 'Predict'));
  main.append(el('h1', {}, 'What-if'),
      el('section', {}, el('p', {className: 'muted'}, 'The models run again on each host\'s stored snapshot with these inputs replaced; empty fields keep the host\'s own.'), form),
      out);
}

function renderAnswers(out, resp) {
  const body = el('tbody', {});
  for (const a of resp.answers) {
    const p = a.prediction;
    body.append(el('tr', {dataset: {host: a.host_id}},
        el('td', {}, el('a', {href: hostHref(a.host_id)}, a.host_id)),
        el('td', {className: 'num latency', dataset: {seconds: p.latency_seconds}}, fmtSeconds(p.latency_seconds)),
        el('td', {className: 'num'}, fmt(p.passes)),
        el('td', {}, riskBadge(p.risk)),
        el('td', {}, a.recommendation),
        el('td', {className: 'summary'}, p.summary)));
  }
  out.append(el('section', {},
      el('p', {id: 'whatif-matched'}, fmt(resp.matched_hosts) + ' hosts matched' +
          (resp.unknown_hosts.length ? '; unknown: ' + resp.unknown_hosts.join(', ') : '')),
      el('table', {id: 'answers'}, el('thead', {}, el('tr', {},
          ...['Host', 'Attach latency', 'Passes', 'Risk', 'Recommendation', 'Explanation'].map((t) => el('th', {}, t)))), body)));
}

// ---- Router ------------------------------------------------------------

function route() {
  const path = location.pathname;
  const nav = clear(document.getElementById('nav'));
  for (const v of VIEWS) {
    if (v.name) nav.append(el('a', {href: v.href, className: v.match(path) ? 'active' : ''}, v.name));
  }
  const main = clear(document.getElementById('main'));
  const view = VIEWS.find((v) => v.match(path));
  if (!view) {
    main.append(el('p', {className: 'error'}, 'No such page.'));
    return;
  }
  view.show(main);
}

window.addEventListener('popstate', route);
document.addEventListener('DOMContentLoaded', route);
