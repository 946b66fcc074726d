-- runls for Neovim: What the clients are doing: status lines, $/progress, the workspace diagnostics.
local M = {}

local S = require('runls.state')
local state = S.state
local NAME = S.NAME
-- The other modules' functions, through the plugin's table (loaded lazily: no cycle).
local R = setmetatable({}, { __index = function(_, k) return require('runls')[k] end })

--- Lines describing the state: clients, roots, settings, indexing progress and
--- run/info's indexing numbers; given to `cb`.
---@param cb fun(lines: string[])
function M.status(cb)
  local lines = {}
  local clients = R.clients()
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
    local s = R.settings()
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
    -- The first index is done: lists that hold a partial answer are asked again
    -- (docs/partial.md).
    if value.kind == 'end' then
      require('runls.search').refresh_partial(client.id)
    end
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
  local client, msg = R.client()
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

return M
