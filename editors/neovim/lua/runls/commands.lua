-- runls for Neovim: The :Runls command: subcommands and completion.
local M = {}

local S = require('runls.state')
local SETTING_KEYS = S.SETTING_KEYS
-- The other modules' functions, through the plugin's table (loaded lazily: no cycle).
local R = setmetatable({}, { __index = function(_, k) return require('runls')[k] end })

--- Runs fn(query), asking for the query when none was given.
local function with_query(prompt, args, fn)
  if vim.trim(args) ~= '' then
    fn(args)
    return
  end
  vim.ui.input({ prompt = prompt, default = vim.fn.expand('<cword>') }, function(q)
    if q and vim.trim(q) ~= '' then
      fn(q)
    end
  end)
end

local subcommands = {
  search = function(args)
    with_query('runls search: ', args, R.search)
  end,
  searchall = function(args)
    with_query('runls searchall: ', args, function(q)
      R.search(q, { params = { allConversations = true } })
    end)
  end,
  lsearch = function(args)
    with_query('runls lsearch: ', args, function(q)
      R.search(q, { loclist = true })
    end)
  end,
  symbols = function(args)
    with_query('runls symbols: ', args, R.symbols)
  end,
  context = function()
    R.context()
  end,
  set = function(args)
    local opts = {}
    for _, word in ipairs(vim.split(args, '%s+', { trimempty = true })) do
      local k, v = word:match('^([%w]+)=(.*)$')
      if not k or not vim.list_contains(SETTING_KEYS, k) then
        vim.notify('runls: set: expected key=value with key one of ' .. table.concat(SETTING_KEYS, ', ') .. ', got ' .. word, vim.log.levels.ERROR)
        return
      end
      opts[k] = v
    end
    if R.set(opts) then
      -- A context change says the context as the pickers do, the scope beside the
      -- episode (issue 27: the scope on screen after each change).
      if opts.agent or opts.episode or opts.conversation or opts.scope then
        vim.notify('runls: context ' .. R.context_label(R.settings()))
      else
        vim.notify('runls: ' .. vim.inspect(R.settings(), { newline = ' ', indent = '' }))
      end
    end
  end,
  restart = function()
    R.restart()
  end,
  status = function()
    R.status(function(lines)
      vim.notify(table.concat(lines, '\n'))
    end)
  end,
  diagnostics = function()
    R.diagnostics()
  end,
  conversation = function(args)
    R.conversation(args)
  end,
  follow = function()
    R.follow(0)
  end,
  before = function(args)
    with_query('runls before: ', args, R.before)
  end,
  sort = function(args)
    R.sort(vim.trim(args))
  end,
  failures = function(args)
    R.failures(args)
  end,
  group = function()
    R.group()
  end,
}

--- Runs `:Runls {sub} {args}`.
---@param line string everything after :Runls
function M.command(line)
  local sub, args = vim.trim(line):match('^(%S*)%s*(.*)$')
  local fn = subcommands[sub]
  if not fn then
    vim.notify('runls: unknown subcommand ' .. vim.inspect(sub) .. '; expected one of ' .. table.concat(M.subcommand_names(), ', '), vim.log.levels.ERROR)
    return
  end
  fn(args)
end

---@return string[]
function M.subcommand_names()
  local names = vim.tbl_keys(subcommands)
  table.sort(names)
  return names
end

--- Completion for :Runls.
function M.complete(arglead, cmdline, _)
  local words = vim.split(cmdline, '%s+', { trimempty = true })
  local n = #words
  if cmdline:match('%s$') then
    n = n + 1
  end
  if n <= 2 then
    return vim.tbl_filter(function(s)
      return vim.startswith(s, arglead)
    end, M.subcommand_names())
  end
  if words[2] == 'conversation' and n <= 4 then
    return R.complete_conversation(n == 3 and 'episode' or words[3], arglead)
  end
  if words[2] == 'sort' and n == 3 then
    return vim.tbl_filter(function(s)
      return vim.startswith(s, arglead)
    end, { 'rank', 'time' })
  end
  if words[2] == 'set' then
    return vim.tbl_filter(function(s)
      return vim.startswith(s, arglead)
    end, vim.tbl_map(function(k)
      return k .. '='
    end, SETTING_KEYS))
  end
  return {}
end

return M
