-- The web crawler of "A Web Crawler With asyncio Coroutines" (A. Jesse Jiryu Davis
-- and Guido van Rossum, in "500 Lines or Less"), written for luacrawl.
--
--   luacrawl run examples/asyncio_crawler.lua ROOT [--max-tasks N] [--max-redirect N]
--
-- N worker tasks share a joinable queue of {url, redirects_left} (a plain URL when
-- the whole budget is left: most jobs, and a table less each) and a seen set.
-- Redirects are handled here, not by curl: each hop spends one of the budget and
-- is skipped when its target was already seen. Links are followed on the root's
-- host only. One line per fetched URL on stdout, "STATUS URL" ("ERR URL kind" when
-- the fetch failed); a summary on stderr.
local lc = require "luacrawl"

local function usage(msg)
  io.stderr:write(msg, "\nusage: luacrawl run asyncio_crawler.lua ROOT [--max-tasks N] [--max-redirect N]\n")
  os.exit(2)
end

local function parse_args(argv)
  local opts = { max_tasks = 10, max_redirect = 10 }
  local i = 1
  while argv[i] do
    local a = argv[i]
    if a == "--max-tasks" or a == "--max-redirect" then
      local n = tonumber(argv[i + 1])
      if not n or n < 0 then usage(a .. " needs a number") end
      opts[a:sub(3):gsub("-", "_")] = math.floor(n)
      i = i + 2
    elseif opts.root then
      usage("one ROOT URL only")
    else
      opts.root = a
      i = i + 1
    end
  end
  if not opts.root then usage("missing ROOT") end
  if opts.max_tasks < 1 then usage("--max-tasks must be at least 1") end
  return opts
end

local Crawler = {}
Crawler.__index = Crawler

function Crawler.new(root, max_redirect, max_tasks)
  local norm, err = lc.url.normalize(root)
  if not norm then usage(("bad ROOT %q: %s"):format(root, err.message)) end
  local p = lc.url.parse(norm)
  local self = setmetatable({
    root = norm,
    -- Links on the root's host (and port) all start with this, once normalized.
    origin = norm:match("^(https?://[^/]+/)"),
    host = p.host,
    max_redirect = max_redirect,
    max_tasks = max_tasks,
    q = lc.queue(),
    seen = lc.seen(),
    fetched = 0, errors = 0, redirects = 0, statuses = {},
  }, Crawler)
  -- The links wanted from each page: those on the root's host that the seen set did
  -- not hold (now added to it), the chapter's links.difference(self.seen_urls).
  self.link_opts = { prefix = self.origin, unseen = self.seen }
  self:add_url(norm, max_redirect)
  return self
end

function Crawler:add_url(url, max_redirect)
  self.seen:add(url)
  self.q:put_nowait(max_redirect == self.max_redirect and url or { url, max_redirect })
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
    self.q:put_nowait(link)
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
  end
end

function Crawler:crawl()
  local t0 = lc.now()
  local workers = {}
  for i = 1, self.max_tasks do
    workers[i] = lc.spawn(self.work, self)
  end
  self.q:join()
  for _, w in ipairs(workers) do w:cancel() end
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
local crawler = Crawler.new(opts.root, opts.max_redirect, opts.max_tasks)
crawler:report(crawler:crawl())
