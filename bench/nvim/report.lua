-- bench/nvim: the figures of bench/nvim/latency.lua's times, printed as bench/serve's
-- searchab prints its own: each query's medians in the four ways, the slowest query
-- of each way, the set's median over the unknown method's round trip (issue 33:
-- <= 2x) and the slowest query at top 10 (<= 5 ms), FAIL lines for missed targets.
--
--   nvim -l bench/nvim/report.lua [--targets] TIMES.tsv ...
--
-- Without --targets (the quick run on the sample run) no target is checked. It exits
-- 1 when a request failed, a way was not timed, every answer was empty, or the server
-- did not settle before the rounds (`info settled timeout`: diagnostics or the server's
-- CPU still coming, so the times may hold their cost; an ERROR line, not a figure to
-- trust); a missed target is a FAIL line only.

local MAX_OVER_UNKNOWN = 2.0
local MAX_TOP10_NS = 5e6
local WAYS = { 'top 5', 'top 10', 'no context, top 5', 'no context, top 10' }
local UNKNOWN_OF = { ['top 5'] = 'context', ['top 10'] = 'context', ['no context, top 5'] = 'no context', ['no context, top 10'] = 'no context' }

local targets = false
local files = {}
for _, a in ipairs(arg) do
  if a == '--targets' then
    targets = true
  else
    files[#files + 1] = a
  end
end

-- The p-th value of the sorted times as bench/serve's pct takes it (the lower middle
-- of an even count for the median).
local function pct(xs, p)
  if #xs == 0 then
    return 0
  end
  local s = {}
  for i, x in ipairs(xs) do
    s[i] = x
  end
  table.sort(s)
  local k = math.floor(p * #s + 0.999999)
  return s[math.max(1, math.min(k, #s))]
end
local function ms(ns)
  return ('%.3f ms'):format(ns / 1e6)
end

local per = {} -- per[way][label] = {ns...}
local items = {} -- items[way] = {answers, with items}
local all = {} -- all[way] = {ns...}
local unknown = {} -- unknown[context|no context] = {ns...}
local labels, seen = {}, {}
local info = {} -- info[file][key] = value
local errors = {}
for _, f in ipairs(files) do
  info[f] = {}
  for l in io.lines(f) do
    local fields = vim.split(l, '\t', { plain = true })
    local kind = fields[1]
    if kind == 'search' then
      local way, label, ns, n = fields[2], fields[3], tonumber(fields[4]), tonumber(fields[5])
      per[way] = per[way] or {}
      per[way][label] = per[way][label] or {}
      table.insert(per[way][label], ns)
      all[way] = all[way] or {}
      table.insert(all[way], ns)
      items[way] = items[way] or { 0, 0 }
      items[way][1] = items[way][1] + 1
      items[way][2] = items[way][2] + (n > 0 and 1 or 0)
      if not seen[label] then
        seen[label] = true
        labels[#labels + 1] = label
      end
    elseif kind == 'unknown' then
      unknown[fields[2]] = unknown[fields[2]] or {}
      table.insert(unknown[fields[2]], tonumber(fields[3]))
    elseif kind == 'info' then
      info[f][fields[2]] = fields[3]
    elseif kind == 'error' then
      errors[#errors + 1] = fields[2]
    end
  end
end

local function say(s)
  io.stdout:write(s, '\n')
end

for _, f in ipairs(files) do
  local i = info[f]
  say(('%s (%s, run %s): opened %s; ready (run/info done) %.2f s after Neovim started, settled %.2f s; %s'):format(
    i.way or f, i.nvim or '?', i.run or '?', i.file or '?', (tonumber(i.ready_ms) or 0) / 1000, (tonumber(i.settled_ms) or 0) / 1000, i.indexed or '?'))
  say(('  diagnostics published to Neovim: %s before the rounds, %s during them'):format(i.diagnostics_before or '?', i.diagnostics_during or '?'))
  if i.requests then
    local n = tonumber(i.requests)
    say(('  CPU a request (%d timed, searches and unknown methods): the server %s µs, Neovim %s µs; Neovim\'s a search %s µs, an unknown method %s µs'):format(n,
      i.server_cpu_ms and ('%.0f'):format(tonumber(i.server_cpu_ms) * 1000 / n) or '?',
      ('%.0f'):format(tonumber(i.nvim_cpu_ms) * 1000 / n), i.nvim_cpu_search_us or '?', i.nvim_cpu_unknown_us or '?'))
  end
end

say(('\n%-44s %10s %10s %10s %14s %14s'):format('query (medians; the p99 at top 5)', 'top 5', 'p99', 'top 10', 'no ctx, top 5', 'no ctx, top 10'))
local function cell(way, label, p)
  local xs = per[way] and per[way][label]
  return xs and ms(pct(xs, p)) or '-'
end
for _, l in ipairs(labels) do
  say(('%-44s %10s %10s %10s %14s %14s'):format(l:sub(1, 44), cell('top 5', l, 0.5), cell('top 5', l, 0.99),
    cell('top 10', l, 0.5), cell('no context, top 5', l, 0.5), cell('no context, top 10', l, 0.5)))
end

local fails, broken = {}, {}
for _, f in ipairs(files) do
  local i = info[f]
  if i.settled == 'timeout' then
    broken[#broken + 1] = ('%s: the server did not settle within %s s (diagnostics or its CPU still coming): the times are not to be trusted'):format(
      i.way or f, i.settle_timeout_s or '?')
  end
end
for _, way in ipairs(WAYS) do
  local slowest, top
  for label, xs in pairs(per[way] or {}) do
    local m = pct(xs, 0.5)
    if not slowest or m > top or (m == top and label < slowest) then
      slowest, top = label, m
    end
  end
  if slowest then
    say(('slowest, %s: %s, median %s'):format(way, slowest, ms(top)))
    if way:match('top 10$') and top > MAX_TOP10_NS then
      fails[#fails + 1] = ('%s, %s: median %s > %s'):format(slowest, way, ms(top), ms(MAX_TOP10_NS))
    end
  end
end
for _, way in ipairs(WAYS) do
  local u = pct(unknown[UNKNOWN_OF[way]] or {}, 0.5)
  if not all[way] then
    broken[#broken + 1] = ('%s: no search timed'):format(way)
  elseif u == 0 then
    broken[#broken + 1] = ('%s: no round trip of the unknown method timed'):format(way)
  else
    local m = pct(all[way], 0.5)
    local over = m / u
    say(("the set's median, %s: %s, %.1fx the round trip %s (target <= %.0fx)"):format(way, ms(m), over, ms(u), MAX_OVER_UNKNOWN))
    if over > MAX_OVER_UNKNOWN then
      fails[#fails + 1] = ("the set's median, %s: %s = %.1fx the round trip %s > %.0fx"):format(way, ms(m), over, ms(u), MAX_OVER_UNKNOWN)
    end
  end
end
for _, c in ipairs({ 'context', 'no context' }) do
  local xs = unknown[c] or {}
  say(('unknown method, %s (%d): median %s, p90 %s, p99 %s'):format(c, #xs, ms(pct(xs, 0.5)), ms(pct(xs, 0.9)), ms(pct(xs, 0.99))))
end

local answers, with = 0, 0
local parts = {}
for _, way in ipairs(WAYS) do
  local it = items[way] or { 0, 0 }
  answers, with = answers + it[1], with + it[2]
  parts[#parts + 1] = ('%s %d of %d'):format(way, it[2], it[1])
end
say(('answers with items: %s; failed requests: %d'):format(table.concat(parts, ', '), #errors))
for i, e in ipairs(errors) do
  if i > 10 then
    broken[#broken + 1] = ('%d more failed requests'):format(#errors - 10)
    break
  end
  broken[#broken + 1] = e
end
if answers > 0 and with == 0 then
  broken[#broken + 1] = 'every answer was empty'
end
if targets then
  for _, f in ipairs(fails) do
    say('FAIL: ' .. f)
  end
  if #fails == 0 then
    say('PASS')
  end
end
for _, b in ipairs(broken) do
  say('ERROR: ' .. b)
end
os.exit(#broken > 0 and 1 or 0)
