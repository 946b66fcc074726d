-- runls for Neovim: The settings the server is sent under `runls` (spec §9): read, checked and merged.
local M = {}

local S = require('runls.state')
local state = S.state
local NAME = S.NAME
local STRING_KEYS = S.STRING_KEYS
local SETTING_KEYS = S.SETTING_KEYS

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
  -- Sent only when set (a server before it names an unknown key as ignored).
  if type(src.ignoreDiagnostics) == 'table' then
    out.ignoreDiagnostics = src.ignoreDiagnostics
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
    elseif k == 'ignoreDiagnostics' then
      -- A list of codes, or (from :Runls set) a comma-separated string; "" clears it.
      if type(v) == 'string' then
        v = vim.split(v, ',', { trimempty = true })
      end
      if v ~= nil and v ~= vim.NIL and type(v) ~= 'table' then
        return ('ignoreDiagnostics: expected a list of codes, got %s'):format(vim.inspect(v))
      end
      next_settings.ignoreDiagnostics = (v ~= vim.NIL) and v or nil
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

M.merge_settings = merge_settings
return M
