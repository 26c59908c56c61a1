-- examples/asyncio_crawler.lua made durable: its queue and seen set live in a state
-- file (lc.store), so a crawl stopped at any instant, kill -9 included, goes on from
-- where it was when run again with the same STATE, and a finished one says so and
-- fetches nothing.
--
--   luacrawl run examples/durable_crawler.lua STATE ROOT [--max-tasks N]
--       [--max-redirect N] [--commit-every PAGES] [--commit-interval SECONDS]
--
-- The state is committed every --commit-interval seconds (default 1) or every
-- --commit-every pages (default 100), whichever comes first. A kill loses what was
-- done since the last commit: those pages are fetched again at the next run, with
-- the pages in flight (at most --max-tasks). --commit-every 1 commits after each
-- page: a kill then costs only the pages in flight, and each page a commit.
--
-- What follows is the asyncio crawler's text with the lines marked "durable" changed.
--
-- N worker tasks share a joinable queue of {url, redirects_left} (a plain URL when
-- the whole budget is left: most jobs, and a table less each) and a seen set.
-- Redirects are handled here, not by curl: each hop spends one of the budget and
-- is skipped when its target was already seen. Links are followed on the root's
-- host only. One line per fetched URL on stdout, "STATUS URL" ("ERR URL kind" when
-- the fetch failed); a summary on stderr.
local lc = require "luacrawl"

local function usage(msg)
  io.stderr:write(msg, "\nusage: luacrawl run durable_crawler.lua STATE ROOT [--max-tasks N] [--max-redirect N]"
    .. " [--commit-every PAGES] [--commit-interval SECONDS]\n")
  os.exit(2)
end

local function parse_args(argv)
  local opts = { max_tasks = 10, max_redirect = 10, commit_every = 100, commit_interval = 1 } -- durable
  local i = 1
  while argv[i] do
    local a = argv[i]
    if a == "--max-tasks" or a == "--max-redirect" or a == "--commit-every" or a == "--commit-interval" then
      local n = tonumber(argv[i + 1])
      if not n or n < 0 then usage(a .. " needs a number") end
      opts[a:sub(3):gsub("-", "_")] = a == "--commit-interval" and n or math.floor(n)
      i = i + 2
    elseif not opts.state then -- durable
      opts.state = a
      i = i + 1
    elseif opts.root then
      usage("one ROOT URL only")
    else
      opts.root = a
      i = i + 1
    end
  end
  if not opts.root then usage("missing STATE or ROOT") end
  if opts.max_tasks < 1 then usage("--max-tasks must be at least 1") end
  if opts.commit_interval <= 0 then usage("--commit-interval must be more than 0") end
  return opts
end

local Crawler = {}
Crawler.__index = Crawler

-- durable: a failed commit (disk full, ...) ends the crawl; the state keeps the
-- last commit, and the next run goes on from there.
local function check(ok, err)
  if not ok then
    io.stderr:write(tostring(err), "\n")
    os.exit(2)
  end
  return ok
end

function Crawler.new(db, root, max_redirect, max_tasks)
  local norm, err = lc.url.normalize(root)
  if not norm then usage(("bad ROOT %q: %s"):format(root, err.message)) end
  local p = lc.url.parse(norm)
  -- durable: a state belongs to one crawl, named by its root.
  local was = db:meta("root")
  if was and was ~= norm then
    check(nil, ("state %s is a crawl of %s, not of %s"):format(db:path(), was, norm))
  end
  check(db:set_meta("root", norm))
  local self = setmetatable({
    root = norm,
    -- Links on the root's host (and port) all start with this, once normalized.
    origin = norm:match("^(https?://[^/]+/)"),
    host = p.host,
    max_redirect = max_redirect,
    max_tasks = max_tasks,
    db = db, -- durable
    q = lc.queue { store = db, name = "todo" },
    seen = lc.seen { store = db, name = "seen" },
    fetched = 0, errors = 0, redirects = 0, statuses = {}, uncommitted = 0,
  }, Crawler)
  -- The links wanted from each page: those on the root's host. (durable: the seen set
  -- is asked in parse_links; links{unseen=} takes a set in memory only.)
  self.link_opts = { prefix = self.origin }
  self:add_url(norm, max_redirect) -- durable: at a resume the root is seen already
  return self
end

function Crawler:add_url(url, max_redirect)
  if not self.seen:add(url) then return end -- durable
  self.q:put_nowait(max_redirect == self.max_redirect and url or { url, max_redirect })
end

-- durable: commit now, and count the pages done since.
function Crawler:commit()
  check(self.db:commit())
  self.uncommitted = 0
end

function Crawler:record(url, status)
  self.fetched = self.fetched + 1
  self.statuses[status] = (self.statuses[status] or 0) + 1
  io.stdout:write(status, " ", lc.url.redact(url), "\n")
end

function Crawler:follow_redirect(url, res, max_redirect)
  self.redirects = self.redirects + 1
  local location = res.headers.location
  if not location then return end
  local next_url = lc.url.resolve(url, location)
  next_url = next_url and lc.url.normalize(next_url)
  if not next_url or self.seen:has(next_url) then return end
  if max_redirect > 0 then
    self:add_url(next_url, max_redirect - 1)
  else
    io.stderr:write("redirect limit reached for ", next_url, " from ", url, "\n")
  end
end

function Crawler:parse_links(res)
  local ctype = res.headers["content-type"] or ""
  if res.status ~= 200 or not ctype:find("text/html", 1, true) then return end
  for _, link in ipairs(res:html():links(self.link_opts)) do
    if self.seen:add(link) then self.q:put_nowait(link) end -- durable
  end
end

function Crawler:fetch(url, max_redirect)
  local res, err = lc.fetch(url)
  if not res then
    self.errors = self.errors + 1
    io.stdout:write("ERR ", lc.url.redact(url), " ", err.kind, "\n")
    return
  end
  self:record(url, res.status)
  if res.status >= 300 and res.status < 400 then
    self:follow_redirect(url, res, max_redirect)
  else
    self:parse_links(res)
  end
  res:release() -- done with the page: its memory goes now, not at the next collection
end

function Crawler:work()
  while true do
    local job = self.q:get()
    local url, max_redirect = job, self.max_redirect
    if type(job) == "table" then url, max_redirect = job[1], job[2] end
    local ok, err = pcall(self.fetch, self, url, max_redirect)
    self.q:task_done()
    if not ok then error(err, 0) end
    self.uncommitted = self.uncommitted + 1 -- durable
    if self.uncommitted >= self.commit_every then self:commit() end
  end
end

function Crawler:crawl()
  local t0 = lc.now()
  local workers = {}
  for i = 1, self.max_tasks do
    workers[i] = lc.spawn(self.work, self)
  end
  local committer = lc.spawn(function() -- durable
    while true do
      lc.sleep(self.commit_interval)
      self:commit()
    end
  end)
  self.q:join()
  for _, w in ipairs(workers) do w:cancel() end
  committer:cancel()
  check(self.db:set_meta("finished", "true")) -- durable
  self:commit()
  return lc.now() - t0
end

function Crawler:report(elapsed)
  local codes = {}
  for status, n in pairs(self.statuses) do codes[#codes + 1] = ("%d x %d"):format(n, status) end
  table.sort(codes)
  io.stderr:write(("%d urls fetched (%s), %d redirects, %d errors in %.2f s: %.0f pages/s\n"):format(
    self.fetched, table.concat(codes, ", "), self.redirects, self.errors, elapsed,
    self.fetched / math.max(elapsed, 1e-9)))
end

local opts = parse_args(arg)
local db = check(lc.store.open(opts.state)) -- durable
local crawler = Crawler.new(db, opts.root, opts.max_redirect, opts.max_tasks)
crawler.commit_every, crawler.commit_interval = math.max(opts.commit_every, 1), opts.commit_interval
if db:meta("finished") then
  io.stderr:write("crawl of ", crawler.root, " finished already (", db:path(), "): nothing to fetch\n")
else
  local left = crawler.q:size()
  if crawler.seen:size() > 1 then
    io.stderr:write(("resuming: %d URLs seen, %d to fetch\n"):format(crawler.seen:size(), left))
  end
  crawler:report(crawler:crawl())
end
check(db:close())
