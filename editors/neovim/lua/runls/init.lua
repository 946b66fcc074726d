-- runls for Neovim: setup and the plugin's functions, one module a feature:
-- settings, client (finding and starting servers), search (run/search, workspace/symbol),
-- lists (quickfix items and highlights), context (pickers), records (folding by record,
-- reloading changed files), status (progress, :Runls status), commands (:Runls).
local M = {}

local S = require('runls.state')
local state, NAME, SETTING_KEYS = S.state, S.NAME, S.SETTING_KEYS

for _, mod in ipairs({ 'settings', 'client', 'lists', 'search', 'context', 'status', 'records', 'conversation', 'failures', 'commands' }) do
  for k, v in pairs(require('runls.' .. mod)) do
    if type(v) == 'function' and k ~= 'merge_settings' and k ~= 'fill_list' and k ~= 'line_reader' then
      M[k] = v
    end
  end
end

--- Configures the plugin. Options: agent, episode, conversation, scope, topK, masking,
--- interpreter (rules table or path to a rules JSON file), maxDiagnosticsPerFile
--- (server settings), cmd (the server command), open_list (default true), folding
--- (fold run files by record, default true), page_size (records a page of a
--- conversation buffer, 1 to 10000, default 1000), enable
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
  local err = require('runls.settings').merge_settings(server)
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
  if opts.page_size ~= nil then
    local n = tonumber(opts.page_size)
    if not n or n < 1 or n > 10000 or n ~= math.floor(n) then
      vim.notify('runls: page_size: expected a whole number from 1 to 10000, got ' .. vim.inspect(opts.page_size), vim.log.levels.ERROR)
      return
    end
    state.page_size = n
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
  local err = require('runls.settings').merge_settings(opts)
  if err then
    vim.notify('runls: ' .. err, vim.log.levels.ERROR)
    return false
  end
  state.configured = true
  M.notify_settings()
  require('runls.search').mark_stale()
  return true
end

return M
