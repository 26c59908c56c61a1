-- luacrawl.http_date: HTTP dates (RFC 9110 5.6.7) as seconds since the epoch, and
-- the wait a Retry-After header asks for (RFC 9110 10.2.3). Recipients must take
-- the three forms: IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), the obsolete
-- RFC 850 form ("Sunday, 06-Nov-94 08:49:37 GMT") and asctime's ("Sun Nov  6
-- 08:49:37 1994"). The day name is not checked against the date, as curl does not.
local M = {}

local MONTHS = { jan = 1, feb = 2, mar = 3, apr = 4, may = 5, jun = 6, jul = 7, aug = 8, sep = 9,
  oct = 10, nov = 11, dec = 12 }

-- Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (Howard
-- Hinnant's days_from_civil), without os.time, which reads the local time zone.
local function days_from_civil(y, m, d)
  if m <= 2 then y = y - 1 end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local mp = (m + 9) % 12
  local doy = math.floor((153 * mp + 2) / 5) + d - 1
  local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
end

local function epoch(y, mon, d, hh, mm, ss)
  local m = MONTHS[mon:lower()]
  y, d, hh, mm, ss = tonumber(y), tonumber(d), tonumber(hh), tonumber(mm), tonumber(ss)
  if not m or d < 1 or d > 31 or hh > 23 or mm > 59 or ss > 60 then return nil end
  return days_from_civil(y, m, d) * 86400 + hh * 3600 + mm * 60 + ss
end

-- Seconds since the epoch of an HTTP date, nil when v is none of the three forms.
-- now (seconds since the epoch) places an RFC 850 two-digit year: one that would
-- be more than 50 years ahead is the latest past year with those digits.
function M.parse(v, now)
  local d, mon, y, hh, mm, ss = v:match("^%s*%a+, (%d%d) (%a%a%a) (%d%d%d%d) (%d%d):(%d%d):(%d%d) GMT%s*$")
  if d then return epoch(y, mon, d, hh, mm, ss) end
  d, mon, y, hh, mm, ss = v:match("^%s*%a+, (%d%d)%-(%a%a%a)%-(%d%d) (%d%d):(%d%d):(%d%d) GMT%s*$")
  if d then
    local this_year = tonumber(os.date("!%Y", now or os.time()))
    local year = this_year - this_year % 100 + tonumber(y)
    if year > this_year + 50 then year = year - 100 end
    return epoch(year, mon, d, hh, mm, ss)
  end
  mon, d, hh, mm, ss, y = v:match("^%s*%a%a%a (%a%a%a) ([ %d]%d) (%d%d):(%d%d):(%d%d) (%d%d%d%d)%s*$")
  if mon then return epoch(y, mon, d:gsub(" ", ""), hh, mm, ss) end
  return nil
end

-- The seconds a Retry-After value asks to wait: delay-seconds (digits only:
-- tonumber would take "nan", "inf" and hex from a server), or an HTTP date less
-- the response's Date (the server's clock, so a skewed clock here does not matter;
-- this machine's clock when Date is missing or bad). A date in the past is 0; a
-- value of neither form is nil.
function M.retry_after(value, date_header, now)
  if not value then return nil end
  local digits = value:match("^%s*(%d+)%s*$")
  if digits then return tonumber(digits) end
  now = now or os.time()
  local at = M.parse(value, now)
  if not at then return nil end
  local base = date_header and M.parse(date_header, now) or now
  return math.max(0, at - base)
end

return M
