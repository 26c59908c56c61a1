-- luacrawl.dashboard_page: the dashboard's page (dashboard.lua serves it): the HTML,
-- its stylesheet and its script, nothing fetched from elsewhere ({{QUERY}}: the token
-- as a query, when reading needs it). The script builds the
-- DOM with textContent only, so nothing a crawled site sent is ever read as HTML.
local M = {}

M.html = [==[<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<!-- META -->
<title>luacrawl dashboard</title>
<link rel="stylesheet" href="app.css{{QUERY}}">
<script src="chart.js{{QUERY}}"></script>
<script src="app.js{{QUERY}}" defer></script>
</head>
<body>
<header>
  <h1>luacrawl</h1>
  <span id="state" class="state">connecting</span>
  <span class="buttons">
    <button id="pause" type="button">Pause</button>
    <button id="resume" type="button">Resume</button>
    <button id="stop" type="button">Stop</button>
  </span>
  <span id="command-result"></span>
</header>
<p id="charts-note" class="note" hidden></p>
<p id="source-note" class="note" hidden></p>
<section class="numbers">
  <div><b id="n-pages">–</b><span>pages</span></div>
  <div><b id="n-pages_per_s">–</b><span>pages/s</span></div>
  <div><b id="n-requests">–</b><span>requests</span></div>
  <div><b id="n-bytes">–</b><span>bytes</span></div>
  <div><b id="n-errors_total">–</b><span>errors</span></div>
  <div><b id="n-retries">–</b><span>retries</span></div>
  <div><b id="n-redirects">–</b><span>redirects</span></div>
  <div><b id="n-items">–</b><span>items</span></div>
  <div><b id="n-frontier">–</b><span>queued</span></div>
  <div><b id="n-in_flight">–</b><span>in flight</span></div>
  <div><b id="n-hosts_total">–</b><span>hosts</span></div>
  <div><b id="n-elapsed">–</b><span>seconds</span></div>
</section>
<section class="charts">
  <div><h2>Pages/s and bytes/s</h2><canvas id="chart-rate"></canvas></div>
  <div><h2>Statuses per second</h2><canvas id="chart-statuses"></canvas></div>
  <div><h2>Errors per second</h2><canvas id="chart-errors"></canvas></div>
  <div><h2>Depths</h2><canvas id="chart-depths"></canvas></div>
</section>
<section class="tables">
  <div><h2>Statuses</h2><table id="statuses"><thead><tr><th>status</th><th>responses</th></tr></thead><tbody></tbody></table></div>
  <div><h2>Errors by kind</h2><table id="errors"><thead><tr><th>kind</th><th>errors</th></tr></thead><tbody></tbody></table></div>
  <div><h2>Depths</h2><table id="depths"><thead><tr><th>depth</th><th>pages</th></tr></thead><tbody></tbody></table></div>
</section>
<section id="workers-section" hidden>
<h2>Workers</h2>
<table id="workers"><thead><tr><th>worker</th><th>host</th><th>pid</th><th>state</th><th>pages</th><th>pages/s</th><th>leased</th><th>in flight</th><th>errors</th><th>heard from (s ago)</th></tr></thead><tbody></tbody></table>
</section>
<h2>Hosts</h2>
<table id="hosts"><thead><tr><th>host</th><th>pages</th><th>queued</th><th>in flight</th><th>delay (s)</th><th>backoff (s)</th><th>errors</th><th>robots.txt</th></tr></thead><tbody></tbody></table>
<h2>Latest errors</h2>
<table id="latest-errors"><thead><tr><th>kind</th><th>URL</th><th>message</th></tr></thead><tbody></tbody></table>
<h2>Latest items</h2>
<ul id="latest-items"></ul>
</body>
</html>
]==]

M.css = [==[
body { font: 14px system-ui, sans-serif; margin: 1em 2em; color: #222; }
header { display: flex; gap: 1em; align-items: baseline; }
h1 { font-size: 1.4em; margin: 0; }
h2 { font-size: 1.05em; margin: 1em 0 .3em; }
.state { padding: .1em .6em; border-radius: .8em; background: #ddd; }
.state.running { background: #c8ecc8; }
.state.paused { background: #f6e3a1; }
.state.stopped, .state.offline { background: #f3c0c0; }
.note { color: #8a5a00; }
.numbers { display: flex; flex-wrap: wrap; gap: .6em; margin: 1em 0; }
.numbers div { border: 1px solid #ddd; border-radius: 4px; padding: .4em .8em; min-width: 6em; }
.numbers b { display: block; font-size: 1.3em; }
.numbers span { color: #666; font-size: .85em; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 1em; }
.charts canvas { max-height: 220px; }
.tables { display: flex; flex-wrap: wrap; gap: 2em; }
table { border-collapse: collapse; }
th, td { text-align: left; padding: .15em .6em; border-bottom: 1px solid #eee; }
td { font-variant-numeric: tabular-nums; }
#latest-errors td:nth-child(2), #latest-items li { word-break: break-all; }
#latest-items { font-family: monospace; font-size: .9em; }
]==]

M.js = [==[
'use strict';
(function () {
  const meta = (name) => {
    const m = document.querySelector('meta[name="' + name + '"]');
    return m ? m.getAttribute('content') : '';
  };
  const token = meta('luacrawl-token');
  const query = new URLSearchParams(location.search).get('token');
  const charts = {};

  const text = (el, s) => { el.textContent = s === undefined || s === null ? '' : String(s); };
  const byId = (id) => document.getElementById(id);
  const num = (v) => (typeof v === 'number' ? v : 0);

  function fill(tbody, rows) {
    tbody.replaceChildren();
    for (const row of rows) {
      const tr = document.createElement('tr');
      for (const cell of row) {
        const td = document.createElement('td');
        text(td, cell);
        tr.appendChild(td);
      }
      tbody.appendChild(tr);
    }
  }

  const countRows = (t) => Object.keys(t || {}).sort().map((k) => [k, t[k]]);

  function showNumbers(st) {
    const pts = (st.series && st.series.points) || [];
    const last = pts.length > 1 ? pts[pts.length - 2] : null; // the last whole second
    // A fleet's last seconds wait for its workers' next publications: their own rates.
    const rate = st.workers ? num(st.pages_per_s)
      : last ? last.pages : num(st.pages) / Math.max(num(st.elapsed), 1e-9);
    const values = {
      pages: st.pages, requests: st.requests, bytes: st.bytes, errors_total: st.errors_total,
      retries: st.retries, redirects: st.redirects, items: st.items, frontier: st.frontier,
      in_flight: st.in_flight, hosts_total: st.hosts_total,
      elapsed: st.elapsed === undefined ? undefined : Math.round(st.elapsed),
      pages_per_s: Math.round(rate * 10) / 10,
    };
    for (const k of Object.keys(values)) {
      const el = byId('n-' + k);
      const v = values[k];
      text(el, v === undefined ? '–' : v);
      el.dataset.value = v === undefined ? '' : String(v);
    }
    const state = byId('state');
    let now = st.stop_reason ? 'stopped' : st.paused ? 'paused' : 'running';
    if (st.read_only) now = st.finished ? 'finished' : 'not finished';
    text(state, now);
    state.className = 'state ' + now;
  }

  function showTables(st) {
    fill(document.querySelector('#statuses tbody'), countRows(st.statuses));
    fill(document.querySelector('#errors tbody'), countRows(st.errors));
    fill(document.querySelector('#depths tbody'),
      Object.keys(st.depths || {}).sort((a, b) => a - b).map((k) => [k, st.depths[k]]));
    const hosts = Object.keys(st.hosts || {}).map((name) => [name, st.hosts[name]]);
    hosts.sort((a, b) => num(b[1].pages) + num(b[1].errors) - num(a[1].pages) - num(a[1].errors) ||
      (a[0] < b[0] ? -1 : 1));
    fill(document.querySelector('#hosts tbody'), hosts.map(([name, h]) =>
      [name, h.pages, h.queued, h.in_flight, h.delay, h.backoff, h.errors, h.robots]));
    fill(document.querySelector('#latest-errors tbody'),
      (st.latest_errors || []).map((e) => [e.kind, e.url, e.message]));
    // A fleet's dashboard (luacrawl dashboard --redis): its workers.
    byId('workers-section').hidden = !st.workers;
    fill(document.querySelector('#workers tbody'), (st.workers || []).map((w) => [w.worker, w.host, w.pid,
      w.state, w.pages, Math.round(num(w.pages_per_s) * 10) / 10, w.leased, w.in_flight, w.errors_total,
      Math.round(num(w.heard_s_ago))]));
    // Where the numbers come from, when not from this process's crawl.
    const source = st.crawl_id !== undefined ? 'crawl ' + st.crawl_id + ' in Redis, '
      + num(st.workers_running) + ' worker(s) running, ' + num(st.leased) + ' requests leased'
      : st.state_file !== undefined ? 'state file ' + st.state_file + ' (read-only)' : '';
    const note = byId('source-note');
    text(note, source + (st.read_error ? ' (last read failed: ' + st.read_error + ')' : ''));
    note.hidden = !source;
    for (const name of ['pause', 'resume', 'stop']) byId(name).hidden = !!st.read_only;
    const items = byId('latest-items');
    items.replaceChildren();
    for (const item of st.latest_items || []) {
      const li = document.createElement('li');
      text(li, JSON.stringify(item));
      items.appendChild(li);
    }
  }

  const palette = ['#3366cc', '#dc3912', '#ff9900', '#109618', '#990099', '#0099c6',
    '#dd4477', '#66aa00', '#b82e2e', '#316395'];

  function makeChart(id, type, stacked, axes) {
    const scales = { x: { stacked: stacked }, y: { stacked: stacked, beginAtZero: true } };
    if (axes) scales.y2 = { position: 'right', beginAtZero: true, grid: { drawOnChartArea: false } };
    charts[id] = new window.Chart(byId(id), {
      type: type, data: { labels: [], datasets: [] },
      options: { animation: false, responsive: true, maintainAspectRatio: false,
        elements: { point: { radius: 0 } }, scales: scales },
    });
  }

  function setSeries(id, labels, sets) {
    const chart = charts[id];
    if (!chart) return;
    chart.data.labels = labels;
    chart.data.datasets = sets.map((s, i) => Object.assign({
      borderColor: palette[i % palette.length], backgroundColor: palette[i % palette.length],
      borderWidth: 1.5, fill: false,
    }, s));
    chart.update('none');
  }

  function keyedSets(pts, field) {
    const keys = new Set();
    for (const p of pts) for (const k of Object.keys(p[field] || {})) keys.add(k);
    return [...keys].sort().map((k) => ({ label: k, data: pts.map((p) => num((p[field] || {})[k])) }));
  }

  function showCharts(st) {
    const pts = (st.series && st.series.points) || [];
    const labels = pts.map((p) => p.t);
    setSeries('chart-rate', labels, [
      { label: 'pages/s', data: pts.map((p) => num(p.pages)) },
      { label: 'bytes/s', data: pts.map((p) => num(p.bytes)), yAxisID: 'y2' },
    ]);
    setSeries('chart-statuses', labels, keyedSets(pts, 'statuses'));
    setSeries('chart-errors', labels, keyedSets(pts, 'errors'));
    const depths = Object.keys(st.depths || {}).sort((a, b) => a - b);
    setSeries('chart-depths', depths, [{ label: 'pages', data: depths.map((k) => st.depths[k]) }]);
  }

  function show(st) {
    showNumbers(st);
    showTables(st);
    showCharts(st);
    document.body.dataset.updates = String((Number(document.body.dataset.updates) || 0) + 1);
  }

  function command(name) {
    fetch(name + (query ? '?token=' + encodeURIComponent(query) : ''), {
      method: 'POST', headers: { Authorization: 'Bearer ' + token },
    }).then((r) => r.text().then((t) => text(byId('command-result'), name + ': ' + t.trim())))
      .catch((e) => text(byId('command-result'), name + ': ' + e));
  }

  if (window.Chart) {
    makeChart('chart-rate', 'line', false, true);
    makeChart('chart-statuses', 'line', false);
    makeChart('chart-errors', 'line', false);
    makeChart('chart-depths', 'bar', false);
  } else {
    const note = byId('charts-note');
    text(note, 'No charts: ' + meta('luacrawl-charts'));
    note.hidden = false;
  }
  for (const name of ['pause', 'resume', 'stop']) byId(name).addEventListener('click', () => command(name));

  const events = new EventSource('events' + (query ? '?token=' + encodeURIComponent(query) : ''));
  events.onmessage = (e) => show(JSON.parse(e.data));
  events.onerror = () => {
    const state = byId('state');
    text(state, 'offline');
    state.className = 'state offline';
  };
})();
]==]

return M
