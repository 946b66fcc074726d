-- runls for Neovim: records in the buffer: folding by record on attach, and reading
-- again the buffers of files that changed on disk.
local M = {}

local S = require('runls.state')
local state = S.state
local NAME = S.NAME

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

--- gO in a runls buffer: the records under their conversations in the location list
--- (textDocument/documentSymbol, as Neovim's own gO), its current entry the record
--- under the cursor, so that the list opens where the user is reading.
---@param buf integer
function M.map_outline(buf)
  vim.keymap.set('n', 'gO', function()
    local win = vim.api.nvim_get_current_win()
    local line = vim.api.nvim_win_get_cursor(win)[1]
    vim.lsp.buf.document_symbol({
      on_list = function(t)
        local idx = 1
        for i, it in ipairs(t.items or {}) do
          if it.lnum <= line and (it.end_lnum == nil or it.end_lnum == 0 or it.end_lnum >= line) then
            idx = i
          end
        end
        vim.fn.setloclist(win, {}, ' ', { title = t.title, items = t.items, context = t.context, idx = idx })
        vim.cmd('lopen')
        vim.api.nvim_win_set_cursor(0, { idx, 0 })
        require('runls.events').done('RunlsOutline', { idx = idx, items = #(t.items or {}) })
      end,
    })
  end, { buffer = buf, desc = 'runls: the records in the location list, at the one under the cursor' })
end

--- On LspAttach of a runls client: folding by record in the buffer's windows, now and
--- whenever it is shown in another, unless the `folding` option (|runls-setup|) or
--- vim.g.runls_folding is false.
---@param ev table autocmd event
function M.on_attach(ev)
  local client = ev.data and vim.lsp.get_client_by_id(ev.data.client_id)
  if not client or client.name ~= NAME then
    return
  end
  if client:supports_method('textDocument/documentSymbol') then
    M.map_outline(ev.buf)
  end
  if not state.folding or vim.g.runls_folding == false then
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

--- Reads again the loaded, unmodified buffers of files that changed on disk
--- (:checktime), among the given file names; a buffer with changes of its own is
--- left to the user.
---@param fnames string[]
function M.reload_changed(fnames)
  local seen = {}
  for _, f in ipairs(fnames) do
    local buf = vim.fn.bufnr(f)
    if buf ~= -1 and not seen[buf] and vim.api.nvim_buf_is_loaded(buf) and not vim.bo[buf].modified then
      seen[buf] = true
      pcall(vim.cmd.checktime, buf)
    end
  end
end

--- On DiagnosticChanged from a runls client (the server publishes a record file's
--- diagnostics again when the file changed): the buffer is read again.
---@param ev table autocmd event
function M.on_diagnostics(ev)
  local buf = ev.buf
  if not buf or not vim.api.nvim_buf_is_loaded(buf) or #vim.lsp.get_clients({ name = NAME, bufnr = buf }) == 0 then
    return
  end
  M.reload_changed({ vim.api.nvim_buf_get_name(buf) })
end

return M
