-- Headless tests of the runls Neovim plugin against the real runls binary.
-- Run by scripts/test.sh as:
--   nvim --headless -u NONE -i NONE -n -c 'luafile tests/run.lua'
-- with RUNLS_TEST_PLUGIN (this plugin's folder), RUNLS_TEST_BIN (the runls binary),
-- RUNLS_TEST_RUN (a scratch copy of testdata/sample-run), RUNLS_TEST_INTERPRETER
-- (testdata/interpreter.json) and RUNLS_TEST_TMP (a scratch folder) set.
-- Prints one line per test and a last line `N passed, N failed`; exits 1 on failure.

local env = vim.env
local PLUGIN = assert(env.RUNLS_TEST_PLUGIN, 'RUNLS_TEST_PLUGIN unset')
local BIN = assert(env.RUNLS_TEST_BIN, 'RUNLS_TEST_BIN unset')
local RUN = assert((vim.uv.fs_realpath((assert(env.RUNLS_TEST_RUN, 'RUNLS_TEST_RUN unset')))))
local INTERPRETER = assert(env.RUNLS_TEST_INTERPRETER, 'RUNLS_TEST_INTERPRETER unset')
local TMP = assert(env.RUNLS_TEST_TMP, 'RUNLS_TEST_TMP unset')
local ONLY = env.RUNLS_TEST_ONLY -- run only tests whose name contains one of these (comma-separated)
local TIMEOUT = 20000

local function out(s)
  io.stdout:write(s .. '\n')
  io.stdout:flush()
end

-- Fixtures added to the scratch run -----------------------------------------

local function write(path, text)
  vim.fn.mkdir(vim.fs.dirname(path), 'p')
  local fd = assert(io.open(path, 'wb'))
  fd:write(text)
  fd:close()
end

-- A `said` record whose message follows non-ASCII text (ë: 2 bytes, 1 UTF-16 unit;
-- 😀: 4 bytes, 2 units), so its piece starts at a byte column unlike its UTF-16 one.
local DAVE_HISTORY = RUN .. '/episode-2/dave/dave.history'
write(
  DAVE_HISTORY,
  '2026-10-21 18:29:00 [running] [-] Dave has started episode 2.\n'
    .. '2026-10-21 18:30:00 [running] [conv-1] Zoë😀 said: zebracorn sighting near the quay, über-rare.\n'
)
-- A note line longer than 2000 UTF-16 units, emoji first: its second piece starts
-- near UTF-16 column 2000 and byte column ~3300.
local DAVE_LONG = RUN .. '/episode-2/dave/long.txt'
write(DAVE_LONG, 'intro line\n' .. string.rep('😀 ', 700) .. 'quasar finale of the long line\n')

-- Harness ---------------------------------------------------------------------

local tests = {}
local function test(name, fn)
  tests[#tests + 1] = { name = name, fn = fn }
end

local function fail(msg, level)
  error(msg, (level or 1) + 1)
end

local function eq(want, got, what)
  if not vim.deep_equal(want, got) then
    fail(('%s: want %s, got %s'):format(what or 'value', vim.inspect(want), vim.inspect(got)), 2)
  end
end

local function ok(cond, what)
  if not cond then
    fail(what or 'assertion failed', 2)
  end
end

local notifications = {}
vim.notify = function(msg, level, opts)
  notifications[#notifications + 1] = { msg = msg, level = level or vim.log.levels.INFO }
  if env.RUNLS_TEST_VERBOSE then
    out(('notify(%s): %s'):format(tostring(level), tostring(msg)))
  end
end

--- Runs `fn` and waits for `User <pattern>`; returns the event data.
local function await_user(pattern, fn)
  local got
  local id = vim.api.nvim_create_autocmd('User', {
    pattern = pattern,
    once = true,
    callback = function(ev)
      got = ev.data or {}
    end,
  })
  fn()
  local done = vim.wait(TIMEOUT, function()
    return got ~= nil
  end, 20)
  pcall(vim.api.nvim_del_autocmd, id)
  if not done then
    fail('timed out waiting for User ' .. pattern, 2)
  end
  return got
end

local function utf16_to_byte(s, units)
  -- Independent of vim.str_byteindex (which the plugin uses).
  local i, u = 1, 0
  while u < units and i <= #s do
    local c = s:byte(i)
    local len = c < 0x80 and 1 or c < 0xE0 and 2 or c < 0xF0 and 3 or 4
    u = u + (len == 4 and 2 or 1)
    i = i + len
  end
  return i - 1
end

local function file_lines(path)
  local lines = {}
  for l in io.lines(path) do
    lines[#lines + 1] = l
  end
  return lines
end

local function real(path)
  return vim.uv.fs_realpath(path) or path
end

--- The quickfix (or location) list as {file, lnum, col} triples.
local function list_positions(loclist)
  local items = loclist and vim.fn.getloclist(0) or vim.fn.getqflist()
  local pos = {}
  for _, it in ipairs(items) do
    pos[#pos + 1] = { real(vim.api.nvim_buf_get_name(it.bufnr)), it.lnum, it.col }
  end
  return pos
end

local current = { episode = 'episode-2', conversation = 'conv-1', topK = 10, agent = '' }

--- `runls search` on the command line for the same request as the plugin's settings.
--- Returns the JSON result converted to {file, lnum, byte col} and the text output's
--- {file, lnum, col} (columns computed by runls itself), plus the exit code.
local function cli(query, over, run)
  run = run or RUN
  local req = vim.tbl_extend('force', current, over or {})
  local args = { BIN, 'search', '--episode', req.episode, '--conversation', req.conversation, '--top-k', tostring(req.topK), '--interpreter', INTERPRETER }
  if req.agent ~= '' then
    vim.list_extend(args, { '--agent', req.agent })
  end
  local json_args = vim.list_extend(vim.deepcopy(args), { '--json', run })
  vim.list_extend(json_args, vim.split(query, ' '))
  local text_args = vim.list_extend(vim.deepcopy(args), { run })
  vim.list_extend(text_args, vim.split(query, ' '))

  local res = vim.system(json_args, { text = true, cwd = run }):wait(TIMEOUT)
  ok(res.code == 0 or res.code == 1, ('runls search --json exit %s: %s'):format(tostring(res.code), res.stderr))
  local decoded = vim.json.decode(res.stdout ~= '' and res.stdout or '{"items":[]}')
  local from_json, cache = {}, {}
  for _, it in ipairs(decoded.items or {}) do
    local f = real(vim.uri_to_fname(it.location.uri))
    cache[f] = cache[f] or file_lines(f)
    local s = it.location.range.start
    from_json[#from_json + 1] = { f, s.line + 1, utf16_to_byte(cache[f][s.line + 1], s.character) + 1 }
  end

  local tres = vim.system(text_args, { text = true, cwd = run }):wait(TIMEOUT)
  eq(res.code, tres.code, 'exit code of text and --json output')
  local from_text = {}
  for _, line in ipairs(vim.split(tres.stdout, '\n', { trimempty = true })) do
    local path, lnum, col = line:match('^(.-):(%d+):(%d+): ')
    ok(path, 'unparsable runls search line: ' .. line)
    from_text[#from_text + 1] = { real(run .. '/' .. path), tonumber(lnum), tonumber(col) }
  end
  return from_json, from_text, res.code, decoded
end

local function search(query, loclist)
  local data = await_user('RunlsSearch', function()
    vim.cmd((loclist and 'Runls lsearch ' or 'Runls search ') .. query)
  end)
  return data, list_positions(loclist)
end

local function runls_client()
  return vim.lsp.get_clients({ name = 'runls' })[1]
end

-- Setup -------------------------------------------------------------------------

vim.opt.swapfile = false
if env.RUNLS_TEST_MODE == 'packadd' then
  -- Installed as an optional package, as the README says, and loaded with :packadd.
  local opt = TMP .. '/site/pack/runls/opt'
  vim.fn.mkdir(opt, 'p')
  assert(vim.uv.fs_symlink(PLUGIN, opt .. '/runls'))
  vim.opt.packpath:prepend(TMP .. '/site')
  vim.cmd('filetype plugin on')
  vim.cmd('syntax on')
  vim.cmd('packadd runls')
else
  vim.opt.rtp:prepend(PLUGIN)
  vim.cmd('filetype plugin on')
  vim.cmd('syntax on')
  vim.cmd('runtime! plugin/runls.lua')
end

if env.RUNLS_TEST_MODE == 'enable' then
  -- As a user who never calls setup(): settings through vim.lsp.config only.
  vim.lsp.config('runls', {
    cmd = { BIN, 'serve' },
    settings = {
      runls = {
        episode = current.episode,
        conversation = current.conversation,
        topK = current.topK,
        interpreter = INTERPRETER,
      },
    },
  })
  vim.lsp.enable('runls')
else
  require('runls').setup({
    cmd = { BIN, 'serve' },
    episode = current.episode,
    conversation = current.conversation,
    topK = current.topK,
    interpreter = INTERPRETER,
  })
end

-- Tests -------------------------------------------------------------------------

test('filetypes: .history and .log below a run, other .log files left alone', function()
  eq('runls-history', vim.filetype.match({ filename = RUN .. '/episode-2/alice/alice.history' }), '.history')
  eq('runls-log', vim.filetype.match({ filename = RUN .. '/episode-3/bob/bob.log' }), '.log below episode-N')
  local other = TMP .. '/other.log'
  write(other, 'just a line\n')
  ok(vim.filetype.match({ filename = other }) ~= 'runls-log', 'plain .log outside a run is not runls-log')
  local rec = TMP .. '/records.log'
  write(rec, '2026-10-21 18:00:00 INFO  [running] [-] Alice chat started\n')
  vim.cmd('edit ' .. rec)
  eq('runls-log', vim.bo.filetype, 'record .log outside a run (by content)')
  vim.cmd('bwipeout')
end)

test('root_dir: the run folder from any file below it', function()
  local root = require('runls.root')
  eq(RUN, root.find(RUN .. '/episode-2/alice/scratch/todo.txt'), 'deep file')
  eq(RUN, root.find(RUN .. '/episode-10/alice/alice.history'), 'episode-10')
  eq(RUN, root.find(RUN .. '/run-notes.txt'), 'file in the run folder')
  eq(RUN, root.find(RUN .. '/archive/alice/notes.md'), 'folder not named episode-N')
  eq(nil, root.find(TMP .. '/other.log'), 'outside any run')
end)

test(':Runls search with no run file open starts the server for the current directory', function()
  local cwd = vim.fn.getcwd()
  vim.cmd('enew')
  vim.cmd('cd ' .. vim.fn.fnameescape(RUN .. '/episode-2'))
  ok(#vim.lsp.get_clients({ name = 'runls' }) == 0, 'a client runs already')
  local data, got = search('deploy database migration')
  vim.cmd('cd ' .. vim.fn.fnameescape(cwd))
  ok(not data.error, 'search error: ' .. vim.inspect(data.error))
  eq(cli('deploy database migration'), got, 'vs runls search --json')
  local c = runls_client()
  eq(RUN, real(c.root_dir), 'root of the started client')
end)

local client
test('the client attaches to a .history file with the run folder as root', function()
  vim.cmd('edit ' .. RUN .. '/episode-2/alice/alice.history')
  eq('runls-history', vim.bo.filetype, 'filetype')
  local buf = vim.api.nvim_get_current_buf()
  ok(vim.wait(TIMEOUT, function()
    local c = vim.lsp.get_clients({ name = 'runls', bufnr = buf })[1]
    return c ~= nil and c.initialized
  end, 20), 'no runls client attached')
  client = runls_client()
  eq(RUN, real(client.root_dir), 'root_dir')
  eq(1, #vim.lsp.get_clients({ name = 'runls' }), 'one client per run folder')
  ok(client.server_capabilities.workspaceSymbolProvider, 'server offers workspace/symbol')
end)

local queries = {
  'deploy database migration',
  'hotel booking',
  'Café crème naïve test',
  'zebracorn quay',
  'quasar finale',
  'migration dry-run failed',
}

test(':Runls search fills quickfix like runls search (files, lines, byte columns, order)', function()
  local total = 0
  for _, q in ipairs(queries) do
    local data, got = search(q)
    ok(not data.error, 'search error: ' .. vim.inspect(data.error))
    local want_json, want_text, code = cli(q)
    eq(want_json, got, ('quickfix vs runls search --json for %q'):format(q))
    eq(want_text, got, ('quickfix vs runls search text output for %q'):format(q))
    eq(#got > 0 and 0 or 1, code, 'CLI exit code for ' .. q)
    eq('runls: ' .. q, vim.fn.getqflist({ title = 1 }).title, 'quickfix title')
    eq(#got > 0, vim.fn.getqflist({ winid = 1 }).winid ~= 0, 'quickfix window open when there are results')
    ok(vim.bo.buftype ~= 'quickfix', 'the cursor stays out of the quickfix window')
    total = total + #got
  end
  ok(total >= 20, 'too few results over all queries: ' .. total)
  -- Nothing outside agent folders is searched.
  local _, got = search('quokka')
  eq({}, got, 'quokka')
  local _, _, code = cli('quokka')
  eq(1, code, 'CLI exit code for quokka')
end)

test('quickfix text: rank, score, time, level, conversation and reading, not the path again', function()
  search('zebracorn quay')
  local items = vim.fn.getqflist()
  ok(#items > 0, 'no items')
  local first = items[1]
  eq(real(DAVE_HISTORY), real(vim.api.nvim_buf_get_name(first.bufnr)), 'best result file')
  local it = first.user_data.runls
  ok(first.text:find('zebracorn sighting near the quay', 1, true), 'text: ' .. first.text)
  ok(not first.text:find('episode-2/dave', 1, true), 'the path is the file name, not repeated: ' .. first.text)
  local want = ('#1 %.2f %s [%s] said: '):format(it.score, it.time, it.conversation)
  eq(want, first.text:sub(1, #want), 'text begins with rank, score, time, conversation, reading')
  -- A log record's level follows its time.
  search('migration dry-run failed')
  local found
  for _, q in ipairs(vim.fn.getqflist()) do
    if q.user_data.runls.level == 'ERROR' then
      found = q
    end
  end
  ok(found, 'an ERROR record among the results')
  ok(found.text:find(found.user_data.runls.time .. ' ERROR ', 1, true), 'time and level: ' .. found.text)
end)

test('the query words are highlighted in the quickfix window', function()
  search('zebracorn quay')
  local qf = vim.fn.getqflist({ qfbufnr = 0 }).qfbufnr
  ok(qf > 0, 'quickfix buffer')
  local ns = vim.api.nvim_create_namespace('runls_matches')
  local marks = vim.api.nvim_buf_get_extmarks(qf, ns, 0, -1, { details = true })
  ok(#marks >= 2, 'highlights: ' .. #marks)
  local lines = vim.api.nvim_buf_get_lines(qf, 0, -1, false)
  for _, m in ipairs(marks) do
    local word = lines[m[2] + 1]:sub(m[3] + 1, m[4].end_col)
    ok(word:lower() == 'zebracorn' or word:lower() == 'quay', 'highlighted ' .. vim.inspect(word) .. ' in ' .. lines[m[2] + 1])
    eq('RunlsMatch', m[4].hl_group, 'highlight group')
  end
  -- Opened again later, the list is highlighted again.
  vim.cmd('cclose')
  vim.api.nvim_buf_clear_namespace(qf, ns, 0, -1)
  vim.cmd('copen')
  qf = vim.fn.getqflist({ qfbufnr = 0 }).qfbufnr
  ok(#vim.api.nvim_buf_get_extmarks(qf, ns, 0, -1, {}) >= 2, 'highlights after :copen')
  vim.cmd('wincmd p')
end)

test('a search whose filters hide evidence notifies what and how to widen it', function()
  notifications = {}
  local data = search('hotel booking')
  local _, _, _, decoded = cli('hotel booking')
  local n = decoded.hidden.otherConversation or 0
  ok(n > 0, 'the CLI says evidence was hidden: ' .. vim.inspect(decoded.hidden))
  eq(decoded.hidden, data.hidden, 'hidden counts given to User RunlsSearch')
  local said = table.concat(vim.tbl_map(function(x) return x.msg end, notifications), '\n')
  ok(said:find(('%d more in other conversations of episode-2'):format(n), 1, true), 'notified: ' .. said)
  ok(said:find(':Runls searchall', 1, true), 'with the widening command: ' .. said)
  -- The widening finds them.
  local wide = await_user('RunlsSearch', function()
    vim.cmd('Runls searchall hotel booking')
  end)
  eq(nil, (wide.hidden or {}).otherConversation, 'nothing hidden by the conversation')
  local other = false
  for _, q in ipairs(vim.fn.getqflist()) do
    local it = q.user_data.runls
    if it.episode == 'episode-2' and type(it.conversation) == 'string' and it.conversation ~= 'conv-1' and it.conversation ~= '-' then
      other = true
    end
  end
  ok(other, 'evidence of another conversation of episode-2')
  -- A request value the run lacks is a notice.
  notifications = {}
  require('runls').set({ agent = 'Alice' })
  search('hotel booking')
  said = table.concat(vim.tbl_map(function(x) return x.msg end, notifications), '\n')
  ok(said:find('no agent folder named Alice', 1, true) and said:find(':Runls set agent=alice', 1, true), 'agent notice: ' .. said)
  require('runls').set({ agent = '' })
end)

test('after an append to an open file, :cc lands on the right line', function()
  local path = RUN .. '/episode-2/alice/alice.log'
  vim.cmd('edit ' .. path)
  local buf = vim.api.nvim_get_current_buf()
  local before = vim.api.nvim_buf_line_count(buf)
  -- Lines the buffer does not have yet: a record whose word is found only there.
  local fd = assert(io.open(path, 'a'))
  fd:write('2026-10-21 18:30:00.000 INFO  [running] [conv-1] Alice first appended line\n')
  fd:write('2026-10-21 18:30:01.000 INFO  [running] [conv-1] Alice the xylophonist arrived\n')
  fd:close()
  search('xylophonist')
  local items = vim.fn.getqflist()
  eq(1, #items, 'one piece')
  eq(before + 2, items[1].lnum, 'its line')
  vim.cmd('cc 1')
  eq(before + 2, vim.api.nvim_win_get_cursor(0)[1], 'the cursor is on the appended line')
  ok(vim.api.nvim_get_current_line():find('xylophonist', 1, true), 'the buffer was read again: ' .. vim.api.nvim_get_current_line())
  eq(before + 2, vim.api.nvim_buf_line_count(buf), 'buffer lines')
end)

test('conversation ids are offered in natural order', function()
  local less = require('runls').natural_less
  local ids = { 'conv-10', 'conv-2', 'conv-1', 'conv-11', 'conv-02', 'a' }
  table.sort(ids, less)
  eq({ 'a', 'conv-1', 'conv-02', 'conv-2', 'conv-10', 'conv-11' }, ids, 'natural order')
end)

test(':cc jumps to the evidence line and byte column after non-ASCII text', function()
  -- Message after "Zoë😀 said: ": UTF-16 column 51, byte column 54.
  search('zebracorn quay')
  local items = vim.fn.getqflist()
  local idx
  for i, it in ipairs(items) do
    if real(vim.api.nvim_buf_get_name(it.bufnr)) == real(DAVE_HISTORY) then
      idx = i
    end
  end
  ok(idx, 'dave.history not in results')
  vim.cmd('cc ' .. idx)
  eq(real(DAVE_HISTORY), real(vim.api.nvim_buf_get_name(0)), 'buffer after :cc')
  local line = vim.api.nvim_get_current_line()
  local want = line:find('zebracorn', 1, true) - 1
  eq(54, want, 'fixture byte column')
  eq({ 2, want }, vim.api.nvim_win_get_cursor(0), 'cursor after :cc')

  -- The second piece of the long emoji line.
  search('quasar finale')
  items = vim.fn.getqflist()
  idx = nil
  for i, it in ipairs(items) do
    if real(vim.api.nvim_buf_get_name(it.bufnr)) == real(DAVE_LONG) then
      idx = i
    end
  end
  ok(idx, 'long.txt not in results')
  local _, want_text = cli('quasar finale')
  vim.cmd('cc ' .. idx)
  eq(real(DAVE_LONG), real(vim.api.nvim_buf_get_name(0)), 'buffer after :cc (long line)')
  local cur = vim.api.nvim_win_get_cursor(0)
  eq(2, cur[1], 'line of the long piece')
  eq(want_text[idx][3] - 1, cur[2], 'byte column of the second piece (as runls prints it)')
  ok(cur[2] > 3000, 'second piece starts past byte 3000 (UTF-16 ~2000): ' .. cur[2])
end)

test(':Runls lsearch fills the location list, titled by the query', function()
  vim.cmd('edit ' .. RUN .. '/episode-2/alice/alice.history')
  local win = vim.api.nvim_get_current_win()
  local _, got = search('hotel booking', true)
  eq(win, vim.api.nvim_get_current_win(), 'the cursor stays in its window')
  local want = cli('hotel booking')
  eq(want, got, 'location list vs runls search --json')
  eq('runls: hotel booking', vim.fn.getloclist(0, { title = 1 }).title, 'location list title')
  local lwin = vim.fn.getloclist(0, { winid = 1 }).winid
  ok(lwin ~= 0 and vim.api.nvim_win_is_valid(lwin), 'location list window opened')
  vim.cmd('lclose')
end)

test('diagnostics on a .log file with an unindented stack trace', function()
  local path = RUN .. '/episode-2/bob/bob.log'
  vim.cmd('edit ' .. path)
  local buf = vim.api.nvim_get_current_buf()
  eq('runls-log', vim.bo.filetype, 'filetype')
  local function unindented()
    return vim.tbl_filter(function(d)
      return d.code == 'unindented-continuation'
    end, vim.diagnostic.get(buf))
  end
  ok(vim.wait(TIMEOUT, function()
    return #unindented() >= 1
  end, 50), 'no unindented-continuation diagnostics: ' .. vim.inspect(vim.diagnostic.get(buf)))
  -- Grouped (spec §9): one diagnostic for the record's stack trace, 0-based lines 3..6
  -- (the exception line and three tab-indented `at` lines), not one a line. Every
  -- line a stack line: a Hint that begins with the exception (rev 3); a server before
  -- it gives a Warning that begins with the count.
  local d = unindented()[1]
  eq(1, #unindented(), 'one diagnostic for the stack trace')
  eq('runls', d.source, 'source')
  eq({ 3, 6 }, { d.lnum, d.end_lnum }, 'lines of the diagnostic')
  if d.severity == vim.diagnostic.severity.HINT then
    ok(d.message:find('^java%.lang%.IllegalStateException') and d.message:find('4', 1, true), 'a Hint names the exception and the count: ' .. d.message)
  else
    eq(vim.diagnostic.severity.WARN, d.severity, 'severity')
    ok(d.message:find('^4 continuation lines without the two%-space indent'), 'message: ' .. d.message)
  end
  eq(1, #vim.diagnostic.get(buf), 'no other diagnostics in a fielded file')
end)

test('diagnostics on an unfielded (pre-0.18.6) history file', function()
  vim.cmd('edit ' .. RUN .. '/episode-1/alice/alice.history')
  local buf = vim.api.nvim_get_current_buf()
  ok(vim.wait(TIMEOUT, function()
    return #vim.tbl_filter(function(d)
      return d.code == 'unfielded-line'
    end, vim.diagnostic.get(buf)) > 0
  end, 50), 'no unfielded-line diagnostics')
  -- One Information over the whole file: it predates the field, nothing to fix.
  local ds = vim.diagnostic.get(buf)
  eq(1, #ds, 'one diagnostic for the whole file')
  eq(vim.diagnostic.severity.INFO, ds[1].severity, 'severity')
  eq({ 0, 7 }, { ds[1].lnum, ds[1].end_lnum }, 'over the whole file')
  ok(ds[1].message:find('predates the conversation field', 1, true), ds[1].message)
end)

--- The runls client attached to the current buffer, once it is.
local function attached()
  local buf = vim.api.nvim_get_current_buf()
  local c
  ok(vim.wait(TIMEOUT, function()
    c = vim.lsp.get_clients({ name = 'runls', bufnr = buf })[1]
    return c ~= nil and c.initialized
  end, 20), 'no runls client attached to ' .. vim.api.nvim_buf_get_name(buf))
  return c
end

test('gO fills the location list with the records, under their conversations', function()
  vim.cmd('edit ' .. RUN .. '/episode-2/bob/bob.log')
  attached()
  vim.fn.setloclist(0, {}, 'f')
  vim.api.nvim_win_set_cursor(0, { 8, 0 }) -- 18:05:59 Bob retrying migration
  local src = vim.api.nvim_get_current_win()
  vim.api.nvim_feedkeys('gO', 'x', false)
  ok(vim.wait(TIMEOUT, function()
    return #vim.fn.getloclist(0) > 0
  end, 20), 'gO filled no location list')
  local items = vim.fn.getloclist(0)
  local texts = {}
  for _, it in ipairs(items) do
    texts[#texts + 1] = it.lnum .. ' ' .. it.text
  end
  -- Conversation runs (Namespace) and their records (Event), in file order.
  eq({
    '1 [Namespace] -',
    '1 [Event] 18:00:10 Bob chat started',
    '2 [Namespace] conv-1',
    '2 [Event] 18:01:00 Bob running migration dry-run against staging',
    '3 [Event] 18:01:02 Bob migration dry-run failed',
    '8 [Event] 18:05:59 Bob retrying migration with IF NOT EXISTS',
    '9 [Event] 18:06:01 Bob migration dry-run passed in 2.4 s',
    '10 [Namespace] -',
    '10 [Event] 18:15:00 Bob chat stopped',
  }, texts, 'location list')
  -- The list opens at the record under the cursor, not at the first line.
  eq(6, vim.fn.getloclist(src, { idx = 0 }).idx, 'the current entry is the cursor\'s record')
  vim.cmd('lclose')
end)

test('K shows the record under the cursor: its conversation and whether it is evidence', function()
  vim.cmd('edit ' .. RUN .. '/episode-2/bob/bob.log')
  attached()
  vim.api.nvim_win_set_cursor(0, { 5, 2 }) -- an `at` line of the ERROR record's stack trace
  vim.api.nvim_feedkeys('K', 'x', false)
  local lines
  ok(vim.wait(TIMEOUT, function()
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= '' then
        lines = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), '\n')
        if lines:find('evidence:', 1, true) then
          return true
        end
      end
    end
  end, 20), 'no hover window with an evidence line: ' .. tostring(lines))
  ok(lines:find('conversation `?conv%-1`?'), 'conversation in the hover: ' .. lines)
  ok(lines:find('2026-10-21 18:01:02.310', 1, true), 'the record\'s time in the hover: ' .. lines)
  -- The settings: episode-2, conv-1: the ERROR record of conv-1 is evidence.
  ok(lines:find('evidence: yes', 1, true), 'evidence line: ' .. lines)
  vim.cmd('fclose!')
end)

test('zc on a continuation line folds the whole record', function()
  vim.cmd('edit ' .. RUN .. '/episode-2/bob/bob.log')
  attached()
  eq('expr', vim.wo.foldmethod, 'foldmethod set by the plugin')
  -- Lines 3-7 (1-based): the ERROR record and its stack trace, inside conv-1's run (2-9).
  ok(vim.wait(TIMEOUT, function()
    vim.cmd('normal! zx')
    return vim.fn.foldlevel(5) == 2
  end, 50), 'no folds from the server: foldlevel(5) = ' .. vim.fn.foldlevel(5))
  vim.api.nvim_win_set_cursor(0, { 5, 0 })
  vim.cmd('normal! zc')
  eq({ 3, 7 }, { vim.fn.foldclosed(5), vim.fn.foldclosedend(5) }, 'the closed fold')
  vim.cmd('normal! zc')
  eq({ 2, 9 }, { vim.fn.foldclosed(5), vim.fn.foldclosedend(5) }, 'then the conversation run')
  vim.cmd('normal! zR')
end)

test(':Runls diagnostics lists the diagnostics of the whole run', function()
  -- episode-3/bob/bob.log is never opened: its diagnostics come from the server's
  -- publishing every record file of the run. The list is taken until every expected
  -- file is in it: publications arrive one file at a time, and a file reopened by an
  -- earlier test (didClose, didOpen) is published again.
  local want = {
    [real(RUN .. '/episode-3/bob/bob.log')] = 'an unopened file',
    [real(RUN .. '/episode-2/bob/bob.log')] = 'bob.log of episode-2',
    [real(RUN .. '/episode-1/carol/carol.history')] = 'an unfielded file',
  }
  local files
  local function listed()
    vim.cmd('Runls diagnostics')
    files = {}
    for _, it in ipairs(vim.fn.getqflist()) do
      files[real(vim.api.nvim_buf_get_name(it.bufnr))] = true
    end
    for f in pairs(want) do
      if not files[f] then
        return false
      end
    end
    return true
  end
  local function missing()
    local out = {}
    for f, what in pairs(want) do
      if not files[f] then
        local buf = vim.fn.bufnr(f)
        out[#out + 1] = what .. (buf == -1 and ' (no buffer)' or (' (%d diagnostics in its buffer)'):format(#vim.diagnostic.get(buf)))
      end
    end
    return table.concat(out, ', ')
  end
  ok(vim.wait(TIMEOUT, listed, 100), 'not listed: ' .. (files and missing() or '?'))
  eq('runls diagnostics', vim.fn.getqflist({ title = 1 }).title, 'title')
  ok(not files[real(RUN .. '/episode-2/alice/notes.md')], 'a plain file listed')
  vim.cmd('cclose')
end)

test('a conversation change takes effect on the next search', function()
  -- alice.history:5 is a conv-2 record of the current episode (episode-2).
  local target = { real(RUN .. '/episode-2/alice/alice.history'), 5 }
  local function has_target(pos)
    for _, p in ipairs(pos) do
      if p[1] == target[1] and p[2] == target[2] then
        return true
      end
    end
    return false
  end
  local _, before = search('hotel booking')
  ok(not has_target(before), 'conv-2 record found while conversation is conv-1')
  vim.cmd('Runls set conversation=conv-2')
  current.conversation = 'conv-2'
  local _, after = search('hotel booking')
  ok(has_target(after), 'conv-2 record not found after the change: ' .. vim.inspect(after))
  eq(cli('hotel booking'), after, 'after the change, vs runls search --conversation conv-2')
  require('runls').set({ conversation = 'conv-1' })
  current.conversation = 'conv-1'
  local _, back = search('hotel booking')
  eq(before, back, 'back to conv-1')
end)

test(':Runls context picks agent, episode and conversation from run/info', function()
  local offered = {}
  local picks = { ['runls agent'] = 'alice', ['runls episode'] = 'episode-2', ['runls conversation'] = 'conv-2' }
  local real_select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    offered[opts.prompt] = items
    on_choice(picks[opts.prompt])
  end
  local picked = await_user('RunlsContext', function()
    vim.cmd('Runls context')
  end)
  vim.ui.select = real_select
  eq({ agent = 'alice', episode = 'episode-2', conversation = 'conv-2' }, picked, 'picked')
  local said = notifications[#notifications].msg
  eq('runls: context alice · episode-2 (scope: run) · conv-2', said, 'the notification names the scope beside the episode')
  eq({ '(all agents)', 'alice', 'bob', 'carol', 'dave' }, offered['runls agent'], 'agents offered')
  eq({ '(no current episode)', 'episode-1', 'episode-2', 'episode-3', 'episode-10' }, offered['runls episode'], 'episodes offered')
  eq({ '(no conversation)', 'conv-1', 'conv-2', 'conv-3' }, offered['runls conversation'], 'conversations offered')
  current.agent, current.conversation = 'alice', 'conv-2'
  local _, got = search('hotel booking')
  eq(cli('hotel booking'), got, 'after :Runls context, vs runls search --agent alice --conversation conv-2')
  for _, it in ipairs(vim.fn.getqflist()) do
    ok(it.user_data.runls.agent == 'alice', 'result of another agent: ' .. it.text)
  end
  require('runls').set({ agent = '', conversation = 'conv-1' })
  current.agent, current.conversation = '', 'conv-1'
end)

test('a bad setting or request is rejected with the field named', function()
  notifications = {}
  vim.cmd('Runls set topK=abc')
  ok(notifications[1] and notifications[1].level == vim.log.levels.ERROR and notifications[1].msg:find('topK'), 'no error for topK=abc')
  -- Out of range in the settings: the server keeps the previous value and says so.
  notifications = {}
  require('runls').set({ topK = 5000 })
  ok(vim.wait(TIMEOUT, function()
    for _, n in ipairs(notifications) do
      if n.msg:find('topK') and n.level == vim.log.levels.WARN then
        return true
      end
    end
  end, 20), 'no warning from the server naming topK: ' .. vim.inspect(notifications))
  local _, got = search('deploy database migration')
  eq(cli('deploy database migration'), got, 'previous topK kept')
  require('runls').set({ topK = current.topK })
  -- Out of range in a request: JSON-RPC error -32602 naming the field.
  notifications = {}
  local data = await_user('RunlsSearch', function()
    require('runls').search('hotel booking', { params = { topK = 5000 } })
  end)
  ok(data.error, 'no error for topK 5000')
  eq(-32602, data.error.code, 'error code')
  ok(tostring(data.error.message):find('topK'), 'error does not name topK: ' .. vim.inspect(data.error))
  ok(#notifications > 0 and notifications[1].level == vim.log.levels.ERROR, 'error not shown')
end)

test(':Runls symbols lists the operator view through workspace/symbol', function()
  local data = await_user('RunlsSymbols', function()
    vim.cmd('Runls symbols migration')
  end)
  ok(not data.error, 'symbols error')
  local items = vim.fn.getqflist()
  ok(#items > 0, 'no symbols')
  eq('runls symbols: migration', vim.fn.getqflist({ title = 1 }).title, 'title')
  for _, it in ipairs(items) do
    local path = vim.api.nvim_buf_get_name(it.bufnr)
    local line = file_lines(path)[it.lnum]
    ok(line and line:sub(it.col):lower():find('migration', 1, true), ('symbol at %s:%d:%d does not hold the term'):format(path, it.lnum, it.col))
  end
  -- No episode/conversation filter: an unfielded episode-1 record is among them.
  local seen
  for _, it in ipairs(items) do
    if vim.api.nvim_buf_get_name(it.bufnr):find('/episode%-1/') then
      seen = true
    end
  end
  ok(seen, 'no episode-1 symbol (the operator view is unfiltered)')
end)

test(':Runls status reports the client, root and indexing progress', function()
  local c = runls_client()
  ok(vim.wait(TIMEOUT, function()
    local p = require('runls').progress(c.id)
    return p ~= nil and p.kind == 'end'
  end, 20), 'no $/progress end recorded: ' .. vim.inspect(require('runls').progress(c.id)))
  ok((require('runls').progress(c.id).title or ''):find('index'), 'progress title')
  local lines
  require('runls').status(function(l)
    lines = l
  end)
  ok(vim.wait(TIMEOUT, function()
    return lines ~= nil
  end), 'no status')
  local text = table.concat(lines, '\n')
  ok(text:find(RUN, 1, true), 'root in status: ' .. text)
  ok(text:find('indexed: %d+ files'), 'indexing numbers in status: ' .. text)
  ok(text:find('indexing done', 1, true), 'progress in status: ' .. text)
  ok(text:find('conversation=conv-1', 1, true), 'settings in status: ' .. text)
end)

test(':checkhealth runls reports OK', function()
  vim.cmd('edit ' .. RUN .. '/episode-2/alice/alice.history')
  vim.cmd('silent checkhealth runls')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  if env.RUNLS_TEST_VERBOSE then
    out(text)
  end
  vim.cmd('bwipeout')
  ok(not text:find('ERROR') and not text:find('WARNING'), 'health reports a problem:\n' .. text)
  local oks = select(2, text:gsub('OK', ''))
  ok(oks >= 4, 'fewer than 4 OK lines:\n' .. text)
  ok(text:find('runls version', 1, true) or text:find(BIN, 1, true), 'binary not named:\n' .. text)
  ok(text:find('root found', 1, true), 'root not reported:\n' .. text)
end)

test('help tags build and :help runls opens the help file', function()
  local doc = TMP .. '/help/doc'
  vim.fn.mkdir(doc, 'p')
  vim.uv.fs_copyfile(PLUGIN .. '/doc/runls.txt', doc .. '/runls.txt')
  notifications = {}
  vim.cmd('helptags ' .. doc)
  local tags = table.concat(file_lines(doc .. '/tags'), '\n')
  for _, tag in ipairs({ 'runls', ':Runls', 'runls-setup', 'runls-commands', 'runls-mappings', 'runls-health' }) do
    ok(tags:find('^' .. vim.pesc(tag) .. '\t') or tags:find('\n' .. vim.pesc(tag) .. '\t'), 'missing tag ' .. tag)
  end
  vim.opt.rtp:prepend(TMP .. '/help')
  vim.cmd('help :Runls')
  ok(vim.api.nvim_buf_get_name(0):find('runls.txt$'), 'help opened ' .. vim.api.nvim_buf_get_name(0))
  vim.cmd('helpclose')
end)

test('syntax groups on record lines', function()
  vim.cmd('edit ' .. RUN .. '/episode-2/bob/bob.log')
  local line = vim.fn.getline(3) -- 2026-10-21 18:01:02.310 ERROR [running] [conv-1] Bob migration ...
  local function group(needle)
    local col = assert(line:find(needle, 1, true), needle)
    return vim.fn.synIDattr(vim.fn.synID(3, col, 1), 'name')
  end
  eq('runlsTimestamp', group('2026-10-21'), 'timestamp')
  eq('runlsLevelError', group('ERROR'), 'level')
  eq('runlsState', group('[running]'), 'state')
  eq('runlsConversation', group('[conv-1]'), 'conversation')
  eq('runlsAgent', group('Bob'), 'agent')
  eq('', group('migration'), 'message')
  vim.cmd('edit ' .. RUN .. '/episode-2/alice/alice.history')
  eq('runlsReading', vim.fn.synIDattr(vim.fn.synID(3, vim.fn.getline(3):find('said:'), 1), 'name'), 'said:')
  -- An unfielded (pre-0.18.6) line: the agent follows the state.
  vim.cmd('edit ' .. RUN .. '/episode-1/alice/alice.history')
  line = vim.fn.getline(1)
  eq('runlsState', vim.fn.synIDattr(vim.fn.synID(1, line:find('[', 1, true), 1), 'name'), 'unfielded state')
  eq('runlsAgent', vim.fn.synIDattr(vim.fn.synID(1, line:find('] ', 1, true) + 2, 1), 'name'), 'unfielded agent')
end)

test('completion for subcommands and set keys', function()
  eq({ 'search', 'searchall', 'set', 'sort', 'status', 'symbols' }, vim.fn.getcompletion('Runls s', 'cmdline'), 'subcommands')
  local all = vim.fn.getcompletion('Runls ', 'cmdline')
  for _, s in ipairs({ 'context', 'lsearch', 'restart', 'search', 'searchall', 'status', 'symbols' }) do
    ok(vim.list_contains(all, s), 'missing ' .. s)
  end
  eq({ 'conversation=' }, vim.fn.getcompletion('Runls set conv', 'cmdline'), 'set keys')
end)

test('<Plug> mappings exist and no keys are mapped by default', function()
  for _, m in ipairs({ { 'n', 'search' }, { 'x', 'search' }, { 'n', 'lsearch' }, { 'n', 'symbols' }, { 'n', 'context' }, { 'n', 'status' }, { 'n', 'restart' } }) do
    ok(vim.fn.maparg('<Plug>(runls-' .. m[2] .. ')', m[1]) ~= '' or vim.fn.maparg('<Plug>(runls-' .. m[2] .. ')', m[1], false, true).callback, 'missing <Plug>(runls-' .. m[2] .. ') in mode ' .. m[1])
  end
  -- Visual mode searches the selection; normal mode <Plug>(runls-search-word) the
  -- word under the cursor.
  vim.cmd('edit ' .. RUN .. '/episode-2/bob/plan.txt')
  vim.fn.cursor(3, 1) -- Apply the database migration on staging, then production.
  vim.fn.search('database')
  local data = await_user('RunlsSearch', function()
    vim.api.nvim_feedkeys(vim.keycode('vee<Plug>(runls-search)'), 'x', false)
  end)
  eq('database migration', data.query, 'query from the visual selection')
  eq('n', vim.fn.mode(), 'back in normal mode')
  vim.fn.search('staging')
  data = await_user('RunlsSearch', function()
    vim.api.nvim_feedkeys(vim.keycode('<Plug>(runls-search-word)'), 'x', false)
  end)
  eq('staging', data.query, 'query from the word under the cursor')
  for _, mode in ipairs({ 'n', 'x', 'i', 'o' }) do
    for _, map in ipairs(vim.api.nvim_get_keymap(mode)) do
      ok(not (map.desc or ''):find('^runls') or map.lhs:find('^<Plug>'), 'default key mapped: ' .. map.lhs)
    end
  end
end)

test('two run folders: one client each, searches go to the current buffer\'s run', function()
  local run2 = TMP .. '/run2'
  local res = vim.system({ 'cp', '-R', RUN, run2 }):wait(TIMEOUT)
  eq(0, res.code, 'cp -R: ' .. (res.stderr or ''))
  run2 = real(run2)
  -- Different evidence in the second run, so a search sent to the wrong server shows.
  write(run2 .. '/episode-2/erin/notes.txt', 'platypus ledger reconciled twice\n')
  vim.cmd('edit ' .. run2 .. '/episode-2/bob/bob.history')
  local buf = vim.api.nvim_get_current_buf()
  ok(vim.wait(TIMEOUT, function()
    local c = vim.lsp.get_clients({ name = 'runls', bufnr = buf })[1]
    return c ~= nil and c.initialized
  end, 20), 'no client attached in the second run')
  local c2 = vim.lsp.get_clients({ name = 'runls', bufnr = buf })[1]
  eq(run2, real(c2.root_dir), 'root of the second client')
  eq(2, #vim.lsp.get_clients({ name = 'runls' }), 'two clients')
  local _, got = search('platypus ledger')
  eq(cli('platypus ledger', nil, run2), got, 'search in the second run')
  ok(#got == 1, 'platypus found once')
  vim.cmd('edit ' .. RUN .. '/episode-2/alice/alice.history')
  local _, got1 = search('platypus ledger')
  eq({}, got1, 'search from the first run does not see the second')
  c2:stop(true)
  vim.wait(TIMEOUT, function()
    return c2:is_stopped()
  end, 20)
end)

test(':Runls restart starts a new server on the same buffers', function()
  vim.cmd('edit ' .. RUN .. '/episode-2/alice/alice.history')
  local buf = vim.api.nvim_get_current_buf()
  ok(vim.wait(TIMEOUT, function()
    local c = vim.lsp.get_clients({ name = 'runls', bufnr = buf })[1]
    return c ~= nil and c.initialized
  end, 20), 'no runls client attached')
  local old = runls_client()
  -- Settings changed since the first start must reach the new server (not the ones
  -- the old client was started with).
  require('runls').set({ conversation = 'conv-2' })
  current.conversation = 'conv-2'
  await_user('RunlsRestart', function()
    vim.cmd('Runls restart')
  end)
  ok(old:is_stopped(), 'old client still running')
  ok(vim.wait(TIMEOUT, function()
    local c = vim.lsp.get_clients({ name = 'runls', bufnr = buf })[1]
    return c ~= nil and c.initialized and c.id ~= old.id
  end, 20), 'no new client attached')
  for _, q in ipairs({ 'deploy database migration', 'hotel booking' }) do
    local _, got = search(q)
    eq(cli(q), got, 'search after restart (current settings): ' .. q)
  end
  -- With no server running, restart starts one for the current buffer.
  for _, c in ipairs(vim.lsp.get_clients({ name = 'runls' })) do
    c:stop(true)
  end
  ok(vim.wait(TIMEOUT, function()
    return #vim.lsp.get_clients({ name = 'runls' }) == 0
  end, 20), 'clients did not stop')
  await_user('RunlsRestart', function()
    vim.cmd('Runls restart')
  end)
  ok(vim.lsp.get_clients({ name = 'runls', bufnr = buf })[1], 'no client attached after restart from none')
  local _, got = search('hotel booking')
  eq(cli('hotel booking'), got, 'search after restart from none')
  ok(vim.iter(got):any(function(p)
    return p[1] == real(RUN .. '/episode-2/alice/alice.history') and p[2] == 5
  end), 'conv-2 record not found after restart')
end)

local function cli_records(args)
  local res = vim.system(vim.list_extend({ BIN, 'records', '--json', '--limit', '10000' }, args), { text = true }):wait()
  eq(0, res.code, 'runls records exit code: ' .. (res.stderr or ''))
  return vim.json.decode(res.stdout).records
end

test(':Runls conversation lists the records in time order; <CR> jumps to the record in its file', function()
  local want = cli_records({ '--conversation', 'conv-1', RUN, 'episode-2' })
  ok(#want >= 3, 'conv-1 has records')
  vim.cmd('edit ' .. RUN .. '/episode-2/alice/alice.history')
  attached()
  local data = await_user('RunlsConversation', function()
    vim.cmd('Runls conversation episode-2 conv-1')
  end)
  local buf = vim.api.nvim_get_current_buf()
  eq(#want, data.records, 'records loaded')
  eq('runls-conversation', vim.bo[buf].filetype, 'filetype')
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  ok(lines[1]:find(('runls: episode-2 · conv-1 · %d records'):format(#want), 1, true), lines[1])
  local function header(r)
    local h = { r.time, r.agent }
    if r.level ~= vim.NIL then
      h[#h + 1] = r.level
    end
    h[#h + 1] = r.conversation
    return table.concat(h, ' · ')
  end
  eq(header(want[1]), lines[3], 'the first block is the first record')
  eq('  ' .. vim.split(want[1].text, '\n')[1], lines[4], 'then its lines')
  -- Every record's header, in the order of run/records.
  local headers = {}
  for _, l in ipairs(lines) do
    if l:match('^%d%d%d%d%-') then
      headers[#headers + 1] = l
    end
  end
  eq(vim.tbl_map(header, want), headers, 'headers in time order')
  -- <CR> on the second record's text line opens its file at its line.
  local second
  for i, l in ipairs(lines) do
    if l == header(want[2]) then
      second = i
      break
    end
  end
  vim.api.nvim_win_set_cursor(0, { second + 1, 0 })
  vim.api.nvim_feedkeys(vim.keycode('<CR>'), 'x', false)
  eq(real(vim.uri_to_fname(want[2].location.uri)), real(vim.api.nvim_buf_get_name(0)), 'the record\'s file')
  eq(want[2].location.range.start.line + 1, vim.api.nvim_win_get_cursor(0)[1], 'the record\'s line')
end)

test(':Runls conversation with level=, from= and to= lists what run/records gives for those filters', function()
  local all = cli_records({ '--conversation', 'conv-1', RUN, 'episode-2' })
  ok(#all >= 3, 'conv-1 has records')
  local from = all[2].time
  local want = cli_records({ '--conversation', 'conv-1', '--min-level', 'WARN', '--from', from, RUN, 'episode-2' })
  ok(#want < #all, 'the filters leave records out')
  vim.cmd('edit ' .. RUN .. '/episode-2/alice/alice.history')
  attached()
  local data = await_user('RunlsConversation', function()
    vim.cmd('Runls conversation episode-2 conv-1 level=warn from=' .. from:gsub(' ', 'T'))
  end)
  local buf = vim.api.nvim_get_current_buf()
  eq(#want, data.records, 'records loaded with the filters')
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  ok(lines[1]:find('level=WARN from=' .. from:gsub(' ', 'T'), 1, true), 'the first line names the filters: ' .. lines[1])
  ok(vim.api.nvim_buf_get_name(buf):find('?level=WARN&from=', 1, true), 'a buffer of its own: ' .. vim.api.nvim_buf_get_name(buf))
  local n = 0
  for _, l in ipairs(lines) do
    if l:match('^%d%d%d%d%-') then
      n = n + 1
    end
  end
  eq(#want, n, 'one block a record')
  local e, c, f, err = require('runls').parse_conversation_args('episode-2 conv-1 colour=red')
  ok(err and err:find('colour', 1, true), 'an unknown filter is named: ' .. tostring(err))
  e, c, f, err = require('runls').parse_conversation_args('episode-2 conv-1 to=2026-10-21_18:00:00')
  eq({ 'episode-2', 'conv-1', { to = '2026-10-21 18:00:00' } }, { e, c, f }, 'to= with _ for the space')
end)

test(':Runls conversation completes episode and conversation ids in natural order', function()
  vim.cmd('edit ' .. RUN .. '/episode-2/alice/alice.history')
  attached()
  local eps = vim.fn.getcompletion('Runls conversation ', 'cmdline')
  eq({ 'episode-1', 'episode-2', 'episode-3', 'episode-10' }, eps, 'episodes')
  local convs = vim.fn.getcompletion('Runls conversation episode-2 ', 'cmdline')
  ok(vim.list_contains(convs, 'conv-1'), vim.inspect(convs))
  local sorted = vim.deepcopy(convs)
  table.sort(sorted, require('runls').natural_less)
  eq(sorted, convs, 'natural order')
  eq({ 'conv-1' }, vim.tbl_filter(function(c) return c == 'conv-1' end, vim.fn.getcompletion('Runls conversation episode-2 conv-1', 'cmdline')), 'by prefix')
end)

test(':Runls follow keeps the last line of a growing run file in view', function()
  local path = RUN .. '/episode-3/carol/follow.log'
  write(path, '2026-10-22 11:00:00.000 INFO  [running] [conv-5] Carol follow start\n')
  vim.cmd('edit ' .. path)
  local buf = vim.api.nvim_get_current_buf()
  ok(require('runls').follow(0), 'follow on')
  local fd = assert(io.open(path, 'a'))
  for i = 1, 80 do
    fd:write(('2026-10-22 11:%02d:00.000 INFO  [running] [conv-5] Carol line %d\n'):format(i % 60, i))
  end
  fd:close()
  ok(vim.wait(TIMEOUT, function()
    return vim.api.nvim_buf_line_count(buf) == 81 and vim.fn.line('w$') == 81
  end, 50), ('the window shows the last line: line count %d, w$ %d'):format(vim.api.nvim_buf_line_count(buf), vim.fn.line('w$')))
  eq(81, vim.fn.line('.'), 'the cursor is on the last line')
  -- Scrolled up: following pauses; back on the last line: it resumes.
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  fd = assert(io.open(path, 'a'))
  fd:write('2026-10-22 12:00:00.000 INFO  [running] [conv-5] Carol paused line\n')
  fd:close()
  ok(vim.wait(TIMEOUT, function() return vim.api.nvim_buf_line_count(buf) == 82 end, 50), 'read again while paused')
  vim.wait(1500)
  eq(1, vim.fn.line('.'), 'the cursor stayed where the user put it')
  vim.api.nvim_win_set_cursor(0, { 82, 0 })
  fd = assert(io.open(path, 'a'))
  fd:write('2026-10-22 12:00:01.000 INFO  [running] [conv-5] Carol resumed line\n')
  fd:close()
  ok(vim.wait(TIMEOUT, function() return vim.fn.line('.') == 83 and vim.fn.line('w$') == 83 end, 50), 'following again at the end')
  ok(not require('runls').follow(0), 'follow off')
end)

-- From a record to its story (issue 27) -------------------------------------------

--- nil when the server under test has a rev-3 piece (its CLI usage names the flag),
--- else the reason to skip what needs it.
local function server_lacks(sub, flag)
  local res = vim.system({ BIN, sub, '--help' }, { text = true }):wait(TIMEOUT)
  local usage = (res.stdout or '') .. (res.stderr or '')
  local has = usage:find('usage: runls ' .. sub, 1, true) and usage:find('  ' .. flag .. ' ', 1, true)
  return not has and ('the server has no "runls %s %s" yet (spec rev 3, issue 27\'s server side)'):format(sub, flag) or nil
end

local function skip(why)
  out('skip   ' .. why)
end

--- Edits a file in a buffer of its own, wiping an earlier one (a buffer loaded before
--- a restart from no server is not attached again by :edit).
local function edit_fresh(path)
  local old = vim.fn.bufnr(path)
  if old ~= -1 then
    vim.cmd('silent! bwipeout! ' .. old)
  end
  vim.cmd('edit ' .. path)
end

local GEN = env.RUNLS_TEST_GEN and real(env.RUNLS_TEST_GEN)
local GEN_FILE, GEN_LINE = 'episode-2/bob/bob.log', 246

local function header_of(r)
  local h = { r.time ~= vim.NIL and r.time or '(no time)', r.agent }
  if r.level ~= vim.NIL then
    h[#h + 1] = r.level
  end
  h[#h + 1] = r.conversation ~= vim.NIL and r.conversation or '(none)'
  return table.concat(h, ' · ')
end

--- Moves the cursor of a conversation buffer to its first line until no earlier
--- page is left (CursorMoved loads them); returns the loads seen.
local function scroll_to_top(buf)
  local loads = 0
  for _ = 1, 20 do
    local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    if not vim.list_contains(lines, require('runls.conversation').EARLIER_LINE) then
      return loads
    end
    local got = await_user('RunlsConversationPage', function()
      vim.api.nvim_feedkeys('gg', 'x', false)
      -- A headless script runs outside Neovim's main loop, which fires CursorMoved
      -- after a move: fired here as it would be.
      vim.api.nvim_exec_autocmds('CursorMoved', { buffer = buf })
    end)
    eq('earlier', got.which, 'an earlier page')
    loads = loads + 1
  end
  fail('earlier pages never ended')
end

test('gen: :Runls conversation on the ERROR record at line 246 opens its conversation at it; moving up loads what came before', function()
  if not GEN then
    return skip('RUNLS_TEST_GEN unset: no generated run')
  end
  local lines = file_lines(GEN .. '/' .. GEN_FILE)
  local time, conv = lines[GEN_LINE]:match('^(%S+ %S+) ERROR %[[^%]]+%] %[([^%]]+)%] ')
  ok(time, ('line %d of %s is an ERROR record (rungen changed? pick another seed): %s'):format(GEN_LINE, GEN_FILE, lines[GEN_LINE]))
  local all = cli_records({ '--conversation', conv, GEN, 'episode-2' })
  local at
  for i, r in ipairs(all) do
    if r.location.range.start.line == GEN_LINE - 1 and r.location.uri:find('/bob/bob.log', 1, true) then
      at = i
    end
  end
  ok(at and at > 20, 'the record is past the first page of 20: ' .. tostring(at))
  require('runls').setup({ page_size = 20 })
  vim.cmd('edit ' .. GEN .. '/' .. GEN_FILE)
  attached()
  vim.api.nvim_win_set_cursor(0, { GEN_LINE + 1, 0 }) -- a line of its stack trace: the record that holds it
  local data = await_user('RunlsConversation', function()
    vim.cmd('Runls conversation')
  end)
  local buf = vim.api.nvim_get_current_buf()
  ok(vim.api.nvim_buf_get_name(buf):find('runls://episode-2/' .. conv, 1, true), vim.api.nvim_buf_get_name(buf))
  local cur = vim.api.nvim_win_get_cursor(0)[1]
  eq(data.line, cur, 'the cursor on the record')
  local blines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  eq(header_of(all[at]), blines[cur], 'the record\'s header under the cursor')
  local above = table.concat(vim.list_slice(blines, 1, cur - 1), '\n')
  ok(above:find(header_of(all[at - 1]), 1, true), 'the record before it is above it')
  local no_at = server_lacks('records', '--at')
  if no_at then
    skip('opened from the first page: ' .. no_at)
  else
    ok(data.earlier, 'opened at the record: earlier pages are not loaded yet')
  end
  -- Moving up: pages load above; the record under the cursor stays.
  local loads = scroll_to_top(buf)
  ok(no_at or loads >= 1, 'earlier pages were loaded')
  blines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local headers = vim.tbl_filter(function(l) return l:match('^%d%d%d%d%-') end, blines)
  for i = 1, at do
    eq(header_of(all[i]), headers[i], 'record ' .. i .. ' in order')
  end
  ok(blines[1]:find('runls: episode-2 · ' .. conv .. ' · ' .. #headers, 1, true), blines[1])
  require('runls').setup({ page_size = 1000 })
end)

test('gen: :Runls conversation level=ERROR on the record lists only ERROR records', function()
  if not GEN then
    return skip('RUNLS_TEST_GEN unset: no generated run')
  end
  vim.cmd('edit ' .. GEN .. '/' .. GEN_FILE)
  attached()
  vim.api.nvim_win_set_cursor(0, { GEN_LINE, 0 })
  local data = await_user('RunlsConversation', function()
    vim.cmd('Runls conversation level=error')
  end)
  local buf = vim.api.nvim_get_current_buf()
  ok(vim.api.nvim_buf_get_name(buf):find('?level=ERROR', 1, true), vim.api.nvim_buf_get_name(buf))
  local blines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  eq('ERROR', (blines[data.line or 0] or ''):match(' · (%u+) · '), 'opened at the ERROR record: ' .. tostring(blines[data.line or 0]))
  local why = server_lacks('records', '--at') -- minLevel without levels came with rev 3
  if why then
    return skip(why .. ': records without a level are still listed')
  end
  for _, l in ipairs(blines) do
    if l:match('^%d%d%d%d%-') then
      ok(l:find(' · ERROR · ', 1, true), 'only ERROR records: ' .. l)
    end
  end
end)

--- The generated run's failure groups as `runls failures --json` gives them, after
--- :Runls failures on it filled the quickfix list; nil and why not when it cannot be.
local function gen_failures()
  if not GEN then
    return nil, 'RUNLS_TEST_GEN unset: no generated run'
  end
  local why = server_lacks('failures', '--min-level')
  if why then
    return nil, why
  end
  local res = vim.system({ BIN, 'failures', '--json', GEN }, { text = true }):wait(TIMEOUT)
  local want = vim.json.decode(res.stdout).groups
  vim.cmd('edit ' .. GEN .. '/' .. GEN_FILE)
  attached()
  local data = await_user('RunlsFailures', function()
    vim.cmd('Runls failures')
  end)
  ok(not data.error, vim.inspect(data.error))
  return want
end

test('gen: :Runls failures lists the failure groups with the counts runls failures gives; a quickfix entry opens its story', function()
  local want, why = gen_failures()
  if not want then
    return skip(why)
  end
  local items = vim.fn.getqflist()
  eq(#want, #items, 'a quickfix entry a group')
  for i, g in ipairs(want) do
    ok(items[i].text:find(('^%d× '):format(g.count)), ('group %d: %s, want count %d'):format(i, items[i].text, g.count))
    eq(g.records[1].range.start.line + 1, items[i].lnum, 'group ' .. i .. ' at its first record')
  end
  -- In the quickfix window, :Runls conversation opens the entry's record in its story.
  vim.cmd('copen')
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  local conv = await_user('RunlsConversation', function()
    vim.cmd('Runls conversation')
  end)
  local b = vim.api.nvim_get_current_buf()
  local line = vim.api.nvim_buf_get_lines(b, conv.line - 1, conv.line, false)[1]
  ok(line and line:match('^%d%d%d%d%-'), 'the cursor on a record header: ' .. tostring(line))
  eq(want[1].records[1].range.start.line, require('runls.conversation')._shown[b].where[conv.line].range.start.line, 'the first record of the group')
  vim.cmd('cclose')
end)

test('gen: :Runls group on a failures entry lists that group\'s records, those runls failures --json gives; :colder goes back', function()
  local want, why = gen_failures()
  if not want then
    return skip(why)
  end
  local groups_title = vim.fn.getqflist({ title = 1 }).title
  -- The group with the most records listed (the list's entries are the groups, in order).
  local k = 1
  for i, g in ipairs(want) do
    if #g.records > #want[k].records then
      k = i
    end
  end
  vim.cmd('copen')
  vim.api.nvim_win_set_cursor(0, { k, 0 })
  local got = await_user('RunlsGroup', function()
    vim.cmd('Runls group')
  end)
  ok(not got.error, vim.inspect(got.error))
  local items = vim.fn.getqflist()
  eq(#want[k].records, #items, 'an entry a record of group ' .. k)
  for i, r in ipairs(want[k].records) do
    eq(real(vim.uri_to_fname(r.uri)), real(vim.api.nvim_buf_get_name(items[i].bufnr)), 'record ' .. i .. ' file')
    eq(r.range.start.line + 1, items[i].lnum, 'record ' .. i .. ' line')
  end
  ok(vim.fn.getqflist({ title = 1 }).title:find(('runls failures: %d× '):format(want[k].count), 1, true), vim.fn.getqflist({ title = 1 }).title)
  vim.cmd('silent colder')
  eq(groups_title, vim.fn.getqflist({ title = 1 }).title, ':colder: the groups again')
  vim.cmd('cclose')
  -- In a buffer that is no list, with a list whose entries are no failures: said.
  vim.fn.setqflist({}, ' ', { title = 'other', items = { { filename = GEN .. '/' .. GEN_FILE, lnum = 1, text = 'x' } } })
  local none = await_user('RunlsGroup', function()
    vim.cmd('Runls group')
  end)
  ok(none.error and none.error.message:find('not on an entry', 1, true), vim.inspect(none))
end)

test('before: :Runls before on a record searches what came before it, in time order; :Runls sort rank restores the ranking', function()
  edit_fresh(RUN .. '/episode-2/bob/bob.log')
  attached()
  vim.api.nvim_win_set_cursor(0, { 3, 0 }) -- 2026-10-21 18:01:02.310 ERROR [running] [conv-1] Bob migration dry-run failed
  local data = await_user('RunlsSearch', function()
    vim.cmd('Runls before deploy billing')
  end)
  ok(not data.error, vim.inspect(data.error))
  eq('runls before 2026-10-21 18:01:02: deploy billing', vim.fn.getqflist({ title = 1 }).title, 'title')
  local items = vim.fn.getqflist()
  ok(#items >= 1, 'results')
  local times = {}
  for _, it in ipairs(items) do
    local t = it.user_data.runls.time
    if type(t) == 'string' then
      times[#times + 1] = t
    end
  end
  local sorted = vim.deepcopy(times)
  table.sort(sorted)
  eq(sorted, times, 'time order')
  local sort = await_user('RunlsSort', function()
    vim.cmd('Runls sort rank')
  end)
  eq(vim.tbl_map(function(it) return it.user_data.rank end, sort.items), vim.tbl_map(function(i) return i end, vim.fn.range(1, #items)), 'rank order')
  local why = server_lacks('search', '--to')
  if why then
    return skip(why)
  end
  for _, t in ipairs(times) do
    ok(t:sub(1, 19) <= '2026-10-21 18:01:02', t .. ' is before the record')
  end
end)

test('stale: after a context change the runls quickfix list says it was asked in another context', function()
  search('hotel booking')
  eq('runls: hotel booking', vim.fn.getqflist({ title = 1 }).title, 'fresh')
  local conv = require('runls').settings().conversation
  local st = await_user('RunlsStale', function()
    vim.cmd('Runls set scope=episode')
  end)
  local title = vim.fn.getqflist({ title = 1 }).title
  local want = ('[stale: asked in all agents · episode-2 (scope: run) · %s; now all agents · episode-2 (scope: episode) · %s]'):format(conv, conv)
  ok(title:find(want, 1, true), title)
  eq({ title }, st.titles, 'event data')
  eq(('runls: context all agents · episode-2 (scope: episode) · %s'):format(conv), notifications[#notifications].msg, 'the scope on screen after :Runls set')
  await_user('RunlsStale', function()
    vim.cmd('Runls set scope=run')
  end)
  eq('runls: hotel booking', vim.fn.getqflist({ title = 1 }).title, 'the context it was asked in again: not stale')
  -- A pick with :Runls context marks the list too, and says the context with its scope.
  local real_select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    on_choice(({ ['runls agent'] = 'bob', ['runls episode'] = 'episode-2', ['runls conversation'] = conv })[opts.prompt])
  end
  local ok_pick, err = pcall(await_user, 'RunlsContext', function()
    vim.cmd('Runls context')
  end)
  vim.ui.select = real_select
  ok(ok_pick, tostring(err))
  title = vim.fn.getqflist({ title = 1 }).title
  ok(title:find(('[stale: asked in all agents · episode-2 (scope: run) · %s; now bob · episode-2 (scope: run) · %s]'):format(conv, conv), 1, true), title)
  eq(('runls: context bob · episode-2 (scope: run) · %s'):format(conv), notifications[#notifications].msg, 'the scope on screen after a pick')
  await_user('RunlsStale', function()
    vim.cmd('Runls set agent=')
  end)
  eq('runls: hotel booking', vim.fn.getqflist({ title = 1 }).title, 'back in the context it was asked in: not stale')
end)

test('ignoreDiagnostics: sent only when set, as a list (from :Runls set, comma-separated)', function()
  eq(nil, require('runls').settings().ignoreDiagnostics, 'unset: not sent')
  ok(require('runls').set({ ignoreDiagnostics = 'unindented-continuation,unfielded-line' }), 'set')
  eq({ 'unindented-continuation', 'unfielded-line' }, require('runls').settings().ignoreDiagnostics, 'a list')
  vim.cmd('Runls set ignoreDiagnostics=')
  eq({}, require('runls').settings().ignoreDiagnostics, 'cleared: an empty list')
  ok(not require('runls').set({ ignoreDiagnostics = 3 }), 'a number is refused')
end)

test('time bounds: HH:mm[:ss] on the record\'s day; agent= filters', function()
  local c = require('runls.conversation')
  eq('2026-10-21 18:04:00', c.parse_time_bound('18:04', '2026-10-21', false), 'from')
  eq('2026-10-21 18:04:59', c.parse_time_bound('18:04', '2026-10-21', true), 'to')
  eq('2026-10-21 08:04:37', c.parse_time_bound('8:04:37', '2026-10-21', true), 'H:mm:ss')
  eq('2026-10-20 23:59:00', c.parse_time_bound('2026-10-20T23:59', '2026-10-21', false), 'a full date')
  eq('2026-10-21 18:00:41', c.parse_time_bound('2026-10-21T18:00:41.007', nil, false), 'a record time, to the second')
  ok(select(2, c.parse_time_bound('18:04', nil, false)):find('no day', 1, true), 'no day')
  ok(select(2, c.parse_time_bound('25:00', '2026-10-21', false)), '25:00')
  local e, cv, f, err = require('runls').parse_conversation_args('episode-2 conv-1 agent=bob from=18:00 to=18:01:30', '2026-10-21')
  eq({ 'episode-2', 'conv-1', { agent = 'bob', from = '2026-10-21 18:00:00', to = '2026-10-21 18:01:30' } }, { e, cv, f }, 'parsed: ' .. tostring(err))
  local want = cli_records({ '--conversation', 'conv-1', '--agent', 'bob', '--from', '2026-10-21 18:00:00', '--to', '2026-10-21 18:05:59', RUN, 'episode-2' })
  edit_fresh(RUN .. '/episode-2/bob/bob.log')
  attached()
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  local data = await_user('RunlsConversation', function()
    vim.cmd('Runls conversation agent=bob from=18:00 to=18:05:59')
  end)
  eq(#want, data.records, 'agent and window as runls records gives them')
  ok(vim.api.nvim_buf_get_name(0):find('?agent=bob&from=2026-10-21T18:00:00&to=2026-10-21T18:05:59', 1, true), vim.api.nvim_buf_get_name(0))
  -- The buffer's syntax: levels in the record files' colours.
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  for n, l in ipairs(lines) do
    local col = l:find(' · ERROR · ', 1, true)
    if col then
      eq('runlsLevelError', vim.fn.synIDattr(vim.fn.synID(n, col + 4, 1), 'name'), 'ERROR in a header')
      eq('runlsTimestamp', vim.fn.synIDattr(vim.fn.synID(n, 1, 1), 'name'), 'the time')
      break
    end
  end
end)

-- Answers while the first index is built (issue 33) ------------------------------

test('partial: a search and symbols asked while the run is indexed are titled partial, and asked again into the same lists when indexing ends', function()
  local HOLD = env.RUNLS_TEST_HOLD_BIN
  if not HOLD then
    return skip('RUNLS_TEST_HOLD_BIN unset: no runls built with -tags runls_holdindex')
  end
  local run3 = TMP .. '/run-partial'
  eq(0, vim.system({ 'cp', '-R', RUN, run3 }):wait(TIMEOUT).code, 'cp -R')
  run3 = real(run3)
  local release = TMP .. '/release-partial'
  -- The server started below inherits it: its first index commits one batch (one
  -- folder: the newest episode's) and then waits until the file exists.
  vim.env.RUNLS_HOLD_INDEX = release
  -- A plain file of the run: no runls filetype, so vim.lsp.enable starts no client of
  -- its own for it; the client with the holding server is attached to it here.
  edit_fresh(run3 .. '/episode-2/dave/long.txt')
  local buf = vim.api.nvim_get_current_buf()
  local config = vim.deepcopy(vim.lsp.config.runls)
  config.name, config.root_dir, config.cmd = 'runls', run3, { HOLD, 'serve' }
  local id = vim.lsp.start(config, { bufnr = buf })
  local c = attached()
  eq(id, c.id, 'the holding client serves the buffer')
  local finally = function()
    vim.env.RUNLS_HOLD_INDEX = nil
    c:stop(true)
  end
  local okay, err = pcall(function()
    local q = 'deploy database migration'
    notifications = {}
    local data = search(q)
    ok(data.partial and data.partial:match('^%d+%%$'), 'the answer is partial: ' .. vim.inspect(data.partial))
    local search_list = vim.fn.getqflist({ id = 0, title = 0 })
    ok(search_list.title:find(' [partial: ' .. data.partial .. ' indexed]', 1, true), 'title: ' .. search_list.title)
    ok(vim.iter(notifications):any(function(n)
      return n.msg:find('partial', 1, true) and n.msg:find('searched again when indexing ends', 1, true)
    end), 'a notification says the answer is partial: ' .. vim.inspect(notifications))
    local syms = await_user('RunlsSymbols', function()
      vim.cmd('Runls symbols deploy')
    end)
    ok(syms.partial, 'the symbols are partial')
    local sym_list = vim.fn.getqflist({ id = 0, title = 0 })
    ok(sym_list.title:find('[partial: ', 1, true), 'symbols title: ' .. sym_list.title)

    -- The rest arrives: both lists are asked again, in place, without the mark.
    local refreshed = {}
    local ids = {}
    for _, pat in ipairs({ 'RunlsSearch', 'RunlsSymbols' }) do
      ids[#ids + 1] = vim.api.nvim_create_autocmd('User', {
        pattern = pat,
        callback = function(ev)
          if ev.data and ev.data.refreshed and not ev.data.partial then
            refreshed[pat] = ev.data
          end
        end,
      })
    end
    write(release, '')
    local both = vim.wait(TIMEOUT, function()
      return refreshed.RunlsSearch ~= nil and refreshed.RunlsSymbols ~= nil
    end, 20)
    for _, a in ipairs(ids) do
      pcall(vim.api.nvim_del_autocmd, a)
    end
    ok(both, 'not asked again when indexing ended: ' .. vim.inspect(vim.tbl_keys(refreshed)))
    local again = vim.fn.getqflist({ id = search_list.id, title = 0, items = 0 })
    eq('runls: ' .. q, again.title, 'the search list, no longer partial')
    local pos = {}
    for _, it in ipairs(again.items) do
      pos[#pos + 1] = { real(vim.api.nvim_buf_get_name(it.bufnr)), it.lnum, it.col }
    end
    eq(cli(q, nil, run3), pos, 'the search asked again: the whole answer, as runls search gives it')
    local sym_again = vim.fn.getqflist({ id = sym_list.id, title = 0, items = 0 })
    eq('runls symbols: deploy', sym_again.title, 'the symbols list, no longer partial')
    ok(#sym_again.items >= #vim.fn.getqflist({ id = sym_list.id, items = 0 }).items and #sym_again.items > 0, 'symbols')
    for _, it in ipairs(sym_again.items) do
      ok(not it.text:find('partial', 1, true), 'a symbol still says partial: ' .. it.text)
    end
  end)
  finally()
  if not okay then
    error(err, 0)
  end
end)

-- Run -----------------------------------------------------------------------------

local passed, failed = 0, 0
for _, t in ipairs(tests) do
  local selected = not ONLY
  for _, part in ipairs(vim.split(ONLY or '', ',', { trimempty = true })) do
    selected = selected or t.name:find(part, 1, true) ~= nil
  end
  if selected then
    local okay, err = xpcall(t.fn, debug.traceback)
    if okay then
      passed = passed + 1
      out('ok     ' .. t.name)
    else
      failed = failed + 1
      out('FAILED ' .. t.name .. '\n  ' .. tostring(err):gsub('\n', '\n  '))
    end
  end
end
for _, c in ipairs(vim.lsp.get_clients({ name = 'runls' })) do
  c:stop(true)
end
out(('%d passed, %d failed'):format(passed, failed))
vim.cmd((failed == 0 and passed > 0) and 'qall!' or 'cquit! 1')
