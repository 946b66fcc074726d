-- runls for Neovim: The runls clients: finding, starting, restarting them, and sending them the settings.
local M = {}

local S = require('runls.state')
local NAME = S.NAME
-- The other modules' functions, through the plugin's table (loaded lazily: no cycle).
local R = setmetatable({}, { __index = function(_, k) return require('runls')[k] end })
local function done(...) return require('runls.events').done(...) end

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
  -- A conversation buffer belongs to the run it was opened from.
  local conv = require('runls.conversation')._shown[vim.api.nvim_get_current_buf()]
  if conv and conv.client and not conv.client:is_stopped() then
    return conv.client
  end
  local root_mod = require('runls.root')
  for _, path in ipairs({ vim.api.nvim_buf_get_name(0), M.list_entry_file(), vim.fn.getcwd() }) do
    local root = root_mod.find(path)
    for _, c in ipairs(root and clients or {}) do
      if c.root_dir and vim.fs.normalize(c.root_dir) == root then
        return c
      end
    end
  end
  return clients[1]
end

--- In a quickfix or location list window, the file of the entry under the cursor
--- (so that a command run there goes to that file's run), else "".
---@return string
function M.list_entry_file()
  if vim.bo.buftype ~= 'quickfix' then
    return ''
  end
  local info = vim.fn.getwininfo(vim.api.nvim_get_current_win())[1]
  local items = info.loclist == 1 and vim.fn.getloclist(0) or vim.fn.getqflist()
  local it = items[vim.api.nvim_win_get_cursor(0)[1]]
  return (it and it.bufnr > 0) and vim.api.nvim_buf_get_name(it.bufnr) or ''
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
  local settings = R.settings()
  for _, client in ipairs(M.clients()) do
    client.settings = { runls = settings }
    client:notify('workspace/didChangeConfiguration', { settings = { runls = settings } })
  end
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

return M
