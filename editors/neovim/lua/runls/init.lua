-- runls for Neovim: settings, and the :Runls commands on the built-in LSP client.
local M = {}

local NAME = 'runls'

--- Keys the server reads under `runls` (spec §9). String fields use "" for "unset".
local STRING_KEYS = { 'agent', 'episode', 'conversation', 'scope', 'masking' }
local SETTING_KEYS = { 'agent', 'episode', 'conversation', 'scope', 'topK', 'masking', 'interpreter', 'maxDiagnosticsPerFile' }

---@class runls.State
---@field configured boolean setup() was called
---@field settings table<string, any> what the server is sent under `runls`
---@field open_list boolean open the quickfix/location window after a search
---@field folding boolean fold runls buffers by record (vim.lsp.foldexpr)
---@field progress table<integer, table> last $/progress value per client id
local state = {
  configured = false,
  settings = {},
  open_list = true,
  folding = true,
  progress = {},
}

--- The settings sent to the server: every string key present ("" when unset), so a
--- didChangeConfiguration that clears a field really clears it on the server.
---@param config? vim.lsp.ClientConfig
---@return table
function M.settings(config)
  local src = state.settings
  if not state.configured and config and type(config.settings) == 'table' and type(config.settings.runls) == 'table' then
    src = config.settings.runls
  end
  local out = {}
  for _, k in ipairs(STRING_KEYS) do
    local v = src[k]
    out[k] = (v == nil or v == vim.NIL) and '' or tostring(v)
  end
  if out.masking == '' then
    out.masking = 'off'
  end
  if src.topK ~= nil and src.topK ~= vim.NIL and src.topK ~= '' then
    out.topK = tonumber(src.topK)
  end
  if src.maxDiagnosticsPerFile ~= nil and src.maxDiagnosticsPerFile ~= vim.NIL then
    out.maxDiagnosticsPerFile = tonumber(src.maxDiagnosticsPerFile)
  end
  if src.interpreter ~= nil and src.interpreter ~= vim.NIL and src.interpreter ~= '' then
    out.interpreter = src.interpreter
  end
  return out
end

--- Checks an interpreter setting: the rules table itself, or the path of a rules JSON
--- file (absolute, `~/...`, or relative to the run folder, as the server reads it).
---@param v any
---@return table|string|nil, string? error
local function check_interpreter(v)
  if v == nil or v == vim.NIL or v == '' or v == false then
    return nil
  end
  if type(v) == 'table' then
    return v
  end
  if type(v) ~= 'string' then
    return nil, 'interpreter: expected a rules table or the path of a JSON file, got ' .. type(v)
  end
  if v:sub(1, 1) == '~' then
    return vim.fs.normalize(v)
  end
  return v
end

--- Checks and merges `opts` into the settings. Returns an error message on a bad value
--- and changes nothing then.
---@param opts table
---@return string? error
local function merge_settings(opts)
  local base = state.settings
  if not state.configured then
    -- Without setup(), settings given through vim.lsp.config('runls', {settings =
    -- {runls = ...}}) are the ones to change.
    local ok, config = pcall(function()
      return vim.lsp.config[NAME]
    end)
    if ok and type(config) == 'table' and type(config.settings) == 'table' and type(config.settings.runls) == 'table' then
      base = config.settings.runls
    end
  end
  local next_settings = vim.deepcopy(base)
  for k, v in pairs(opts) do
    if k == 'interpreter' then
      local rules, err = check_interpreter(v)
      if err then
        return err
      end
      next_settings.interpreter = rules
    elseif k == 'topK' or k == 'maxDiagnosticsPerFile' then
      if v == nil or v == '' or v == vim.NIL then
        next_settings[k] = nil
      else
        local n = tonumber(v)
        if not n or n ~= math.floor(n) then
          return ('%s: expected a whole number, got %s'):format(k, vim.inspect(v))
        end
        next_settings[k] = n
      end
    elseif vim.list_contains(STRING_KEYS, k) then
      if v ~= nil and v ~= vim.NIL and type(v) ~= 'string' then
        return ('%s: expected a string, got %s'):format(k, vim.inspect(v))
      end
      next_settings[k] = (v ~= vim.NIL) and v or nil
    else
      return ('unknown setting %s (known: %s)'):format(vim.inspect(k), table.concat(SETTING_KEYS, ', '))
    end
  end
  state.settings = next_settings
  return nil
end

--- The running runls clients.
---@return vim.lsp.Client[]
function M.clients()
  return vim.lsp.get_clients({ name = NAME })
end

--- The client for the current buffer; else the one whose root is the run folder of
--- the current buffer's file or of the current directory; else any runls client.
--- Returns nil and a message when none runs.
---@return vim.lsp.Client?, string?
function M.client()
  local attached = vim.lsp.get_clients({ name = NAME, bufnr = 0 })
  if #attached > 0 then
    return attached[1]
  end
  local clients = M.clients()
  if #clients == 0 then
    return nil, 'runls: no server running; open a .history or .log file of a run folder (and call vim.lsp.enable("runls"))'
  end
  local root_mod = require('runls.root')
  for _, path in ipairs({ vim.api.nvim_buf_get_name(0), vim.fn.getcwd() }) do
    local root = root_mod.find(path)
    for _, c in ipairs(root and clients or {}) do
      if c.root_dir and vim.fs.normalize(c.root_dir) == root then
        return c
      end
    end
  end
  return clients[1]
end

--- Calls `cb(client)` with the client for the current buffer (or any runls client).
--- With none running, starts one for the run folder of the current buffer's file or,
--- failing that, of the current directory (so `:Runls search` works right after
--- `cd run && nvim`), and calls `cb` once it is initialized. On failure calls
--- `cb(nil, message)`.
---@param cb fun(client: vim.lsp.Client?, err: string?)
function M.with_client(cb)
  local client, msg = M.client()
  if client then
    cb(client)
    return
  end
  local root_mod = require('runls.root')
  local root = root_mod.find(vim.api.nvim_buf_get_name(0)) or root_mod.find(vim.fn.getcwd())
  if not root then
    cb(nil, msg)
    return
  end
  local ok, config = pcall(function()
    return vim.deepcopy(vim.lsp.config[NAME])
  end)
  if not ok or type(config) ~= 'table' or not config.cmd then
    cb(nil, 'runls: no server config (is editors/neovim on the runtimepath?)')
    return
  end
  config.name = NAME
  config.root_dir = root
  local id = vim.lsp.start(config, { attach = false })
  local started = id and vim.lsp.get_client_by_id(id)
  if not started then
    cb(nil, 'runls: could not start ' .. table.concat(config.cmd, ' '))
    return
  end
  local tries = 0
  local timer = assert(vim.uv.new_timer())
  timer:start(20, 20, vim.schedule_wrap(function()
    tries = tries + 1
    local ready = started.initialized and not started:is_stopped()
    if not ready and tries < 500 and not started:is_stopped() then
      return
    end
    timer:stop()
    timer:close()
    if ready then
      cb(started)
    else
      cb(nil, 'runls: the server did not start (see :checkhealth runls and :LspLog)')
    end
  end))
end

--- Sends the current settings to every running client.
function M.notify_settings()
  local settings = M.settings()
  for _, client in ipairs(M.clients()) do
    client.settings = { runls = settings }
    client:notify('workspace/didChangeConfiguration', { settings = { runls = settings } })
  end
end

--- Configures the plugin. Options: agent, episode, conversation, scope, topK, masking,
--- interpreter (rules table or path to a rules JSON file), maxDiagnosticsPerFile
--- (server settings), cmd (the server command), open_list (default true), folding
--- (fold run files by record, default true), enable
--- (call vim.lsp.enable('runls'), default true). Calling it again changes the settings
--- of running servers through workspace/didChangeConfiguration.
---@param opts? table
function M.setup(opts)
  opts = opts or {}
  if vim.fn.has('nvim-0.11') == 0 then
    vim.notify('runls: Neovim 0.11 or later is needed', vim.log.levels.ERROR)
    return
  end
  local server = {}
  for _, k in ipairs(SETTING_KEYS) do
    if opts[k] ~= nil then
      server[k] = opts[k]
    end
  end
  local err = merge_settings(server)
  if err then
    vim.notify('runls: ' .. err, vim.log.levels.ERROR)
    return
  end
  state.configured = true
  if opts.open_list ~= nil then
    state.open_list = opts.open_list and true or false
  end
  if opts.folding ~= nil then
    state.folding = opts.folding and true or false
  end
  if opts.cmd then
    vim.lsp.config(NAME, { cmd = opts.cmd })
  end
  if opts.enable ~= false then
    vim.lsp.enable(NAME)
  end
  M.notify_settings()
end

--- Changes some settings (same keys as setup) and sends them to running servers.
---@param opts table
---@return boolean ok
function M.set(opts)
  local err = merge_settings(opts)
  if err then
    vim.notify('runls: ' .. err, vim.log.levels.ERROR)
    return false
  end
  state.configured = true
  M.notify_settings()
  return true
end

-- Locations to list items ---------------------------------------------------

--- A reader of the lines the given LSP locations point at (0-based line numbers):
--- from the file's buffer when it is loaded, else from disk, reading each file once
--- and only up to its last needed line (record files can be large).
---@param locations table[] LSP Locations
---@return fun(fname: string, lnum: integer): string?
local function line_reader(locations)
  local want = {} ---@type table<string, table<integer, true>>
  local last = {} ---@type table<string, integer>
  for _, loc in ipairs(locations) do
    local fname = vim.uri_to_fname(loc.uri)
    want[fname] = want[fname] or {}
    for _, pos in ipairs({ loc.range.start, loc.range['end'] }) do
      want[fname][pos.line] = true
      last[fname] = math.max(last[fname] or 0, pos.line)
    end
  end
  local got = {} ---@type table<string, table<integer, string>>
  return function(fname, lnum)
    local bufnr = vim.fn.bufnr(fname)
    if bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) then
      return vim.api.nvim_buf_get_lines(bufnr, lnum, lnum + 1, false)[1]
    end
    if not got[fname] then
      local lines = {}
      got[fname] = lines
      local fd = io.open(fname, 'rb')
      if fd then
        local n, stop, need = 0, last[fname] or lnum, want[fname] or {}
        for l in fd:lines() do
          if need[n] or n == lnum then
            lines[n] = (l:gsub('\r$', ''))
          end
          if n >= stop then
            break
          end
          n = n + 1
        end
        fd:close()
      end
    end
    return got[fname][lnum]
  end
end

--- Byte index (0-based) of a position counted in the client's encoding.
---@param text string?
---@param character integer
---@param encoding string
---@return integer
local function byte_col(text, character, encoding)
  if not text or encoding == 'utf-8' then
    return character
  end
  local ok, idx = pcall(vim.str_byteindex, text, encoding, character, false)
  if ok and idx then
    return idx
  end
  return character
end

--- A quickfix item for an LSP Location, with columns converted to bytes.
---@param location table LSP Location
---@param text string
---@param encoding string
---@param line_text fun(fname: string, lnum: integer): string?
---@return table
local function location_item(location, text, encoding, line_text)
  local fname = vim.uri_to_fname(location.uri)
  local s, e = location.range.start, location.range['end']
  local first = line_text(fname, s.line)
  local last = (e.line == s.line) and first or line_text(fname, e.line)
  return {
    filename = fname,
    lnum = s.line + 1,
    col = byte_col(first, s.character, encoding) + 1,
    end_lnum = e.line + 1,
    end_col = byte_col(last, e.character, encoding) + 1,
    text = text,
  }
end

--- List items from a run/search result, in the server's ranked order (never through
--- vim.lsp.util.locations_to_items, which sorts by position).
---@param result table
---@param encoding string
---@return table[]
function M.search_items(result, encoding)
  local items = {}
  local line_text = line_reader(vim.tbl_map(function(it)
    return it.location
  end, result.items or {}))
  for _, it in ipairs(result.items or {}) do
    local where = it.episode .. '/' .. it.agent
    if type(it.conversation) == 'string' and it.conversation ~= '' then
      where = where .. ' [' .. it.conversation .. ']'
    end
    local item = location_item(it.location, ('%s %s: %s'):format(where, it.reading, it.text), encoding, line_text)
    item.user_data = { runls = it }
    items[#items + 1] = item
  end
  return items
end

--- List items from a workspace/symbol result, in the server's order.
---@param result table
---@param encoding string
---@return table[]
function M.symbol_items(result, encoding)
  local items, locations = {}, {}
  for _, sym in ipairs(result or {}) do
    if sym.location and sym.location.range then
      locations[#locations + 1] = sym.location
    end
  end
  local line_text = line_reader(locations)
  for _, sym in ipairs(result or {}) do
    if sym.location and sym.location.range then
      local text = sym.name
      if sym.containerName and sym.containerName ~= '' then
        text = sym.containerName .. ': ' .. text
      end
      items[#items + 1] = location_item(sym.location, text, encoding, line_text)
    end
  end
  return items
end

--- Fills the quickfix list, or the current window's location list.
local function fill_list(items, title, loclist_win, context)
  local what = { title = title, items = items, context = context }
  local cur = vim.api.nvim_get_current_win()
  if loclist_win then
    if not vim.api.nvim_win_is_valid(loclist_win) then
      loclist_win = cur
    end
    vim.fn.setloclist(loclist_win, {}, ' ', what)
  else
    vim.fn.setqflist({}, ' ', what)
  end
  if state.open_list and #items > 0 then
    if loclist_win then
      vim.api.nvim_win_call(loclist_win, function()
        vim.cmd('lopen')
      end)
    else
      vim.cmd('botright copen')
    end
    -- Opening the list moves the cursor into it; the user stays where they were.
    if vim.api.nvim_win_is_valid(cur) then
      vim.api.nvim_set_current_win(cur)
    end
  end
end

local function done(pattern, data)
  vim.api.nvim_exec_autocmds('User', { pattern = pattern, modeline = false, data = data })
end

local function notify_error(prefix, err)
  vim.notify(('runls: %s: %s'):format(prefix, err.message or vim.inspect(err)), vim.log.levels.ERROR)
end

-- Commands ------------------------------------------------------------------

--- `run/search` for `query` into the quickfix list (or location list with
--- opts.loclist). opts.params adds request fields (spec §5) over the settings for
--- this search only. Fires `User RunlsSearch` with data {query, items, error} when done.
---@param query string
---@param opts? {loclist?: boolean, params?: table}
function M.search(query, opts)
  opts = opts or {}
  query = vim.trim(query or '')
  if query == '' then
    vim.notify('runls: search: a query is needed', vim.log.levels.ERROR)
    return
  end
  local win = vim.api.nvim_get_current_win()
  M.with_client(function(client, msg)
    if not client then
      vim.notify(msg, vim.log.levels.ERROR)
      done('RunlsSearch', { query = query, error = { message = msg } })
      return
    end
    local params = vim.tbl_extend('force', opts.params or {}, { query = query })
    client:request('run/search', params, function(err, result)
      if err then
        notify_error('search', err)
        done('RunlsSearch', { query = query, error = err })
        return
      end
      local items = M.search_items(result or {}, client.offset_encoding)
      fill_list(items, 'runls: ' .. query, opts.loclist and win or nil, { runls = { query = query } })
      if #items == 0 then
        vim.notify('runls: no evidence for ' .. query, vim.log.levels.INFO)
      end
      done('RunlsSearch', { query = query, items = items })
    end)
  end)
end

--- `workspace/symbol` for `query` into the quickfix list. Fires `User RunlsSymbols`.
---@param query string
function M.symbols(query)
  query = vim.trim(query or '')
  M.with_client(function(client, msg)
    if not client then
      vim.notify(msg, vim.log.levels.ERROR)
      done('RunlsSymbols', { query = query, error = { message = msg } })
      return
    end
    client:request('workspace/symbol', { query = query }, function(err, result)
      if err then
        notify_error('symbols', err)
        done('RunlsSymbols', { query = query, error = err })
        return
      end
      local items = M.symbol_items(result or {}, client.offset_encoding)
      fill_list(items, 'runls symbols: ' .. query, nil, { runls = { symbols = query } })
      if #items == 0 then
        vim.notify('runls: no symbols for ' .. query, vim.log.levels.INFO)
      end
      done('RunlsSymbols', { query = query, items = items })
    end)
  end)
end

--- `run/info` of the current client, to `cb(err, info)`.
---@param cb fun(err: any, info: table?)
function M.info(cb)
  M.with_client(function(client, msg)
    if not client then
      cb({ message = msg }, nil)
      return
    end
    client:request('run/info', vim.empty_dict(), function(err, result)
      cb(err, result)
    end)
  end)
end

local ALL_AGENTS = '(all agents)'
local NO_EPISODE = '(no current episode)'
local NO_CONVERSATION = '(no conversation)'

--- Picks agent, episode and conversation from what the run holds (run/info) with
--- vim.ui.select, then sends the new settings. Fires `User RunlsContext` when set.
function M.context()
  M.info(function(err, info)
    if err or not info then
      notify_error('context', err or { message = 'no run/info result' })
      return
    end
    local agents = { ALL_AGENTS }
    vim.list_extend(agents, info.agents or {})
    vim.ui.select(agents, { prompt = 'runls agent' }, function(agent)
      if not agent then
        return
      end
      local episodes = { NO_EPISODE }
      local by_name = {}
      for _, ep in ipairs(info.episodes or {}) do
        episodes[#episodes + 1] = ep.episode
        by_name[ep.episode] = ep
      end
      vim.ui.select(episodes, {
        prompt = 'runls episode',
        format_item = function(e)
          local ep = by_name[e]
          return ep and ('%s (%s)'):format(e, table.concat(ep.agents or {}, ', ')) or e
        end,
      }, function(episode)
        if not episode then
          return
        end
        local convs = { NO_CONVERSATION }
        vim.list_extend(convs, (by_name[episode] or {}).conversations or {})
        vim.ui.select(convs, { prompt = 'runls conversation' }, function(conv)
          if not conv then
            return
          end
          local picked = {
            agent = agent == ALL_AGENTS and '' or agent,
            episode = episode == NO_EPISODE and '' or episode,
            conversation = conv == NO_CONVERSATION and '' or conv,
          }
          M.set(picked)
          vim.notify(('runls: agent %s, episode %s, conversation %s'):format(
            picked.agent ~= '' and picked.agent or '(all)',
            picked.episode ~= '' and picked.episode or '(none)',
            picked.conversation ~= '' and picked.conversation or '(none)'
          ))
          done('RunlsContext', picked)
        end)
      end)
    end)
  end)
end

--- Stops the runls clients and starts them again on the same buffers (the settings
--- are read afresh by before_init). Fires `User RunlsRestart` once all are started.
function M.restart()
  local clients = M.clients()
  if #clients == 0 then
    -- Nothing running: start one for the current buffer's (or directory's) run.
    local buf = vim.api.nvim_get_current_buf()
    M.with_client(function(client, msg)
      if not client then
        vim.notify(msg, vim.log.levels.ERROR)
      elseif vim.startswith(vim.bo[buf].filetype, 'runls-') and vim.api.nvim_buf_is_valid(buf) then
        vim.lsp.buf_attach_client(buf, client.id)
      end
      done('RunlsRestart', {})
    end)
    return
  end
  local pending = #clients
  for _, client in ipairs(clients) do
    local bufs = vim.tbl_keys(client.attached_buffers)
    local config = vim.deepcopy(client.config)
    client:stop()
    local tries = 0
    local timer = assert(vim.uv.new_timer())
    timer:start(50, 50, vim.schedule_wrap(function()
      tries = tries + 1
      if not client:is_stopped() and tries < 100 then
        return
      end
      if not client:is_stopped() then
        client:stop(true)
      end
      timer:stop()
      timer:close()
      local id
      for _, b in ipairs(bufs) do
        if vim.api.nvim_buf_is_valid(b) then
          id = vim.lsp.start(config, { bufnr = b })
        end
      end
      if not id then
        vim.lsp.start(config, { attach = false })
      end
      pending = pending - 1
      if pending == 0 then
        done('RunlsRestart', {})
      end
    end))
  end
end

--- Lines describing the state: clients, roots, settings, indexing progress and
--- run/info's indexing numbers; given to `cb`.
---@param cb fun(lines: string[])
function M.status(cb)
  local lines = {}
  local clients = M.clients()
  if #clients == 0 then
    cb({ 'runls: no server running' })
    return
  end
  local pending = #clients
  for _, client in ipairs(clients) do
    local p = state.progress[client.id]
    local prog = 'no progress reported'
    if p then
      if p.kind == 'end' then
        prog = 'indexing done' .. (p.message and (' (' .. p.message .. ')') or '')
      else
        prog = ('indexing %s%s%s'):format(
          p.title or '',
          p.percentage and (' ' .. p.percentage .. '%') or '',
          p.message and (' ' .. p.message) or ''
        )
      end
    end
    local s = M.settings()
    local set = ('agent=%s episode=%s conversation=%s scope=%s topK=%s masking=%s interpreter=%s'):format(
      s.agent, s.episode, s.conversation, s.scope, s.topK or '', s.masking, s.interpreter and 'rules' or 'none'
    )
    client:request('run/info', vim.empty_dict(), function(err, info)
      lines[#lines + 1] = ('runls client %d, root %s, %d buffer(s)'):format(
        client.id, client.root_dir or '?', vim.tbl_count(client.attached_buffers)
      )
      lines[#lines + 1] = '  ' .. prog
      if err or not info then
        lines[#lines + 1] = '  run/info failed: ' .. ((err and err.message) or 'no result')
      else
        local ix = info.indexing or {}
        lines[#lines + 1] = ('  %s: %d files, %d bytes; %d agents, %d episodes'):format(
          ix.done and 'indexed' or 'indexing',
          ix.files or 0,
          ix.bytes or 0,
          #(info.agents or {}),
          #(info.episodes or {})
        )
      end
      lines[#lines + 1] = '  ' .. set
      pending = pending - 1
      if pending == 0 then
        cb(lines)
      end
    end)
  end
end

--- Folds a buffer by record in a window: the server's textDocument/foldingRange
--- (one fold per record of several lines, one per conversation run) through
--- vim.lsp.foldexpr(), all folds open to start with.
---@param win integer
---@param buf integer
local function fold_by_record(win, buf)
  if not vim.api.nvim_win_is_valid(win) or vim.api.nvim_win_get_buf(win) ~= buf then
    return
  end
  local wo = vim.wo[win][0] -- local to the buffer the window shows: buf
  wo.foldmethod = 'expr'
  wo.foldexpr = 'v:lua.vim.lsp.foldexpr()'
  wo.foldlevel = 99
end

--- On LspAttach of a runls client: folding by record in the buffer's windows, now and
--- whenever it is shown in another, unless the `folding` option (|runls-setup|) or
--- vim.g.runls_folding is false.
---@param ev table autocmd event
function M.on_attach(ev)
  local client = ev.data and vim.lsp.get_client_by_id(ev.data.client_id)
  if not client or client.name ~= NAME or not state.folding or vim.g.runls_folding == false then
    return
  end
  if not client:supports_method('textDocument/foldingRange') then
    return
  end
  local buf = ev.buf
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    fold_by_record(win, buf)
  end
  vim.api.nvim_create_autocmd('BufWinEnter', {
    group = vim.api.nvim_create_augroup('runls_folding_' .. buf, { clear = true }),
    buffer = buf,
    callback = function()
      fold_by_record(vim.api.nvim_get_current_win(), buf)
    end,
  })
end

--- Records the latest $/progress value of runls clients (from the LspProgress event).
---@param ev table autocmd event
function M.on_progress(ev)
  local data = ev.data or {}
  local client = data.client_id and vim.lsp.get_client_by_id(data.client_id)
  if not client or client.name ~= NAME then
    return
  end
  local value = (data.params or {}).value
  if type(value) == 'table' then
    local prev = state.progress[client.id] or {}
    state.progress[client.id] = {
      kind = value.kind,
      title = value.title or prev.title,
      message = value.message,
      percentage = value.percentage,
    }
  end
end

--- The last $/progress value a runls client reported ({kind, title, message,
--- percentage}), or nil.
---@param client_id integer
---@return table?
function M.progress(client_id)
  return state.progress[client_id]
end

--- Workspace diagnostics of the runls clients into the quickfix list.
function M.diagnostics()
  local client, msg = M.client()
  if not client then
    vim.notify(msg, vim.log.levels.ERROR)
    return
  end
  vim.diagnostic.setqflist({
    namespace = vim.lsp.diagnostic.get_namespace(client.id),
    title = 'runls diagnostics',
    open = state.open_list,
  })
end

-- :Runls ----------------------------------------------------------------------

--- Runs fn(query), asking for the query when none was given.
local function with_query(prompt, args, fn)
  if vim.trim(args) ~= '' then
    fn(args)
    return
  end
  vim.ui.input({ prompt = prompt, default = vim.fn.expand('<cword>') }, function(q)
    if q and vim.trim(q) ~= '' then
      fn(q)
    end
  end)
end

local subcommands = {
  search = function(args)
    with_query('runls search: ', args, M.search)
  end,
  lsearch = function(args)
    with_query('runls lsearch: ', args, function(q)
      M.search(q, { loclist = true })
    end)
  end,
  symbols = function(args)
    with_query('runls symbols: ', args, M.symbols)
  end,
  context = function()
    M.context()
  end,
  set = function(args)
    local opts = {}
    for _, word in ipairs(vim.split(args, '%s+', { trimempty = true })) do
      local k, v = word:match('^([%w]+)=(.*)$')
      if not k or not vim.list_contains(SETTING_KEYS, k) then
        vim.notify('runls: set: expected key=value with key one of ' .. table.concat(SETTING_KEYS, ', ') .. ', got ' .. word, vim.log.levels.ERROR)
        return
      end
      opts[k] = v
    end
    if M.set(opts) then
      vim.notify('runls: ' .. vim.inspect(M.settings(), { newline = ' ', indent = '' }))
    end
  end,
  restart = function()
    M.restart()
  end,
  status = function()
    M.status(function(lines)
      vim.notify(table.concat(lines, '\n'))
    end)
  end,
  diagnostics = function()
    M.diagnostics()
  end,
}

--- Runs `:Runls {sub} {args}`.
---@param line string everything after :Runls
function M.command(line)
  local sub, args = vim.trim(line):match('^(%S*)%s*(.*)$')
  local fn = subcommands[sub]
  if not fn then
    vim.notify('runls: unknown subcommand ' .. vim.inspect(sub) .. '; expected one of ' .. table.concat(M.subcommand_names(), ', '), vim.log.levels.ERROR)
    return
  end
  fn(args)
end

---@return string[]
function M.subcommand_names()
  local names = vim.tbl_keys(subcommands)
  table.sort(names)
  return names
end

--- Completion for :Runls.
function M.complete(arglead, cmdline, _)
  local words = vim.split(cmdline, '%s+', { trimempty = true })
  local n = #words
  if cmdline:match('%s$') then
    n = n + 1
  end
  if n <= 2 then
    return vim.tbl_filter(function(s)
      return vim.startswith(s, arglead)
    end, M.subcommand_names())
  end
  if words[2] == 'set' then
    return vim.tbl_filter(function(s)
      return vim.startswith(s, arglead)
    end, vim.tbl_map(function(k)
      return k .. '='
    end, SETTING_KEYS))
  end
  return {}
end

return M
