-- Server configuration for runls, read by vim.lsp.config/vim.lsp.enable (Neovim 0.11+).
-- Settings are not written here: before_init takes them from require('runls') at each
-- start, so a restart or a late setup() call starts the server with the current ones.

---@type vim.lsp.Config
return {
  cmd = { 'runls', 'serve' },
  filetypes = { 'runls-history', 'runls-log' },
  root_dir = function(bufnr, on_dir)
    local root = require('runls.root').find(vim.api.nvim_buf_get_name(bufnr))
    -- No run folder above the file: do not start a server that would index the wrong tree.
    if root then
      on_dir(root)
    end
  end,
  before_init = function(params, config)
    local settings = require('runls').settings(config)
    params.initializationOptions = { runls = settings }
    -- Right after initialize the client sends its `settings` table through
    -- workspace/didChangeConfiguration; that table is config.settings (the same table,
    -- not a copy), so change it in place to keep both messages the same.
    config.settings = config.settings or {}
    config.settings.runls = settings
  end,
  settings = { runls = {} },
}
