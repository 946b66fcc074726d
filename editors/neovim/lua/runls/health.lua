-- :checkhealth runls
local M = {}

local function server_cmd()
  local ok, config = pcall(function()
    return vim.lsp.config.runls
  end)
  if ok and config and type(config.cmd) == 'table' then
    return config.cmd
  end
  return { 'runls', 'serve' }
end

function M.check()
  local health = vim.health

  health.start('Neovim')
  local v = vim.version()
  local version = ('%d.%d.%d'):format(v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok('Neovim ' .. version .. ' (0.11 or later needed)')
  else
    health.error('Neovim ' .. version .. ': 0.11 or later is needed (vim.lsp.config, vim.lsp.enable)')
  end

  health.start('runls binary')
  local cmd = server_cmd()
  local exe = vim.fn.exepath(cmd[1])
  if exe == '' then
    health.error(('%s not found on $PATH'):format(cmd[1]), {
      'Build it: go build -o ~/.local/bin/runls ./cmd/runls (from the runls repository)',
      "or set the command: require('runls').setup({ cmd = { '/path/to/runls', 'serve' } })",
    })
  else
    local res = vim.system({ exe, 'version' }, { text = true }):wait(5000)
    local out = vim.trim((res.stdout or '') .. (res.stderr or ''))
    if res.code == 0 and out ~= '' then
      health.ok(('%s: %s'):format(exe, out:gsub('\n', ' ')))
    else
      health.error(('%s version failed (exit %s): %s'):format(exe, tostring(res.code), out))
    end
  end

  health.start('runls server')
  local clients = vim.lsp.get_clients({ name = 'runls' })
  if #clients == 0 then
    local enabled = vim.lsp.is_enabled and vim.lsp.is_enabled('runls')
    health.warn('no runls client running' .. (enabled and '' or " (and vim.lsp.enable('runls') not called)"), {
      "Call vim.lsp.enable('runls') (or require('runls').setup{}), then open a .history or .log file of a run folder",
    })
  end
  local root_mod = require('runls.root')
  for _, client in ipairs(clients) do
    local nbufs = vim.tbl_count(client.attached_buffers)
    if nbufs > 0 then
      health.ok(('client %d attached to %d buffer(s)'):format(client.id, nbufs))
    else
      health.warn(('client %d running but attached to no buffer'):format(client.id))
    end
    local root = client.root_dir
    if root and root_mod.is_run(root) then
      health.ok(('root found: %s (holds episode-N folders)'):format(root))
    elseif root then
      health.error(('root %s holds no episode-N folder'):format(root))
    else
      health.error(('client %d has no root folder'):format(client.id))
    end
  end
end

return M
