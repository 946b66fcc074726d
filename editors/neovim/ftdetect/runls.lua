-- Filetypes of runls record files (sourced by `:filetype on`, and by plugin managers
-- that load plugins lazily, before the plugin itself).
--
-- `runls-history` and `runls-log`, not `history`/`log`: Neovim already detects `.log`
-- files as `log` and other plugins key on that name; a prefixed name changes nothing
-- for other `.log` files and says which server and syntax apply.

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

