-- luacrawl.cli_crawl: `luacrawl crawl URL... [options]`, a one-off crawl from the
-- command line: crawl.run with the spec its options give (each option sets one spec
-- field, docs/crawl.md "The spec") and no parse, so that it writes the page record
-- (crawl_record.lua): one JSON object per response, its fields chosen by --fields.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local core = require "luacrawl.core"
local spec_check = require "luacrawl.spec_check"
local crawl_record = require "luacrawl.crawl_record"

local unpack = unpack or table.unpack

local M = {}

M.usage = [==[
usage: luacrawl crawl URL... [options]
  -d, --max-depth N      follow links at most N deep (default: no limit; --depth N
                         is the same option)
  -n, --max-pages N      fetch at most N pages
  -c, --concurrency N    requests in flight in all (default 16)
  --per-host N           requests in flight per host (default 2)
  --delay S              seconds between requests to one host (default 0)
  --host-key K           what one host is for --per-host and --delay: host (the
                         default), domain (hosts of one registrable domain share)
                         or ip (hosts on one address share)
  --throttle T           adapt each host's delay to its latency, aiming at T
                         requests in flight per host on average (default: off)
  --max-delay S          cap on Crawl-delay, retry backoff and --throttle's delay
                         (default 30)
  --depth-first          within a host, deeper pages first (default: breadth-first)
  --span-hosts           follow links to any host (default: the start URLs' hosts
                         exactly)
  --allow-host H         crawl host H and its subdomains instead of the start URLs'
                         hosts (repeatable: list the start hosts too)
  --allow PATTERN        only follow URLs matching the pattern, within the hosts in
                         scope (repeatable): a regular expression, or a glob such as
                         'https://example.org/docs/**' (* any characters but /, **
                         any characters, {a,b} either; glob: and re: prefixes force
                         one reading)
  --deny PATTERN         never follow URLs matching it (repeatable)
  --follow SEL           follow only the links of the elements the CSS selector
                         matches, as 'a.next' or 'nav a' (repeatable)
  --render               load every page in a headless Chromium and crawl the
                         DOM its scripts built (docs/toolkit.md, "Rendering";
                         docs/crawl.md, "Rendering pages")
  --render-match PATTERN render only the URLs matching the pattern (repeatable;
                         a regular expression or a glob, as --allow)
  --no-robots            do not fetch or obey robots.txt
  --robots-redirects N   redirects followed to fetch a robots.txt (default 5)
  --sitemaps             also crawl the pages the start sites' sitemaps list
                         (robots.txt's Sitemap lines, else /sitemap.xml)
  --sitemap URL          read this sitemap (or robots.txt) for pages (repeatable)
  --no-cookies           keep no cookies (default: one cookie jar for the crawl)
  --dedupe-content       do not follow the links of a page whose body an earlier
                         page had (default: its record only says duplicate_of)
  --no-dedupe-content    digest no bodies: duplicate_of is always null
  --sort-query           sort each URL's query parameters before deduplication
  --strip-param P        drop query parameter P from every URL (repeatable; a
                         prefix ending in *, as utm_*)
  --keep-fragment        keep URLs' #fragments (default: dropped)
  --contact C            URL or email for site owners, sent in the default
                         User-Agent as luacrawl/VERSION (+C)
  --public-only          connect only to public addresses: never to loopback,
                         private (RFC 1918), link-local, ... (docs/crawl.md)
  --deny-network CIDR    never connect to addresses in CIDR (repeatable)
  -k, --insecure         do not verify TLS certificates
  -A, --user-agent UA    User-Agent (its product token is matched in robots.txt)
  -H, --header 'N: V'    add a header to every request (repeatable)
  -o, --output FILE      pages as JSON Lines (.jsonl), a JSON array (.json) or CSV
                         (.csv); - for stdout (default: stdout; no progress line
                         then on a terminal)
  --fields F,F,...       the record's fields, from url, status, depth, content_type,
                         length, title, links (how many the page has), referrer,
                         elapsed, duplicate_of (default: all but links; url alone
                         with --css or --xpath)
  --css NAME=SEL         add the field NAME: the text of the first match of the CSS
                         selector SEL (whitespace squashed; SEL::text and
                         SEL::attr(a) give the value as it is), null when none
                         (repeatable: the fields follow in the order given)
  --xpath NAME=EXPR      the same with an XPath expression
  --css-all NAME=SEL     add the field NAME: every match, as a list
  --xpath-all NAME=EXPR  the same with an XPath expression
  --append               add to the outputs' records instead of replacing them
                         (.jsonl and .csv; a CSV's header must have this crawl's
                         fields)
  --save DIR             keep each page fetched (2xx) as a file DIR/HOST/PATH, for
                         reading offline (docs/crawl.md; --warc is the faithful
                         archive)
  --stats-json FILE      write the final stats as JSON
  --dashboard [HOST:]PORT  watch the crawl in a browser: a live page, /stats.json,
                         /metrics, pause, resume and stop (the URL to open is
                         printed; HOST 127.0.0.1 unless given: docs/crawl.md,
                         "Watching a crawl")
  --dashboard-token T    the token the dashboard asks for (default: one generated,
                         needed on any address but 127.0.0.1 and for commands)
  --dns-server S         DNS servers, HOST[:PORT][,...]
  --max-time S           stop scheduling after S seconds
  --max-host-time S      give each host S seconds from its first request
  --timeout S            per-request time limit (default 30)
  --max-size BYTES       largest body (decoded) accepted (default 10 MiB)
  --max-redirect N       redirect hops followed per request (default 10)
  --retries N            retries of a request after its first attempt (default 2)
  --retry-statuses LIST  statuses retried, as 429,503 (default 408,429,500,502,
                         503,504,522,524)
  --retry-kinds LIST     fetch errors retried, as timeout,connect (default
                         timeout,connect,protocol,render)
  --max-retry-after S    longest wait before a retry (default 60)
  --max-header-size B    response headers accepted (default 256 KiB)
  --max-url-length N     longest URL fetched (default 8192)
  --max-robots-size B    bytes of a robots.txt read (default 500 KiB)
  --max-memory BYTES     Lua heap limit (default 2 GB)
  --max-task-cpu S       raise in a task that computes S seconds without waiting
  -q, --quiet            no progress, no stats on stderr
  --no-progress          no progress line (the log lines and stats stay)
  --progress-interval S  seconds between progress lines (default 0.5 on a
                         terminal, else 10)
  --stop-grace S         seconds requests in flight get to finish once the crawl
                         stops (default 10)
  --warc PREFIX          archive every fetch in WARC files PREFIX-00000.warc.gz, ...
                         (docs/crawl.md, "WARC archives")
  --warc-max-size B      start a new WARC file past B bytes (default 1 GB)
  --warc-level N         gzip level of the WARC records, 1 (fastest, the default)
                         to 9 (smallest)
  --cdx                  write a CDXJ index beside each WARC file
  --no-warc-dedupe       write a response whose payload was archived already in
                         full (default: a revisit record)
  --from-warc FILE...    no fetch: the pages are the archived responses of the
                         WARC files (every argument after it that is not an
                         http(s) URL is a file); start URLs, if any, set the scope
  --state FILE           keep the crawl in FILE (SQLite): run the same command
                         again to go on where it stopped, even after kill -9
                         (docs/crawl.md, "Long crawls")
  --commit-interval S    seconds between commits of the state (default 0: pages
                         hold their slots until committed; a kill costs at most
                         the concurrency)
  --state-force          go on with a state made by another crawl (other start
                         URLs or scope)
  --recrawl AGE          with the --state of a finished crawl: fetch again the
                         pages done more than AGE ago (seconds, or 30m, 12h,
                         7d), with their validators; the record's "changed"
                         says whether each changed
  --redis URL            share the crawl with other workers through Redis
                         (redis://[[user]:password@]host[:port][/db]): start the
                         same command on any number of machines; the first seeds
                         the crawl, the others join, each exits when it is done
                         (docs/crawl.md, "Crawling with many workers")
  --crawl-id NAME        the crawl's name in Redis (with --redis)
  --worker-id NAME       this worker's name (default HOST-PID); the records carry
                         it as "worker" (a field --fields may name too)
  --lease S              seconds a worker's claimed requests stay its own unless
                         renewed (default 30): a worker gone for longer has them
                         given to the others
]==]

local flags = {
  ["-d"] = "depth", ["--max-depth"] = "depth", ["--depth"] = "depth", ["-n"] = "max_pages", ["--max-pages"] = "max_pages",
  ["-c"] = "concurrency", ["--concurrency"] = "concurrency", ["--per-host"] = "per_host",
  ["--delay"] = "delay", ["--max-time"] = "max_time", ["-A"] = "user_agent",
  ["--user-agent"] = "user_agent", ["-o"] = "output", ["--output"] = "output",
  ["--stats-json"] = "stats_json", ["--save"] = "save", ["--dns-server"] = "dns_server", ["--fields"] = "fields",
  ["--max-host-time"] = "max_host_time", ["--timeout"] = "timeout", ["--max-size"] = "max_size",
  ["--max-redirect"] = "max_redirect", ["--max-memory"] = "max_memory", ["--max-task-cpu"] = "max_task_cpu",
  ["--max-header-size"] = "max_header_size", ["--max-url-length"] = "max_url_length",
  ["--max-robots-size"] = "max_robots_size", ["--contact"] = "contact",
  ["--warc"] = "warc", ["--warc-max-size"] = "warc_max_size", ["--warc-level"] = "warc_level",
  ["--state"] = "state", ["--commit-interval"] = "commit_interval", ["--recrawl"] = "recrawl",
  ["--redis"] = "redis", ["--crawl-id"] = "crawl_id", ["--worker-id"] = "worker_id", ["--lease"] = "lease",
  ["--host-key"] = "host_key", ["--throttle"] = "throttle", ["--max-delay"] = "max_delay",
  ["--robots-redirects"] = "robots_redirects", ["--retries"] = "retries", ["--retry-statuses"] = "retry_statuses",
  ["--retry-kinds"] = "retry_kinds", ["--max-retry-after"] = "max_retry_after", ["--stop-grace"] = "stop_grace",
  ["--progress-interval"] = "progress_interval",
  ["--dashboard"] = "dashboard", ["--dashboard-token"] = "dashboard_token",
}
-- The numeric options and the range each takes ({integer?, min, max}; no max: as
-- large as a number holds exactly), checked by the engine's one rule for numbers
-- (core.check_number/check_integer): NaN, infinities and numbers out of range are
-- usage errors that name the option (NaN would hang the crawl, or lift a limit).
local YEAR = 365 * 24 * 3600
local numeric = {
  depth = { true, 0 }, max_pages = { true, 0 }, concurrency = { true, 1 }, per_host = { true, 1 },
  delay = { false, 0, YEAR }, max_time = { false, 0, YEAR }, max_host_time = { false, 0, YEAR },
  timeout = { false, 0, YEAR }, max_task_cpu = { false, 0, YEAR }, max_redirect = { true, 0 },
  max_size = { true, 0 }, max_memory = { true, 0 }, max_header_size = { true, 0 },
  max_url_length = { true, 0 }, max_robots_size = { true, 0 }, warc_max_size = { true, 1 },
  warc_level = { true, 1, 9 }, commit_interval = { false, 0, 24 * 3600 }, lease = { false, 1, 24 * 3600 },
  throttle = { false, 0.001, 1e6 }, max_delay = { false, 0, YEAR }, robots_redirects = { true, 0 },
  retries = { true, 0 }, max_retry_after = { false, 0, YEAR }, stop_grace = { false, 0, YEAR },
  progress_interval = { false, 0.001, YEAR },
}

-- The number an option's value gives, checked against its range; raises a usage
-- error naming the option (as typed) otherwise.
local function option_number(flag, v, range)
  local n = tonumber(v)
  if not n then error(("%s needs a number (got '%s')"):format(flag, v), 0) end
  local ok, err = pcall(range[1] and core.check_integer or core.check_number, n, flag, range[2], range[3])
  if not ok then error(tostring(err), 0) end
  return n
end
-- The selector options: each adds a record field (extract.lua), in the order given.
local extracts = {
  ["--css"] = { "css" }, ["--xpath"] = { "xpath" }, ["--css-all"] = { "css", true }, ["--xpath-all"] = { "xpath", true },
}
local lists = {
  ["--allow-host"] = "allow_hosts", ["--allow"] = "allow", ["--deny"] = "deny",
  ["--deny-network"] = "deny_networks", ["--sitemap"] = "sitemap_urls",
  ["--from-warc"] = "from_warc", ["-H"] = "headers", ["--header"] = "headers", ["--strip-param"] = "strip",
  ["--follow"] = "follow", ["--render-match"] = "render_match",
}
local switches = {
  ["--span-hosts"] = "span_hosts", ["--no-robots"] = "no_robots", ["-q"] = "quiet", ["--quiet"] = "quiet",
  ["--insecure"] = "insecure", ["-k"] = "insecure", ["--public-only"] = "public_only",
  ["--sitemaps"] = "sitemaps", ["--no-cookies"] = "no_cookies",
  ["--cdx"] = "cdx", ["--no-warc-dedupe"] = "no_warc_dedupe", ["--state-force"] = "state_force",
  ["--dedupe-content"] = "dedupe_content", ["--no-dedupe-content"] = "no_dedupe_content",
  ["--depth-first"] = "depth_first", ["--no-progress"] = "no_progress", ["--sort-query"] = "sort_query",
  ["--keep-fragment"] = "keep_fragment", ["--append"] = "append", ["--render"] = "render",
}

-- A comma-separated list: "429, 503" -> {"429", "503"}; a usage error when empty.
local function comma_list(flag, v)
  local out = {}
  for item in v:gmatch("[^,]+") do
    item = item:match("^%s*(.-)%s*$")
    if item ~= "" then out[#out + 1] = item end
  end
  if not out[1] then error(("%s needs a list, as a,b (got '%s')"):format(flag, v), 0) end
  return out
end

-- The values of the options that are not one string or number.
local convert = {
  retry_statuses = function(flag, v)
    local out = {}
    for i, item in ipairs(comma_list(flag, v)) do
      out[i] = option_number(flag, item, { true, 100, 999 })
    end
    return out
  end,
  retry_kinds = comma_list,
  host_key = function(flag, v)
    if v ~= "host" and v ~= "domain" and v ~= "ip" then
      error(("%s must be host, domain or ip (got '%s')%s"):format(flag, v,
        spec_check.hint(v, { "host", "domain", "ip" })), 0)
    end
    return v
  end,
}

-- The options, by kind (tests/spec/docs_spec.lua checks them against docs/crawl.md).
M.options = { values = flags, lists = lists, switches = switches, extracts = extracts }

function M.parse_args(args)
  args = spec_check.split_equals(args, function(a) return flags[a] or lists[a] or extracts[a] end)
  local o = { urls = {}, allow_hosts = {}, allow = {}, deny = {}, deny_networks = {}, sitemap_urls = {}, from_warc = {},
    headers = {}, strip = {}, extract = {}, follow = {}, render_match = {} }
  local i = 1
  while i <= #args do
    local a = args[i]
    if extracts[a] then
      local v = args[i + 1]
      if v == nil then error(a .. " needs NAME=SELECTOR", 0) end
      local kind, all = extracts[a][1], extracts[a][2]
      local e = require("luacrawl.extract").from_arg(kind, v, all)
      if not e then error(("%s needs NAME=SELECTOR, as title=h1 (got '%s')"):format(a, v), 0) end
      require("luacrawl.extract").check({ e }, a) -- a selector that does not compile names its option
      o.extract[#o.extract + 1] = e
      i = i + 2
    elseif flags[a] or lists[a] then
      local v = args[i + 1]
      if v == nil then error(a .. " needs a value", 0) end
      if flags[a] then
        local key = flags[a]
        if numeric[key] then v = option_number(a, v, numeric[key]) end
        if convert[key] then v = convert[key](a, v) end
        -- A request that can never be built: refused now, as lc.fetch would refuse it.
        if key == "user_agent" then
          local ok, err = pcall(core.check_fetch_options, { user_agent = v })
          if not ok then error(("%s: %s"):format(a, tostring(err):gsub("^fetch: ", "")), 0) end
        end
        o[key] = v
      elseif lists[a] == "headers" then
        local name, hv = v:match("^%s*([^:]+):%s*(.-)%s*$")
        if not name then error(("%s: bad header '%s' (use 'Name: value')"):format(a, v), 0) end
        local ok, err = pcall(core.check_fetch_options, { headers = { [name] = hv } })
        if not ok then error(("%s: %s"):format(a, tostring(err):gsub("^fetch: ", "")), 0) end
        o.headers[name] = hv
      else
        local list = o[lists[a]]
        list[#list + 1] = v
      end
      i = i + 2
    elseif switches[a] then
      o[switches[a]] = true
      i = i + 1
    elseif a:sub(1, 1) == "-" then
      error(spec_check.unknown_option(a, flags, lists, switches, extracts, { ["--help"] = true }), 0)
    else
      o.urls[#o.urls + 1] = a
      i = i + 1
    end
  end
  if o.from_warc[1] then -- --from-warc FILE...: the arguments that are not URLs are files
    local urls = {}
    for _, u in ipairs(o.urls) do
      local list = u:lower():match("^https?://") and urls or o.from_warc
      list[#list + 1] = u
    end
    o.urls = urls
  elseif #o.urls == 0 then
    error("crawl: give at least one URL", 0)
  end
  if (o.cdx or o.warc_max_size or o.warc_level or o.no_warc_dedupe) and not o.warc then
    error("--cdx, --warc-max-size, --warc-level and --no-warc-dedupe go with --warc PREFIX", 0)
  end
  if o.append and (o.state or o.redis) then
    error("--append goes without --state and --redis: a kept crawl's outputs go on from where it stopped already", 0)
  end
  if o.redis and o.state then
    error("--redis does not go with --state: a crawl is kept in Redis (shared by its workers) or in a state file", 0)
  end
  if (o.crawl_id or o.worker_id or o.lease) and not o.redis then
    error("--crawl-id, --worker-id and --lease go with --redis URL", 0)
  end
  if o.redis and not o.crawl_id then error("--redis needs --crawl-id NAME, the crawl's name in Redis", 0) end
  if o.dashboard_token and not o.dashboard then error("--dashboard-token goes with --dashboard [HOST:]PORT", 0) end
  if o.render and o.render_match[1] then
    error("--render renders every page, --render-match only those matching: give one", 0)
  end
  if o.dedupe_content and o.no_dedupe_content then
    error("--dedupe-content and --no-dedupe-content say opposite things: give one", 0)
  end
  if o.timeout and not (o.timeout > 0 and o.timeout < math.huge) then
    error("--timeout needs a number of seconds more than 0 (there is no 'no limit')", 0)
  end
  return o
end

-- The record's fields (crawl_record.lua): the default, and the choices of --fields.
M.fields = crawl_record.fields
M.field_names = crawl_record.names

-- The fields --fields names ("url,status,title"), checked as crawl.run checks a spec's
-- (crawl_record.check; the names of --css and --xpath fields count); raises a usage
-- error.
function M.parse_fields(v, extract)
  local out = {}
  for f in v:gmatch("[^,]+") do out[#out + 1] = f:match("^%s*(.-)%s*$") end
  if not out[1] then error("--fields needs at least one field", 0) end
  local names = {}
  for _, e in ipairs(extract or {}) do names[e.name] = true end
  return crawl_record.check(out, "--fields", nil, names)
end

-- Build the crawl spec from the parsed options: each option is a spec field (the
-- table in docs/crawl.md), and crawl.run gives it its meaning; nothing of the scope
-- is decided here.
function M.spec(o)
  for _, u in ipairs(o.urls) do
    local p = lc.url.parse(u)
    if not (p and p.host) then error(("not a URL: %s%s"):format(u, require("luacrawl.crawl_losses").scheme_hint(u)), 0) end
    local scheme = p.scheme and p.scheme:lower()
    if scheme ~= "http" and scheme ~= "https" then
      error(("not an http or https URL: %s (scheme '%s')"):format(u, tostring(p.scheme)), 0)
    end
  end
  local allow, deny
  if o.allow_hosts[1] or o.allow[1] then
    allow = { hosts = o.allow_hosts[1] and o.allow_hosts or nil, urls = o.allow[1] and o.allow or nil }
  end
  if o.deny[1] then deny = { urls = o.deny } end
  local span_hosts = o.span_hosts or nil
  local extract = o.extract[1] and require("luacrawl.extract").check(o.extract, "--css/--xpath") or nil
  local fields = o.fields and M.parse_fields(o.fields, extract) or (extract and { "url" }) or M.fields
  if o.recrawl and not o.fields then -- a recrawl's record says whether the page changed
    fields = { unpack(fields) }
    fields[#fields + 1] = "changed"
  end
  if o.redis and not o.fields then -- a fleet's records say which worker wrote them
    fields = { unpack(fields) }
    fields[#fields + 1] = "worker"
  end
  local dedupe_content
  if o.dedupe_content then dedupe_content = true elseif o.no_dedupe_content then dedupe_content = false end
  local normalize
  if o.sort_query or o.keep_fragment or o.strip[1] then
    normalize = { sort_query = o.sort_query, keep_fragment = o.keep_fragment, strip = o.strip[1] and o.strip or nil }
  end
  -- No parse: crawl.run writes the record of each response, its fields `fields`.
  local spec = {
    start = (o.urls[1] or not o.from_warc[1]) and o.urls or nil, max_depth = o.depth, max_pages = o.max_pages, max_time = o.max_time,
    concurrency = o.concurrency, per_host = o.per_host, delay = o.delay,
    robots = not o.no_robots, user_agent = o.user_agent, quiet = o.quiet,
    stats_json = o.stats_json, extract = extract, fields = fields,
    output = o.append and o.output and { path = o.output, append = true } or o.output or "-",
    follow = o.follow[1] and o.follow or nil, save = o.save,
    allow = allow, deny = deny, span_hosts = span_hosts,
    free_bodies = true, -- no script here keeps a page past its handling
    fetch = { insecure = o.insecure, timeout = o.timeout, max_size = o.max_size,
      max_header_size = o.max_header_size, max_url_length = o.max_url_length,
      headers = next(o.headers) and o.headers or nil },
    host_key = o.host_key, throttle = o.throttle and { target = o.throttle }, max_delay = o.max_delay,
    depth_first = o.depth_first, robots_redirects = o.robots_redirects, dedupe_content = dedupe_content,
    normalize = normalize, retries = o.retries, retry_statuses = o.retry_statuses,
    retry_kinds = o.retry_kinds, max_retry_after = o.max_retry_after, stop_grace = o.stop_grace,
    progress_interval = o.progress_interval,
    max_robots_size = o.max_robots_size,
    max_host_time = o.max_host_time, max_redirect = o.max_redirect,
    public_only = o.public_only, deny_networks = o.deny_networks[1] and o.deny_networks or nil,
    cookies = not o.no_cookies, contact = o.contact,
    sitemaps = o.sitemap_urls[1] and o.sitemap_urls or o.sitemaps,
    warc = o.warc and { prefix = o.warc, max_size = o.warc_max_size, level = o.warc_level,
      cdx = o.cdx or nil, dedupe = not o.no_warc_dedupe },
    from_warc = o.from_warc[1] and o.from_warc or nil,
    state = o.state, state_force = o.state_force or nil, commit_interval = o.commit_interval,
    recrawl = o.recrawl and M.age(o.recrawl),
    redis = o.redis, crawl_id = o.crawl_id, worker_id = o.worker_id, lease = o.lease,
    dashboard = o.dashboard and { listen = o.dashboard, token = o.dashboard_token },
    render = o.render or (o.render_match[1] and { urls = o.render_match }) or nil,
  }
  if o.no_progress then spec.progress = false end
  return spec
end

-- Seconds from an age: "3600", "90s", "30m", "12h", "7d"; raises a usage error.
local UNITS = { s = 1, m = 60, h = 3600, d = 86400 }
function M.age(v)
  local n, unit = tostring(v):match("^(%d+%.?%d*)([smhd]?)$")
  if not n then error(("--recrawl needs an age: seconds, or a number with s, m, h or d (got '%s')"):format(v), 0) end
  return tonumber(n) * UNITS[unit ~= "" and unit or "s"]
end

-- The option that sets each spec field (its long name), to say crawl.run's errors
-- about a field in the command line's words.
local option_of = { max_depth = "--max-depth" }
for flag, key in pairs(flags) do
  if flag:sub(1, 2) == "--" and (not option_of[key] or #flag > #option_of[key]) and key ~= "depth" then
    option_of[key] = flag
  end
end

-- The end of a usage error's one line: a pointer to the usage, not the whole usage.
local SEE_HELP = " (see luacrawl crawl --help)"

-- "crawl.run: retry_kinds: no error kind 'x'" -> "--retry-kinds: no error kind 'x'
-- (see luacrawl crawl --help)": an option's value refused is a usage error.
local function as_option(msg)
  local field, rest = msg:match("^crawl%.run: ([%w_]+)(.*)$")
  local flag = field and option_of[field]
  if flag and (rest == "" or rest:match("^[ :]")) then
    -- "state X and output X are the same file": the second field an option too.
    rest = rest:gsub("^( %S+ and )([%w_]+) ", function(pre, f) return pre .. (option_of[f] or f) .. " " end)
    return flag .. rest .. SEE_HELP
  end
  return msg
end

function M.main(args)
  for _, a in ipairs(args) do
    if a == "--help" or a == "-h" then
      io.stdout:write(M.usage, require("luacrawl.cli").EXIT_STATUS)
      return 0
    end
  end
  local ok, o = pcall(M.parse_args, args)
  if not ok then
    io.stderr:write("luacrawl: ", o, SEE_HELP, "\n")
    return 2
  end
  if o.dns_server then
    local dok, err = pcall(lc.configure, { dns_servers = o.dns_server })
    if not dok then
      io.stderr:write("luacrawl: ", tostring(err), "\n")
      return 2
    end
  end
  if o.max_memory or o.max_task_cpu then
    lc.configure({ max_memory = o.max_memory, max_task_cpu = o.max_task_cpu })
  end
  local sok, spec = pcall(M.spec, o)
  if not sok then
    local msg = tostring(spec)
    -- An option's value refused (--fields titel) is a usage error; a URL is not.
    if msg:sub(1, 1) == "-" then msg = msg .. SEE_HELP end
    io.stderr:write("luacrawl: ", msg, "\n")
    return 2
  end
  local cok, crawler = pcall(crawl.new, spec)
  if not cok then
    io.stderr:write("luacrawl: ", as_option((tostring(crawler):gsub("^[^:]+:%d+: ", ""))), "\n")
    return 2
  end
  local stats = crawler:run()
  local status, why = crawl.exit_status(crawler, stats)
  -- Said even with -q when the crawl did nothing useful; the other failures are
  -- logged already, unless -q.
  if why and (status == 5 or o.quiet) then io.stderr:write("luacrawl: ", why, "\n") end
  return status
end

return M
