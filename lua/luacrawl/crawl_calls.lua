-- luacrawl.crawl_calls: how the crawl takes what the code it calls hands back: a
-- hook's answer (false drops, a table replaces, nil keeps), an error that is a task's
-- cancel (passed on, never reported), and the message of any error raised.
local M = {}

-- An error a task raises when it is cancelled (the crawl ending): passed on, never
-- reported.
function M.is_cancel(err)
  return type(err) == "table" and err.kind == "cancelled"
end

-- The message of an error raised in a task, as a string; a fixed one when even that
-- fails (a __tostring that raises, no memory left to format it).
function M.error_message(err)
  if type(err) == "string" then return err end
  local ok, msg = pcall(tostring, err)
  if ok and type(msg) == "string" then return msg end
  return "an error whose message could not be made"
end

-- Apply a hook: false drops, a table replaces, nil keeps.
function M.apply_hook(hook, value, ...)
  if not hook then return value end
  local r = hook(value, ...)
  if r == false then return nil end
  if type(r) == "table" then return r end
  return value
end

return M
