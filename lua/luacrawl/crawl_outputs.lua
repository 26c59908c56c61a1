-- luacrawl.crawl_outputs: where a crawl's items go: the outputs opened (a resumed
-- state's cut back to their committed length), each item through on_item to every
-- output (with a state or a fleet, held until its page ends), flushed, closed, and a
-- failed output stopping the crawl. Its methods are the crawler's (crawl.lua copies
-- M.methods into Crawler).
local lc = require "luacrawl"
local core = require "luacrawl.core"
local export = require "luacrawl.export"
local losses = require "luacrawl.crawl_losses"
local calls = require "luacrawl.crawl_calls"

local is_cancel, error_message, apply_hook = calls.is_cancel, calls.error_message, calls.apply_hook

local M = {}
local Crawler = {}
M.methods = Crawler

-- The files a spec names, as {what, path}: the state, the file outputs, the stats
-- file.
local function named_files(spec)
  local files = {}
  if spec.state then files[1] = { "state", spec.state } end
  local outputs = spec.output
  if type(outputs) ~= "table" or outputs.path then outputs = { outputs } end
  for _, o in ipairs(outputs) do
    local path = type(o) == "table" and o.path or o
    if type(path) == "string" and path ~= "-" then files[#files + 1] = { "output", path } end
  end
  if spec.stats_json then files[#files + 1] = { "stats_json", spec.stats_json } end
  return files
end

-- The folders of the files a spec names (its state, file outputs, stats file and
-- archive prefix) made when missing, as mkdir -p makes them; one that cannot be made
-- is an error naming it.
function M.make_folders(spec, level)
  local files = named_files(spec)
  local warc = spec.warc
  if type(warc) == "table" then warc = warc.prefix end
  if type(warc) == "string" then files[#files + 1] = { "warc", warc } end
  if type(spec.save) == "string" then files[#files + 1] = { "save", spec.save .. "/." } end
  for _, f in ipairs(files) do
    local dir = type(f[2]) == "string" and f[2]:match("^(.+)/[^/]*$")
    if dir then
      local ok, err = core.mkdirs(dir)
      if not ok then error(("crawl.run: %s %s: %s"):format(f[1], f[2], err.message), level) end
    end
  end
end

-- Two of the crawl's files that are one file (however their paths are spelled)
-- would be written over each other: refused before any is opened. Devices and
-- FIFOs (/dev/stdout, /dev/null) may be shared.
function M.check_files(spec, level)
  local seen = {}
  for _, f in ipairs(named_files(spec)) do
    local id, name, kind = core.file_id(f[2])
    local key = kind == "file" and id or kind == "missing" and name or nil
    local other = key and seen[key]
    if other then
      error(("crawl.run: %s %s and %s %s are the same file: give each its own"):format(other[1], other[2], f[1],
        f[2]), level)
    end
    if key then seen[key] = f end
  end
end

-- The spec's outputs, its items table and its stats_json file, opened: one that
-- cannot be raises.
function Crawler:open_outputs()
  local spec = self.spec
  local outputs = spec.output
  if type(outputs) ~= "table" or outputs.path then outputs = { outputs } end
  local durable = self.durable
  for _, o in ipairs(outputs) do
    local path = type(o) == "table" and o.path or o
    local resume_at = type(path) == "string" and path ~= "-" and durable:output_offset(path) or nil
    self.outputs[#self.outputs + 1] = export.open(o, { fields = spec.fields, resume_at = resume_at })
  end
  durable:check_outputs()
  if spec.items then self.outputs[#self.outputs + 1] = export.open(spec.items) end
  if spec.stats_json then
    -- Opened now, as the outputs are: a path that cannot be written fails at once.
    local f, err, created = export.open_file(spec.stats_json)
    if not f then error(("stats_json: %s"):format(err), 0) end
    self.stats_file, self.stats_created = f, created
  end
end

-- Every file of the crawl opened: now the outputs and the stats file are cut to
-- where this run writes from. Not before: a start that fails on its archive or its
-- state must leave a user's files as they were.
function Crawler:start_outputs()
  for _, out in ipairs(self.outputs) do
    if out.start then out:start() end
  end
  if self.stats_file then
    local ok, err = export.cut_file(self.stats_file, self.spec.stats_json, 0)
    if not ok then error(("stats_json: %s"):format(err), 0) end
  end
end

-- The start failed: the files it opened are closed, those it created removed.
function Crawler:discard_outputs()
  for _, out in ipairs(self.outputs) do
    if out.discard then out:discard() end
  end
  if self.stats_file then
    self.stats_file:close()
    if self.stats_created then os.remove(self.spec.stats_json) end
    self.stats_file = nil
  end
end

function Crawler:emit(item, page)
  item = apply_hook(self.spec.on_item, item, page)
  if not item then return false end
  self.stats.items = self.stats.items + 1
  -- With a state, a page's items reach the outputs when its request is done
  -- (Crawler:work), in the same step as the state's record of it; with a fleet,
  -- before its acknowledgement (and not at all when it is cancelled: it goes back).
  local req = self.kept and page and page.request
  if req and req.working then
    local held = req.held
    if not held then
      held = {}
      req.held = held
    end
    held[#held + 1] = item
    return true
  end
  return self:write_item(item)
end

function Crawler:write_item(item)
  for _, out in ipairs(self.outputs) do
    -- An output that raises (a function output, an item it cannot encode, its where)
    -- refuses the item as one that returns nil, err does.
    local ok, wok, err = true, true, nil
    if out.where then ok, wok = pcall(out.takes, out, item) end
    if ok and wok then
      ok, wok, err = pcall(out.write, out, item)
    elseif ok then
      wok = true -- not this output's
    end
    if not ok then
      if is_cancel(wok) then error(wok, 0) end
      err = wok
    end
    if out.failed then
      self:output_failed(out)
    elseif not (ok and wok) then
      self.stats.output_errors = self.stats.output_errors + 1
      self:log(("output %s: %s"):format(tostring(out.name), error_message(err)))
    end
    if out.warning then losses.warn_once(self, out, out.warning) end
  end
  -- A program embedding the engine takes items too (lc_engine_on_item).
  local to_host = lc.host._item
  if to_host then to_host(item) end
  return true
end

-- A write, flush or close of a file output failed (export.lua): its records are lost
-- from then on, so the crawl stops rather than fetch pages it cannot record; the
-- items it lost are not counted in stats.items (items_lost: the most one output
-- lost). Logged and counted in output_errors once per output.
function Crawler:output_failed(out)
  local st = self.stats
  if out.lost > st.items_lost then
    st.items = st.items - (out.lost - st.items_lost)
    st.items_lost = out.lost
  end
  self.broken_outputs = self.broken_outputs or {}
  if self.broken_outputs[out] then return end
  self.broken_outputs[out] = true
  st.output_errors = st.output_errors + 1
  st.output_failed = st.output_failed or out.failed
  self:log(("output failed: %s: stopping the crawl"):format(out.failed))
  self:stop("output_failed")
end

-- With a state: the items a page emitted, written as its request is done (not when
-- it was cancelled: then it is not done, and is fetched again at the next run).
function Crawler:write_held(req, done)
  req.working = nil
  local held = req.held
  req.held = nil
  if not done then
    req.retrying = true -- its row stays
    return
  end
  for _, item in ipairs(held or {}) do
    local ok, err = pcall(self.write_item, self, item)
    if not ok then self:report(req, err, "error writing an item of %s: %s") end
  end
end

-- out:flush() or out:close() on every output; failures counted and logged.
function Crawler:each_output(method)
  for _, out in ipairs(self.outputs) do
    local ok, mok, err = pcall(out[method], out)
    if not ok then err = mok end
    if out.failed then
      self:output_failed(out)
    elseif not (ok and mok) then
      self.stats.output_errors = self.stats.output_errors + 1
      self:log(error_message(err))
    end
  end
end

function Crawler:flush_outputs()
  self:each_output("flush")
end

function Crawler:close_outputs()
  self:each_output("close")
  if self.warc then self.warc:close() end
end

-- Without a state (whose commits flush them), the outputs are flushed every second.
function Crawler:flush_loop()
  while true do
    lc.sleep(1)
    self:flush_outputs()
  end
end

-- spec.save: the body kept as DIR/HOST/PATH (luacrawl/save.lua). A body that cannot
-- be written is counted and said once per message kind; the crawl goes on (the
-- records and the archive are the crawl's outputs, the files a copy for reading).
function Crawler:save(res)
  local ok, err = require("luacrawl.save").write(self.save_dir, res.url, rawget(res, "_body") or res.body)
  if ok then
    self.stats.saved = (self.stats.saved or 0) + 1
    return
  end
  local st = self.stats
  st.save_errors = (st.save_errors or 0) + 1
  if st.save_errors == 1 then self:log(("save %s: %s"):format(res.url, err.message or tostring(err))) end
end

return M
