-- runls for Neovim: The User autocmds the commands fire when done, and error notifications.
local M = {}


local function done(pattern, data)
  vim.api.nvim_exec_autocmds('User', { pattern = pattern, modeline = false, data = data })
end

local function notify_error(prefix, err)
  vim.notify(('runls: %s: %s'):format(prefix, err.message or vim.inspect(err)), vim.log.levels.ERROR)
end

M.done = done
M.notify_error = notify_error
return M
