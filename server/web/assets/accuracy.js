// The fleet page's accuracy view (/accuracy): per hardware class, its
// calibrations and how its hosts' observed kernel events compare with what
// was predicted, before and after calibration (GET /api/v1/accuracy).
// Loaded before app.js, whose helpers (el, api, fmt...) it calls when the
// view is shown. Every host-supplied string is put into the page with
// textContent.
'use strict';

async function showAccuracy(main) {
  main.append(el('h1', {}, 'Accuracy'), el('p', {className: 'muted'},
      'Observed soft lockups, RCU stalls and hung tasks of the last 7 days against the prediction current when the ' +
      'kernel logged them; ratio = observed / predicted seconds, then with the constants calibrated now.'));
  let resp;
  try {
    resp = await api('/api/v1/accuracy');
  } catch (err) {
    showError(main, err);
    return;
  }
  const ratio = (v) => (v === undefined || v === null ? '–' : fmt(v, 2) + '×');
  // What the class's hosts are priced with: the price of a visit at the
  // fewest threads and, where its canaries' curve grows, its last level.
  const priced = (c) => {
    if (!c.canaries) return '–';
    let s = fmtSeconds(c.c_visit_seconds);
    const levels = c.visit_levels || [];
    if (levels.length) {
      const last = levels[levels.length - 1];
      s += ', ×' + fmt(last.factor, 2) + ' past ' + fmt(Math.round(last.from_tasks)) + ' tasks';
    }
    return s;
  };
  const body = el('tbody', {});
  for (const c of resp.classes) {
    body.append(el('tr', {dataset: {cls: c.hardware_class}},
        el('td', {className: 'class'}, c.hardware_class),
        el('td', {className: 'num'}, fmt(c.hosts)), el('td', {className: 'num'}, fmt(c.canaries)),
        el('td', {className: 'num'}, c.canaries ? fmtSeconds(c.c_visit_median_seconds) : '–'),
        el('td', {className: 'num priced'}, priced(c)),
        el('td', {className: 'num events'}, fmt(c.events)), el('td', {className: 'num predicted'}, fmt(c.events_predicted)),
        el('td', {className: 'num missed'}, fmt(c.events_missed)), el('td', {className: 'num'}, fmt(c.events_unknown)),
        el('td', {className: 'num'}, ratio(c.median_ratio)), el('td', {className: 'num'}, ratio(c.median_calibrated_ratio))));
  }
  main.append(el('section', {},
      el('table', {id: 'accuracy'}, el('thead', {}, el('tr', {},
          ...['Hardware class', 'Hosts', 'Canaries', 'c_visit (median)', 'Priced with', 'Events', 'Predicted', 'Missed',
            'Not comparable', 'Median ratio', 'Calibrated'].map((t) => el('th', {}, t)))), body),
      el('p', {className: 'muted', id: 'unclassified'},
          fmt(resp.events_unclassified) + ' events of hosts whose class is not known')));
}
