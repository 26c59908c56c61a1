-- luacrawl.dashboard: lc.dashboard{listen =, token =}, the live view of a crawl. The
-- server is engine/dash.c on the loop (it never calls Lua); this side makes what it
-- serves from the crawl's stats table each time the owner publishes one: /stats.json,
-- /metrics (Prometheus text), the event the page is updated by, and the page itself
-- (dashboard_page.lua, with Chart.js from the Debian package when installed).
local core = require "luacrawl.core"
local report = require "luacrawl.crawl_report"
local page = require "luacrawl.dashboard_page"

local M = {}

M.chart_js_path = "/usr/share/javascript/chart.js/chart.min.js"
-- Hosts with a label of their own in /metrics; the others are summed as host="other".
M.max_host_labels = 20
-- What the page is sent: the last points of the time series, the busiest hosts.
local EVENT_POINTS, EVENT_HOSTS = 300, 50

local Server = {}
Server.__index = Server

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

local function escape_html(s)
  return (tostring(s):gsub("[&<>\"']", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;",
    ['"'] = "&quot;", ["'"] = "&#39;" }))
end
M.escape_html = escape_html -- report_page.lua's too

-- The page and its static parts, published once: the session's token is in the page,
-- for its commands (a page of another site cannot read it).
local function publish_page(srv)
  local chart = read_file(M.chart_js_path)
  srv.charts = chart ~= nil
  local meta = ('<meta name="luacrawl-token" content="%s"><meta name="luacrawl-charts" content="%s">')
    :format(escape_html(srv.info.token), chart and "yes" or ("no: " .. escape_html(M.chart_js_path) .. " not found"))
  local query = srv.info.reads_need_token and ("?token=" .. escape_html(srv.info.token)) or ""
  local html = page.html:gsub("<!%-%- META %-%->", function() return meta end)
    :gsub("{{QUERY}}", function() return query end)
  srv.ud:publish("/", "text/html; charset=utf-8", html)
  srv.ud:publish("/app.js", "text/javascript; charset=utf-8", page.js)
  srv.ud:publish("/app.css", "text/css; charset=utf-8", page.css)
  srv.ud:publish("/chart.js", "text/javascript; charset=utf-8",
    chart or "/* Chart.js is not installed (Debian: libjs-chart.js): no charts */\n")
end

-- lc.dashboard{listen = "[HOST:]PORT" (default "127.0.0.1:8099"), token = T} -> server,
-- or nil and an error of kind "dashboard" (a bad address, the port taken).
function M.open(opts)
  opts = opts or {}
  if type(opts) ~= "table" then error("lc.dashboard: want a table of options", 2) end
  local listen = opts.listen or "127.0.0.1:8099"
  if type(listen) == "number" then listen = tostring(listen) end
  if type(listen) ~= "string" then error("lc.dashboard: listen: want \"[HOST:]PORT\"", 2) end
  if opts.token ~= nil and type(opts.token) ~= "string" then error("lc.dashboard: token: want a string", 2) end
  local ud, err = core.dash_open(listen, opts.token)
  if not ud then return nil, err end
  local srv = setmetatable({ ud = ud, labeled = {}, nlabeled = 0 }, Server)
  srv.info = ud:info()
  publish_page(srv)
  return srv
end

-- What to open: the page's URL, with the token when reads need it.
function Server:url()
  local i = self.info
  return ("http://%s:%d/%s"):format(i.host, i.port, i.reads_need_token and ("?token=" .. i.token) or "")
end

function Server:token() return self.info.token end

-- The commands POSTed since the last call, oldest first: a list of "pause", "resume",
-- "stop" (empty when none).
function Server:commands() return self.ud:commands() end

function Server:close() self.ud:close() end

-- Prometheus text ---------------------------------------------------------------------

local function label(v)
  return (tostring(v):gsub("[\\\"\n]", { ["\\"] = "\\\\", ['"'] = '\\"', ["\n"] = "\\n" }))
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t or {}) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  return keys
end

local function metric(out, name, kind, help, samples)
  out[#out + 1] = ("# HELP %s %s\n# TYPE %s %s\n"):format(name, help, name, kind)
  for _, s in ipairs(samples) do
    out[#out + 1] = ("%s%s %.17g\n"):format(name, s[1] and ("{" .. s[1] .. "}") or "", s[2])
  end
end

local function by_key(t, key)
  local samples = {}
  for _, k in ipairs(sorted_keys(t)) do samples[#samples + 1] = { ('%s="%s"'):format(key, label(k)), t[k] } end
  return samples
end

local function busyness(h)
  return (h.pages or 0) + (h.errors or 0)
end

-- The hosts with a label: once labeled a host keeps it, so that every series is a
-- counter that only grows; free labels go to the busiest hosts not yet labeled.
function Server:label_hosts(hosts)
  if self.nlabeled >= M.max_host_labels then return end
  local candidates = {}
  for name, h in pairs(hosts) do
    -- A host named "other" is summed there: its own label would repeat that series.
    if not self.labeled[name] and name ~= "other" then candidates[#candidates + 1] = { name, busyness(h) } end
  end
  table.sort(candidates, function(a, b)
    if a[2] ~= b[2] then return a[2] > b[2] end
    return a[1] < b[1]
  end)
  for i = 1, math.min(#candidates, M.max_host_labels - self.nlabeled) do
    self.labeled[candidates[i][1]] = true
  end
  self.nlabeled = math.min(M.max_host_labels, self.nlabeled + #candidates)
end

local function add_counts(into, from)
  for k, v in pairs(from or {}) do into[tostring(k)] = (into[tostring(k)] or 0) + v end
end

-- Per-host series: the labeled hosts, then "other" (every other host summed).
local function host_samples(self, hosts)
  local pages, statuses, errors, queued = {}, {}, {}, {}
  local rows = {}
  local other, has_other = { pages = 0, statuses = {}, error_kinds = {}, queued = 0 }, false
  for name, h in pairs(hosts) do
    if self.labeled[name] then
      rows[#rows + 1] = { name, h }
    else
      has_other = true
      other.pages = other.pages + (h.pages or 0)
      other.queued = other.queued + (h.queued or 0)
      add_counts(other.statuses, h.statuses)
      add_counts(other.error_kinds, h.error_kinds)
    end
  end
  table.sort(rows, function(a, b) return a[1] < b[1] end)
  if has_other then rows[#rows + 1] = { "other", other } end
  for _, r in ipairs(rows) do
    local host, h = ('host="%s"'):format(label(r[1])), r[2]
    pages[#pages + 1] = { host, h.pages or 0 }
    queued[#queued + 1] = { host, h.queued or 0 }
    for _, k in ipairs(sorted_keys(h.statuses)) do
      statuses[#statuses + 1] = { ('%s,status="%s"'):format(host, label(k)), h.statuses[k] }
    end
    for _, k in ipairs(sorted_keys(h.error_kinds)) do
      errors[#errors + 1] = { ('%s,kind="%s"'):format(host, label(k)), h.error_kinds[k] }
    end
  end
  return pages, statuses, errors, queued
end

local COUNTERS = {
  { "pages", "luacrawl_pages_total", "Pages fetched (responses handed to parse)." },
  { "requests", "luacrawl_requests_total", "HTTP requests sent, retries and robots.txt included." },
  { "bytes", "luacrawl_received_bytes_total", "Response body bytes received." },
  { "retries", "luacrawl_retries_total", "Requests retried." },
  { "redirects", "luacrawl_redirects_total", "Redirects followed." },
  { "robots_denied", "luacrawl_robots_denied_total", "Requests denied by robots.txt." },
  { "duplicates", "luacrawl_duplicates_total", "Pages whose body was met before." },
  { "items", "luacrawl_items_total", "Items written." },
  { "parse_errors", "luacrawl_parse_errors_total", "Errors raised in parse." },
}

-- A fleet's (luacrawl dashboard --redis: dashboard_fleet.lua): a series per worker.
local function worker_metrics(out, st)
  local pages, leased = {}, {}
  for _, w in ipairs(st.workers) do
    local l = ('worker="%s"'):format(label(w.worker))
    pages[#pages + 1] = { l, w.pages or 0 }
    leased[#leased + 1] = { l, w.leased or 0 }
  end
  metric(out, "luacrawl_leased_requests", "gauge", "Requests the fleet's workers hold in their leases.",
    { { nil, st.leased or 0 } })
  metric(out, "luacrawl_worker_pages_total", "counter", "Pages fetched by each worker of the fleet.", pages)
  metric(out, "luacrawl_worker_leased_requests", "gauge", "Requests each worker holds in its lease.", leased)
end

-- The stats table st as Prometheus text (the exposition format 0.0.4).
function Server:metrics(st)
  local out = {}
  for _, c in ipairs(COUNTERS) do metric(out, c[2], "counter", c[3], { { nil, st[c[1]] or 0 } }) end
  metric(out, "luacrawl_responses_total", "counter", "Responses by HTTP status.", by_key(st.statuses, "status"))
  metric(out, "luacrawl_errors_total", "counter", "Failed requests by error kind.", by_key(st.errors, "kind"))
  metric(out, "luacrawl_frontier_requests", "gauge", "Requests queued.", { { nil, st.frontier or 0 } })
  metric(out, "luacrawl_in_flight_requests", "gauge", "Requests in flight.", { { nil, st.in_flight or 0 } })
  local hosts, nhosts = st.hosts or {}, 0
  for _ in pairs(hosts) do nhosts = nhosts + 1 end
  metric(out, "luacrawl_hosts", "gauge", "Hosts met.", { { nil, st.hosts_total or nhosts } })
  metric(out, "luacrawl_paused", "gauge", "1 while the crawl is paused.", { { nil, st.paused and 1 or 0 } })
  metric(out, "luacrawl_elapsed_seconds", "gauge", "Time since the crawl started.", { { nil, st.elapsed or 0 } })
  self:label_hosts(hosts)
  local pages, statuses, errors, queued = host_samples(self, hosts)
  metric(out, "luacrawl_host_pages_total", "counter", "Pages fetched by host (the busiest; the rest as other).", pages)
  metric(out, "luacrawl_host_responses_total", "counter", "Responses by host and HTTP status.", statuses)
  metric(out, "luacrawl_host_errors_total", "counter", "Failed requests by host and error kind.", errors)
  metric(out, "luacrawl_host_queued_requests", "gauge", "Requests queued by host.", queued)
  if st.workers then worker_metrics(out, st) end
  return table.concat(out)
end

-- Publishing --------------------------------------------------------------------------

-- The event the page is updated by: the stats with the last points of the series and
-- the busiest hosts only.
local function event_view(st)
  local view = {}
  for k, v in pairs(st) do view[k] = v end
  local series = st.series
  if series and series.points then
    local pts, from = {}, math.max(1, #series.points - EVENT_POINTS + 1)
    for i = from, #series.points do pts[#pts + 1] = series.points[i] end
    view.series = { interval = series.interval, points = pts }
  end
  if st.hosts then
    local rows = {}
    for name, h in pairs(st.hosts) do rows[#rows + 1] = { name, h } end
    table.sort(rows, function(a, b)
      local x, y = busyness(a[2]), busyness(b[2])
      if x ~= y then return x > y end
      return a[1] < b[1]
    end)
    local hosts = {}
    for i = 1, math.min(#rows, EVENT_HOSTS) do hosts[rows[i][1]] = rows[i][2] end
    view.hosts = hosts
    view.hosts_total = st.hosts_total or #rows
  end
  return view
end

-- Publish the stats table st (crawl.run's, or any with its fields: docs/toolkit.md):
-- /stats.json, /metrics and the page's next event, each made once here.
function Server:publish(st)
  if type(st) ~= "table" then error("dashboard:publish: want the stats table", 2) end
  self.ud:publish("/stats.json", "application/json", report.json(st))
  self.ud:publish("/metrics", "text/plain; version=0.0.4; charset=utf-8", self:metrics(st))
  self.ud:event(report.json(event_view(st)))
end

return M
