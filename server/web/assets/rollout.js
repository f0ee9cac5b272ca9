// The fleet page's rollout view (/rollout): a rollout plan of a probe over
// the matched hosts, from GET /api/v1/rollout (server/query/rollout_plan.h):
// the hosts by class and the waves, safe first. Loaded before app.js, whose
// helpers (el, api, fmt...) it calls when the view is shown. Every
// host-supplied string is put into the page with textContent.
'use strict';

// Every tracehealth.v1.PlanClass in words (server/web/enum_names_test.sh).
const PLAN_CLASS_TEXT = {
  PLAN_CLASS_SAFE: 'safe', PLAN_CLASS_OVER_BUDGET: 'over budget',
  PLAN_CLASS_LOCKUP_RISK: 'lockup risk', PLAN_CLASS_UNKNOWN: 'unknown',
  PLAN_CLASS_UNSPECIFIED: 'unclassified',
};

// The form's values live in the query string, so that a plan is a link.
function showRollout(main) {
  const q = new URLSearchParams(location.search);
  const field = (id, label, input) => { input.id = id; return el('label', {}, label, input); };
  const kind = el('select', {}, ...PROBE_KINDS.map((k) => el('option',
      {value: k, selected: k === q.get('probe_kind')}, k.replace('PROBE_KIND_', '').toLowerCase())));
  const selector = el('input', {value: q.get('selector') || '', placeholder: 'role=db', size: 20});
  const budget = el('input', {type: 'number', min: 0, step: 'any', value: q.get('max_latency') || '2', size: 6});
  const wave = el('input', {type: 'number', min: 0, step: 1, value: q.get('wave_hosts') || '20', size: 6});
  const out = el('div', {id: 'rollout-result'});
  const form = el('form', {className: 'whatif', id: 'rollout', onsubmit: (ev) => {
    ev.preventDefault();
    const s = new URLSearchParams({probe_kind: kind.value, max_latency: budget.value, wave_hosts: wave.value});
    if (selector.value.trim()) s.set('selector', selector.value.trim());
    history.pushState(null, '', '/rollout?' + s.toString());
    route();
  }},
  field('r-kind', 'Probe kind', kind), field('r-selector', 'Label selector', selector),
  field('r-budget', 'Max latency (s)', budget), field('r-wave', 'Hosts listed per wave', wave),
  el('button', {type: 'submit', id: 'r-submit'}, 'Plan'));
  main.append(el('h1', {}, 'Rollout plan'),
      el('section', {}, el('p', {className: 'muted'}, 'Each host sorted by its predicted attach: safe hosts first, ' +
          'then over-budget ones outside peak, then lockup-risk ones after a mitigation; hosts of unknown risk are held back.'), form),
      out);
  if (q.has('max_latency')) planRollout(out, kind.value, selector.value.trim(), budget.value, wave.value);
}

async function planRollout(out, kind, selector, seconds, waveHosts) {
  let plan;
  try {
    const resp = await api('/api/v1/rollout', {
      probe_kind: kind, 'hosts.labels': selector, 'plan.max_latency': seconds + 's',
      'plan.wave_host_ids': waveHosts,
    });
    plan = resp.plan;
  } catch (err) {
    showError(out, err);
    return;
  }
  const cards = el('div', {className: 'cards', id: 'plan-counts'});
  for (const [key, cls] of [['safe', 'PLAN_CLASS_SAFE'], ['over_budget', 'PLAN_CLASS_OVER_BUDGET'],
    ['lockup_risk', 'PLAN_CLASS_LOCKUP_RISK'], ['unknown', 'PLAN_CLASS_UNKNOWN']]) {
    cards.append(el('div', {className: 'card', dataset: {planClass: cls}},
        el('div', {className: 'n', id: 'plan-' + key}, fmt(plan[key])), el('div', {className: 'l'}, PLAN_CLASS_TEXT[cls])));
  }
  const body = el('tbody', {});
  for (const w of plan.waves) {
    const hosts = el('td', {className: 'hosts'});
    w.host_ids.forEach((id, i) => hosts.append(i ? ', ' : '', el('a', {href: hostHref(id)}, id)));
    body.append(el('tr', {dataset: {planClass: w.plan_class}},
        el('td', {className: 'num'}, fmt(w.number)), el('td', {}, PLAN_CLASS_TEXT[w.plan_class]),
        el('td', {className: 'num'}, fmt(w.hosts)), el('td', {className: 'num'}, fmtSeconds(w.max_latency_seconds)),
        el('td', {className: 'action'}, w.action), hosts));
  }
  out.append(el('section', {}, el('h2', {}, 'Hosts by class'), cards, el('h2', {}, 'Waves'),
      el('table', {id: 'waves'}, el('thead', {}, el('tr', {},
          ...['Wave', 'Class', 'Hosts', 'Longest attach', 'Action', 'First hosts'].map((t) => el('th', {}, t)))), body)));
}
