-- runls: filetypes for agent record files, the :Runls command, <Plug> mappings.
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

-- A logback record line with the conversation field (spec §2), for .log files that
-- are not below an episode folder.
local RECORD = '^%d%d%d%d%-%d%d%-%d%d %d%d:%d%d:%d%d[,.]?%d*%s+%u*%s*%[[^%]]*%] %[[^%]]*%] '

vim.filetype.add({
  extension = {
    history = 'runls-history',
  },
  pattern = {
    -- Record files below <run>/episode-N/<agent>/: runls logs, whatever they hold.
    ['.*/episode%-%d+/[^/]+/.*%.log'] = { 'runls-log', { priority = 10 } },
    -- Other .log files: runls logs only when they start with a record line; nil lets
    -- Neovim's own detection of .log files decide.
    ['.*%.log'] = {
      function(_, bufnr)
        if not bufnr or bufnr < 1 or not vim.api.nvim_buf_is_valid(bufnr) then
          return
        end
        for _, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, 5, false)) do
          if line:match(RECORD) then
            return 'runls-log'
          end
        end
      end,
      { priority = 5 },
    },
  },
})

vim.api.nvim_create_user_command('Runls', function(cmd)
  require('runls').command(cmd.args)
end, {
  nargs = '+',
  desc = 'runls: search agent memory (search, lsearch, symbols, context, set, status, restart, diagnostics)',
  complete = function(...)
    return require('runls').complete(...)
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
}
for _, m in ipairs(plug) do
  vim.keymap.set(m[1], m[2], m[3], { desc = 'runls: ' .. m[2]:match('%((.*)%)') })
end
