-- runls: the :Runls command, <Plug> mappings, progress tracking, folding by record on
-- attach (filetypes: ftdetect/).
-- No keys are mapped: map the <Plug> names yourself (see :help runls-mappings).
if vim.g.loaded_runls then
  return
end
vim.g.loaded_runls = true

if vim.fn.has('nvim-0.11') == 0 then
  vim.api.nvim_create_user_command('Runls', function()
    vim.notify('runls: Neovim 0.11 or later is needed', vim.log.levels.ERROR)
  end, { nargs = '*' })
  return
end

vim.api.nvim_create_user_command('Runls', function(cmd)
  require('runls').command(cmd.args)
end, {
  nargs = '+',
  desc = 'runls: search agent memory (search, searchall, lsearch, before, sort, symbols, context, set, status, restart, diagnostics, conversation, failures, follow)',
  complete = function(...)
    return require('runls').complete(...)
  end,
})

vim.api.nvim_create_autocmd('LspAttach', {
  group = vim.api.nvim_create_augroup('runls_attach', { clear = true }),
  callback = function(ev)
    require('runls').on_attach(ev)
  end,
})

-- The query's words highlighted in a runls search's quickfix or location list.
vim.api.nvim_create_autocmd('FileType', {
  group = vim.api.nvim_create_augroup('runls_lists', { clear = true }),
  pattern = 'qf',
  callback = function(ev)
    require('runls').highlight_list(ev.buf)
  end,
})

-- A record file the server reports changed (its diagnostics published again) is read
-- again in its buffer, so that a jump to a result lands on the right line.
vim.api.nvim_create_autocmd('DiagnosticChanged', {
  group = vim.api.nvim_create_augroup('runls_changed', { clear = true }),
  callback = function(ev)
    require('runls').on_diagnostics(ev)
  end,
})

vim.api.nvim_create_autocmd('LspProgress', {
  group = vim.api.nvim_create_augroup('runls_progress', { clear = true }),
  callback = function(ev)
    require('runls').on_progress(ev)
  end,
})

local function ask(prompt, default, fn)
  vim.ui.input({ prompt = prompt, default = default }, function(q)
    if q and vim.trim(q) ~= '' then
      fn(q)
    end
  end)
end

local function selection()
  local ok, lines = pcall(vim.fn.getregion, vim.fn.getpos('v'), vim.fn.getpos('.'), { type = vim.fn.mode() })
  if not ok then
    return ''
  end
  return table.concat(lines, ' ')
end

local plug = {
  { 'n', '<Plug>(runls-search)', function() ask('runls search: ', vim.fn.expand('<cword>'), require('runls').search) end },
  { 'n', '<Plug>(runls-search-word)', function() require('runls').search(vim.fn.expand('<cword>')) end },
  { 'x', '<Plug>(runls-search)', function()
    local q = selection()
    vim.api.nvim_feedkeys(vim.keycode('<Esc>'), 'nx', false)
    require('runls').search(q)
  end },
  { 'n', '<Plug>(runls-lsearch)', function()
    ask('runls lsearch: ', vim.fn.expand('<cword>'), function(q) require('runls').search(q, { loclist = true }) end)
  end },
  { 'n', '<Plug>(runls-symbols)', function() ask('runls symbols: ', vim.fn.expand('<cword>'), require('runls').symbols) end },
  { 'n', '<Plug>(runls-context)', function() require('runls').context() end },
  { 'n', '<Plug>(runls-status)', function() require('runls').command('status') end },
  { 'n', '<Plug>(runls-restart)', function() require('runls').restart() end },
  { 'n', '<Plug>(runls-diagnostics)', function() require('runls').diagnostics() end },
  { 'n', '<Plug>(runls-conversation)', function() require('runls').conversation('') end },
  { 'n', '<Plug>(runls-before)', function() ask('runls before: ', vim.fn.expand('<cword>'), require('runls').before) end },
  { 'n', '<Plug>(runls-failures)', function() require('runls').failures('') end },
}
for _, m in ipairs(plug) do
  vim.keymap.set(m[1], m[2], m[3], { desc = 'runls: ' .. m[2]:match('%((.*)%)') })
end
