-- luacrawl.report_page: the page luacrawl report writes (cli_report.lua): one HTML file
-- that needs no network, made from a report table (the crawl's stats, as cli_report.lua
-- reads them). Numbers and tables are written here, every text of a crawled site
-- escaped; the charts are drawn by Chart.js (Debian's libjs-chart.js, inlined) from the
-- series put in the page as JSON with every "<" escaped, so no text ends the script.
local core = require "luacrawl.core"
local dashboard = require "luacrawl.dashboard"

local M = {}

local esc = dashboard.escape_html

local function num(n)
  n = tonumber(n) or 0
  if n ~= math.floor(n) then return ("%.2f"):format(n) end
  return tostring(math.floor(n))
end

-- The keys of t sorted (numbers as numbers), each with its value.
local function sorted(t, by_value)
  local list = {}
  for k, v in pairs(t or {}) do list[#list + 1] = { k, v } end
  table.sort(list, function(a, b)
    if by_value and a[2] ~= b[2] then return a[2] > b[2] end
    local x, y = tonumber(a[1]), tonumber(b[1])
    if x and y then return x < y end
    return tostring(a[1]) < tostring(b[1])
  end)
  return list
end

local function table_html(id, heads, rows)
  local out = { ('<table id="%s"><thead><tr>'):format(id) }
  for _, h in ipairs(heads) do out[#out + 1] = "<th>" .. esc(h) .. "</th>" end
  out[#out + 1] = "</tr></thead><tbody>"
  for _, r in ipairs(rows) do
    out[#out + 1] = "<tr>"
    for _, c in ipairs(r) do out[#out + 1] = "<td>" .. esc(c) .. "</td>" end
    out[#out + 1] = "</tr>"
  end
  if #rows == 0 then out[#out + 1] = ('<tr><td colspan="%d">none</td></tr>'):format(#heads) end
  out[#out + 1] = "</tbody></table>"
  return table.concat(out)
end

local function size_label(k)
  local b = 2 ^ tonumber(k)
  if b >= 2 ^ 30 then return ("<= %g GiB"):format(b / 2 ^ 30) end
  if b >= 2 ^ 20 then return ("<= %g MiB"):format(b / 2 ^ 20) end
  return ("<= %g KiB"):format(b / 1024)
end

local NUMBERS = {
  { "pages", "pages" }, { "requests", "requests" }, { "bytes", "bytes" }, { "errors_total", "errors" },
  { "retries", "retries" }, { "redirects", "redirects" }, { "duplicates", "duplicate URLs" },
  { "content_duplicates", "duplicate contents" }, { "elapsed", "seconds" }, { "pages_per_s", "pages/s" },
}

local CSS = [==[
body { font: 14px/1.4 system-ui, sans-serif; margin: 1em 2em; color: #222; }
h1 { margin-bottom: 0; } .sub { color: #666; margin-top: .2em; }
.numbers { display: flex; flex-wrap: wrap; gap: 1em; margin: 1em 0; }
.numbers div { background: #f3f5f8; padding: .5em 1em; border-radius: 6px; }
.numbers b { display: block; font-size: 1.4em; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 1em; }
.charts canvas { max-height: 240px; }
.tables { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 1em; }
table { border-collapse: collapse; margin-bottom: 1em; } td, th { padding: 2px 8px; text-align: left; }
tbody tr:nth-child(odd) { background: #f6f6f6; } td { word-break: break-all; }
.note { color: #a40; }
]==]

-- The charts' script: reads the JSON of #report-data; every label and value it gives
-- Chart.js is data, never markup.
local SCRIPT = [==[
(function () {
  const data = JSON.parse(document.getElementById('report-data').textContent);
  if (!window.Chart) { document.getElementById('charts-note').hidden = false; return; }
  const list = (x) => (Array.isArray(x) ? x : []); // an empty list comes as {}
  const w = (data.series || {}).interval || 1;
  const pts = list((data.series || {}).points);
  data.sizes = list(data.sizes);
  data.depths = list(data.depths);
  const labels = pts.map((p) => p.t);
  const palette = ['#3366cc', '#dc3912', '#ff9900', '#109618', '#990099', '#0099c6', '#dd4477', '#66aa00'];
  function keysOf(field) {
    const keys = new Set();
    pts.forEach((p) => Object.keys(p[field] || {}).forEach((k) => keys.add(k)));
    return [...keys].sort();
  }
  function perSecond(field, key) { return pts.map((p) => ((p[field] || {})[key] || 0) / w); }
  function chart(id, type, datasets, axes, xlabels) {
    const scales = { y: { beginAtZero: true, stacked: type === 'bar' }, x: { stacked: type === 'bar' } };
    if (axes) scales.y2 = { position: 'right', beginAtZero: true, grid: { drawOnChartArea: false } };
    new window.Chart(document.getElementById(id), {
      type: type, options: { animation: false, scales: scales, plugins: { legend: { position: 'bottom' } } },
      data: { labels: xlabels || labels, datasets: datasets.map((s, i) => Object.assign({
        borderColor: palette[i % palette.length], backgroundColor: palette[i % palette.length],
        pointRadius: 0, borderWidth: 1.5 }, s)) },
    });
  }
  chart('chart-rate', 'line', [
    { label: 'pages/s', data: pts.map((p) => p.pages / w) },
    { label: 'bytes/s', data: pts.map((p) => p.bytes / w), yAxisID: 'y2' },
  ], true);
  chart('chart-statuses', 'bar', keysOf('statuses').map((k) => ({ label: k, data: perSecond('statuses', k) })));
  chart('chart-errors', 'bar', keysOf('errors').map((k) => ({ label: k, data: perSecond('errors', k) })));
  chart('chart-sizes', 'bar', [{ label: 'responses', data: data.sizes.map((s) => s[1]) }], false,
    data.sizes.map((s) => s[0]));
  chart('chart-depths', 'bar', [{ label: 'responses', data: data.depths.map((s) => s[1]) }], false,
    data.depths.map((s) => s[0]));
  document.body.dataset.charts = 'drawn';
})();
]==]

-- The page of report r (cli_report.lua's table); chart_js: Chart.js's source or nil.
function M.html(r, chart_js)
  local parts = {}
  local function add(s) parts[#parts + 1] = s end
  add('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">')
  add('<meta name="viewport" content="width=device-width, initial-scale=1">')
  add("<title>luacrawl report: " .. esc(r.title) .. "</title><style>" .. CSS .. "</style>")
  if chart_js then add("<script>" .. chart_js:gsub("</(script)", "<\\/%1") .. "</script>") end
  add("</head><body><h1>luacrawl report</h1>")
  add('<p class="sub" id="about">' .. esc(r.title) .. " — " .. esc(r.about) .. "</p>")
  add('<p class="note" id="charts-note" hidden>No charts: Chart.js is not installed (Debian: libjs-chart.js).</p>')
  add('<section class="numbers">')
  for _, n in ipairs(NUMBERS) do
    if r[n[1]] ~= nil then
      add(('<div><b id="n-%s">%s</b><span>%s</span></div>'):format(n[1], esc(num(r[n[1]])), esc(n[2])))
    end
  end
  add("</section>")
  add('<section class="charts">')
  for _, c in ipairs({ { "chart-rate", "Pages/s and bytes/s" }, { "chart-statuses", "Statuses per second" },
    { "chart-errors", "Errors per second" }, { "chart-sizes", "Response sizes" }, { "chart-depths", "Depths" } }) do
    add(('<div><h2>%s</h2><canvas id="%s"></canvas></div>'):format(c[2], c[1]))
  end
  add("</section><section class=\"tables\"><div><h2>Statuses</h2>")
  local rows = {}
  for _, kv in ipairs(sorted(r.statuses)) do rows[#rows + 1] = { kv[1], num(kv[2]) } end
  add(table_html("statuses", { "status", "responses" }, rows))
  add("</div><div><h2>Errors by kind</h2>")
  rows = {}
  for _, kv in ipairs(sorted(r.errors, true)) do rows[#rows + 1] = { kv[1], num(kv[2]) } end
  add(table_html("errors", { "kind", "errors" }, rows))
  add("</div><div><h2>Depths</h2>")
  local depths = {}
  for _, kv in ipairs(sorted(r.by_depth)) do depths[#depths + 1] = { tostring(kv[1]), kv[2] } end
  rows = {}
  for _, d in ipairs(depths) do rows[#rows + 1] = { d[1], num(d[2]) } end
  add(table_html("depths", { "depth", "responses" }, rows))
  add("</div><div><h2>Sizes</h2>")
  local sizes = {}
  for _, kv in ipairs(sorted(r.by_size)) do sizes[#sizes + 1] = { size_label(kv[1]), kv[2] } end
  rows = {}
  for _, s in ipairs(sizes) do rows[#rows + 1] = { s[1], num(s[2]) } end
  add(table_html("sizes", { "body size", "responses" }, rows))
  add("</div></section><h2>Error samples</h2>")
  rows = {}
  for _, kv in ipairs(sorted(r.error_samples)) do
    for _, e in ipairs(kv[2]) do rows[#rows + 1] = { kv[1], e.url or "", e.message or "" } end
  end
  add(table_html("error-samples", { "kind", "URL", "message" }, rows))
  add("<h2>Hosts</h2>")
  rows = {}
  local hosts = {}
  for host, h in pairs(r.by_host or {}) do hosts[#hosts + 1] = { host = host, h = h } end
  table.sort(hosts, function(a, b)
    if a.h.pages ~= b.h.pages then return a.h.pages > b.h.pages end
    return a.host < b.host
  end)
  for _, x in ipairs(hosts) do rows[#rows + 1] = { x.host, num(x.h.pages), num(x.h.bytes), num(x.h.errors) } end
  local other = r.hosts_other
  if other and (other.pages or 0) + (other.errors or 0) > 0 then
    rows[#rows + 1] = { "(other hosts)", num(other.pages), num(other.bytes), num(other.errors) }
  end
  add(table_html("hosts", { "host", "responses", "bytes", "errors" }, rows))
  add("<h2>Slowest responses</h2>")
  rows = {}
  for _, s in ipairs(r.slowest or {}) do
    rows[#rows + 1] = { ("%.3f"):format(s.seconds or 0), s.url or "", num(s.status), num(s.bytes) }
  end
  add(table_html("slowest", { "seconds", "URL", "status", "bytes" }, rows))
  local data = core.json_encode({ series = r.series, sizes = sizes, depths = depths })
  add('<script type="application/json" id="report-data">' .. data:gsub("<", "\\u003c") .. "</script>")
  add("<script>" .. SCRIPT .. "</script></body></html>\n")
  return table.concat(parts)
end

return M
