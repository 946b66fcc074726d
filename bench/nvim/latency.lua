-- bench/nvim: issue 33's search latency as Neovim's own LSP client gets it. One
-- headless Neovim, set up as a user sets the plugin up, opens a file of the run
-- (the client starts with the run as its root), waits for the first index or
-- reopen to end and the server to settle, then asks bench/serve's query set
-- (`-mode queries`) round after round: each query at top 5 and top 10, then one
-- request to an unknown method. Each is timed with vim.uv.hrtime() from just
-- before client:request() to its handler being called, so a time includes
-- Neovim's own encoding, decoding and event loop: what a user gets.
--
-- Run by bench/nvim.sh, once with the set's context (episode, conversation in
-- setup()) and once without, as
--   nvim --headless -u NONE -i NONE -n -c 'lua dofile("bench/nvim/latency.lua")'
-- with RUNLS_NVIM_PLUGIN (editors/neovim), RUNLS_NVIM_BIN (runls),
-- RUNLS_NVIM_SET (the set's JSON), RUNLS_NVIM_CONTEXT (1: with it),
-- RUNLS_NVIM_ROUNDS, RUNLS_NVIM_OUT (the times, a TSV file), and optionally
-- RUNLS_NVIM_READY_TIMEOUT (seconds for the index to end, default 900),
-- RUNLS_NVIM_QUIET (seconds without a diagnostic before the rounds, default 2),
-- RUNLS_NVIM_SETTLE_TIMEOUT (seconds to wait for that and the server's CPU, 300) and
-- RUNLS_NVIM_REQUEST_TIMEOUT (seconds for one answer, 60).
-- It writes lines to RUNLS_NVIM_OUT (bench/nvim/report.lua reads them):
--   search  WAY LABEL NS ITEMS   a timed run/search (WAY: top 5, no context, top 10, ...)
--   unknown WAY NS               a timed request to the unknown method
--   info    KEY VALUE            what the run was (Neovim's version, the file, the reopen)
--   error   TEXT                 a request failed: bench/nvim.sh exits 1
--   info    settled timeout      the server did not settle within SETTLE_TIMEOUT: the
--                                times are written, but report.lua says ERROR and exits 1
-- and returns; an error (it could not measure: no client, run/info not done in
-- time, a request unanswered within REQUEST_TIMEOUT, the server exited) makes
-- bench/nvim.sh's Neovim stop the clients and exit 2.

local env = vim.env
local t_start = vim.uv.hrtime()

local function need(name)
  local v = env[name]
  if v == nil or v == '' then
    error(name .. ' unset', 0)
  end
  return v
end

local PLUGIN = need('RUNLS_NVIM_PLUGIN')
local BIN = need('RUNLS_NVIM_BIN')
local CONTEXT = need('RUNLS_NVIM_CONTEXT') == '1'
local ROUNDS = tonumber(need('RUNLS_NVIM_ROUNDS'))
local READY_TIMEOUT = (tonumber(env.RUNLS_NVIM_READY_TIMEOUT) or 900) * 1000
local REQUEST_TIMEOUT = (tonumber(env.RUNLS_NVIM_REQUEST_TIMEOUT) or 60) * 1000
local QUIET = tonumber(env.RUNLS_NVIM_QUIET) or 2
local SETTLE_TIMEOUT = tonumber(env.RUNLS_NVIM_SETTLE_TIMEOUT) or 300
local UNKNOWN = 'runls/noSuchMethod'
local METHOD_NOT_FOUND = -32601

local set = vim.json.decode(table.concat(vim.fn.readfile(need('RUNLS_NVIM_SET')), '\n'))
local RUN = assert(vim.uv.fs_realpath(set.run), 'the set\'s run folder does not exist: ' .. tostring(set.run))
local out = assert(io.open(need('RUNLS_NVIM_OUT'), 'w'))

local function line(...)
  out:write(table.concat({ ... }, '\t'), '\n')
end

local errors = 0
local function record_error(text)
  errors = errors + 1
  line('error', (text:gsub('[\t\n]', ' ')))
end

if vim.fn.has('nvim-0.11') == 0 then
  error('the plugin needs Neovim 0.11 or later, this is ' .. tostring(vim.version()), 0)
end

-- Set up as a user does: the plugin on the runtimepath, filetypes on, setup() with
-- the context (or none) and the server's command.
vim.opt.swapfile = false
vim.opt.rtp:prepend(PLUGIN)
vim.cmd('filetype plugin on')
vim.cmd('syntax on')
vim.cmd('runtime! plugin/runls.lua')
vim.notify = function() end -- no message waits for a key in a headless Neovim
local opts = { cmd = { BIN, 'serve' }, open_list = false }
if CONTEXT then
  for k, v in pairs((set.settings or {}).runls or {}) do
    opts[k] = v
  end
end
-- The diagnostics the server publishes, counted (and handled as always): the rounds
-- start once they stop.
local diagnostics = { n = 0, last = vim.uv.hrtime() }
local publish = vim.lsp.handlers['textDocument/publishDiagnostics']
vim.lsp.handlers['textDocument/publishDiagnostics'] = function(...)
  diagnostics.n, diagnostics.last = diagnostics.n + 1, vim.uv.hrtime()
  return publish(...)
end
require('runls').setup(opts)
-- The server in Neovim's process group (Neovim's default detaches it): a timeout
-- or ^C that signals the group (test.sh's `timeout`) ends the server too, where a
-- detached one would be left running. How the server is spawned, not what it is
-- asked: the times are the same.
vim.lsp.config('runls', { detached = false })

-- The smallest record file of the run: opening it starts the client on the run's root.
local file, size
for name, kind in vim.fs.dir(RUN, { depth = 3 }) do
  if kind == 'file' and name:match('^episode%-%d+/[^/]+/[^/]+%.') and (name:match('%.history$') or name:match('%.log$')) then
    local st = vim.uv.fs_stat(RUN .. '/' .. name)
    if st and (not size or st.size < size) then
      file, size = RUN .. '/' .. name, st.size
    end
  end
end
assert(file, 'no .history or .log file under ' .. RUN .. '/episode-N/<agent>/')
vim.cmd.edit(vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
line('info', 'way', CONTEXT and 'with the context' or 'without the context')
line('info', 'nvim', 'Neovim ' .. tostring(vim.version()))
line('info', 'run', RUN)
line('info', 'file', file)

local client
assert(vim.wait(30000, function()
  client = vim.lsp.get_clients({ name = 'runls', bufnr = buf })[1]
  return client ~= nil and client.initialized
end, 10), 'no runls client attached to ' .. file .. ' within 30 s (filetype ' .. vim.bo[buf].filetype .. ')')
assert(client.root_dir and vim.uv.fs_realpath(client.root_dir) == RUN,
  ('the client\'s root is %s, not the run %s'):format(tostring(client.root_dir), RUN))

--- One request, answered: err, result and the time from just before
--- client:request() to the handler's call, in ns.
local function call(method, params)
  local got, err, result, t1
  local t0 = vim.uv.hrtime()
  local ok = client:request(method, params, function(e, r)
    t1 = vim.uv.hrtime()
    got, err, result = true, e, r
  end, buf)
  if not ok then
    -- The client is stopped (its server gone): so would every later request be.
    error('client:request refused ' .. method .. ' (the server exited?)', 0)
  end
  if not vim.wait(REQUEST_TIMEOUT, function() return got end, 1) then
    -- A server that stops answering ends the measurement: every later request
    -- would wait its REQUEST_TIMEOUT too (hours over a full run's requests).
    error(('%s: no answer within %d s'):format(method, REQUEST_TIMEOUT / 1000), 0)
  end
  return err, result, t1 - t0
end

-- Ready: run/info says the index is done (a first index, or a reopen).
local deadline = vim.uv.hrtime() + READY_TIMEOUT * 1e6
while true do
  local err, info = call('run/info', vim.empty_dict())
  if err then
    error('run/info: ' .. tostring(err.message), 0)
  end
  local ix = (info or {}).indexing or {}
  if ix.done then
    -- QUIET counts from here: diagnostics that come after the index are the
    -- ones waited for, and none may have come yet.
    diagnostics.last = math.max(diagnostics.last, vim.uv.hrtime())
    line('info', 'ready_ms', ('%.1f'):format((vim.uv.hrtime() - t_start) / 1e6))
    line('info', 'indexed', ('%d files, %d bytes'):format(ix.files or 0, ix.bytes or 0))
    break
  end
  if vim.uv.hrtime() > deadline then
    error('run/info did not say done within ' .. READY_TIMEOUT / 1000 .. ' s', 0)
  end
  vim.wait(100)
end

-- The server's process (Neovim's child) and its CPU time, from /proc.
local server_pid
for _, pid in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
  local comm = (vim.fn.readfile('/proc/' .. pid .. '/comm')[1] or '')
  if comm ~= '' and vim.startswith(vim.fs.basename(BIN), comm) then
    server_pid = pid
  end
end
local TICK = 100 -- clock ticks a second of /proc/PID/stat (USER_HZ)
local function server_cpu_ms()
  if not server_pid then
    return nil
  end
  local ok, stat = pcall(vim.fn.readfile, '/proc/' .. server_pid .. '/stat')
  if not ok or not stat[1] then
    return nil
  end
  local fields = vim.split(stat[1]:gsub('^.*%) ', ''), ' ')
  -- After "pid (comm) ": state is field 3, utime 14 and stime 15.
  return (tonumber(fields[12]) + tonumber(fields[13])) * 1000 / TICK
end
local function nvim_cpu_ms()
  local ru = vim.uv.getrusage()
  return (ru.utime.sec + ru.stime.sec) * 1000 + (ru.utime.usec + ru.stime.usec) / 1000
end

-- Settled: the server's CPU stops growing (its merges done), as bench/serve's
-- searchab waits, and no diagnostics have come for QUIET seconds. After a reopen
-- the server publishes every record file's diagnostics at the client's pace (at
-- 1 GB some 360 KB of Hints a file), and while requests come it still sends one
-- file a second (lsp/doc.go): Neovim decoding and setting those during the rounds
-- would be timed as the searches' cost. At most SETTLE_TIMEOUT seconds.
local settle_deadline = vim.uv.hrtime() + SETTLE_TIMEOUT * 1e9
local last = server_cpu_ms()
local settled = false
while vim.uv.hrtime() < settle_deadline do
  vim.wait(300)
  local now = server_cpu_ms()
  if (last and not now) or client:is_stopped() then
    error('the server exited', 0)
  end
  local cpu_quiet = not last or now - last <= 10
  last = now
  if cpu_quiet and vim.uv.hrtime() - diagnostics.last >= QUIET * 1e9 then
    settled = true
    break
  end
end
if not settled then
  -- Measured all the same (the figures say how slow it is), but not to be trusted:
  -- report.lua prints an ERROR line and exits 1.
  line('info', 'settled', 'timeout')
  line('info', 'settle_timeout_s', tostring(SETTLE_TIMEOUT))
end
line('info', 'diagnostics_before', tostring(diagnostics.n))
line('info', 'settled_ms', ('%.1f'):format((vim.uv.hrtime() - t_start) / 1e6))

local ways = CONTEXT and { { 'top 5', 5 }, { 'top 10', 10 } } or { { 'no context, top 5', 5 }, { 'no context, top 10', 10 } }
local unknown_way = CONTEXT and 'context' or 'no context'

local function params_of(q, topK)
  local p = vim.deepcopy(CONTEXT and q.context or q.noContext)
  p.topK = topK
  return p
end

--- One query at both sizes and the unknown method after them; times written when
--- timed, the answers checked always.
local own = { search = { 0, 0 }, unknown = { 0, 0 } } -- Neovim's CPU ms and requests, by kind
local function ask(q, timed)
  for _, way in ipairs(ways) do
    local c0 = nvim_cpu_ms()
    local err, result, ns = call('run/search', params_of(q, way[2]))
    if timed then
      own.search[1], own.search[2] = own.search[1] + nvim_cpu_ms() - c0, own.search[2] + 1
    end
    if err then
      record_error(('run/search %q, %s: %s'):format(q.label, way[1], tostring(err.message)))
    elseif type(result) ~= 'table' or type(result.items) ~= 'table' then
      record_error(('run/search %q, %s: no items in the answer'):format(q.label, way[1]))
    elseif timed then
      line('search', way[1], q.label, tostring(ns), tostring(#result.items))
    end
  end
  local c0 = nvim_cpu_ms()
  local err, _, ns = call(UNKNOWN, vim.empty_dict())
  if timed then
    own.unknown[1], own.unknown[2] = own.unknown[1] + nvim_cpu_ms() - c0, own.unknown[2] + 1
  end
  if not err or err.code ~= METHOD_NOT_FOUND then
    record_error(('%s: want MethodNotFound (%d), got %s'):format(UNKNOWN, METHOD_NOT_FOUND, vim.inspect(err)))
  elseif timed then
    line('unknown', unknown_way, tostring(ns))
  end
end

-- A warm-up round, untimed, then the rounds.
for _, q in ipairs(set.queries) do
  ask(q, false)
end
local cpu0, ncpu0 = server_cpu_ms(), nvim_cpu_ms()
local diagnostics_at_start = diagnostics.n
local requests = 0
for _ = 1, ROUNDS do
  for _, q in ipairs(set.queries) do
    ask(q, true)
    requests = requests + #ways + 1
  end
end
local cpu1, ncpu1 = server_cpu_ms(), nvim_cpu_ms()
line('info', 'requests', tostring(requests))
line('info', 'diagnostics_during', tostring(diagnostics.n - diagnostics_at_start))
if cpu0 and cpu1 then
  line('info', 'server_cpu_ms', ('%.0f'):format(cpu1 - cpu0))
end
line('info', 'nvim_cpu_ms', ('%.0f'):format(ncpu1 - ncpu0))
-- Neovim's own CPU a request of each kind (its encoding, decoding, event loop and
-- the wait's polling): the editor's part of a round trip.
line('info', 'nvim_cpu_search_us', ('%.1f'):format(own.search[1] * 1000 / math.max(own.search[2], 1)))
line('info', 'nvim_cpu_unknown_us', ('%.1f'):format(own.unknown[1] * 1000 / math.max(own.unknown[2], 1)))

-- The server stopped before Neovim quits, so that the next one starts on a quiet machine.
client:stop()
vim.wait(10000, function() return client:is_stopped() end, 20)
line('info', 'errors', tostring(errors))
out:close()
