-- runls for Neovim: the plugin's one state, shared by its modules, and the names the server reads.
local NAME = 'runls'

--- Keys the server reads under `runls` (spec §9). String fields use "" for "unset".
local STRING_KEYS = { 'agent', 'episode', 'conversation', 'scope', 'masking' }
local SETTING_KEYS = { 'agent', 'episode', 'conversation', 'scope', 'topK', 'masking', 'interpreter', 'maxDiagnosticsPerFile', 'ignoreDiagnostics' }

---@class runls.State
---@field configured boolean setup() was called
---@field settings table<string, any> what the server is sent under `runls`
---@field open_list boolean open the quickfix/location window after a search
---@field folding boolean fold runls buffers by record (vim.lsp.foldexpr)
---@field progress table<integer, table> last $/progress value per client id
---@field page_size integer? records a page of a conversation buffer (run/records' limit)
local state = {
  configured = false,
  settings = {},
  open_list = true,
  folding = true,
  progress = {},
}

return { NAME = NAME, STRING_KEYS = STRING_KEYS, SETTING_KEYS = SETTING_KEYS, state = state }
