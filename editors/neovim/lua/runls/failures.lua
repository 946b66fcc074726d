-- runls for Neovim: :Runls failures: the run's ERROR records and exceptions grouped by
-- message (run/failures, spec §9) into the quickfix list, an entry a group at its
-- first record; `:Runls conversation` on an entry opens that record's story, `:Runls
-- group` lists the group's records (asked for then: runls' own `pattern`).
local M = {}

-- The other modules' functions, through the plugin's table (loaded lazily: no cycle).
local R = setmetatable({}, { __index = function(_, k) return require('runls')[k] end })
local function done(...) return require('runls.events').done(...) end
local function notify_error(...) return require('runls.events').notify_error(...) end

local KEYS = { level = 'minLevel', agent = 'agent' }

--- The words of :Runls failures: `[episode-N] [level=WARN] [agent=A]`.
---@return table? params, string? err
function M.parse_failures_args(args)
  local params = {}
  for _, w in ipairs(vim.split(vim.trim(args or ''), '%s+', { trimempty = true })) do
    local k, v = w:match('^(%a+)=(.*)$')
    if k then
      if not KEYS[k] then
        return nil, ('unknown filter %q (level=, agent=)'):format(k)
      end
      params[KEYS[k]] = k == 'level' and v:upper() or v
    elseif not params.episode then
      params.episode = w
    else
      return nil, ('too many words: %q'):format(w)
    end
  end
  return params
end

--- A group's quickfix text: `count× pattern (agents · episodes · first … last)`.
function M.failure_text(g)
  local when = ''
  if type(g.first) == 'string' and type(g.last) == 'string' then
    when = g.first == g.last and g.first or (g.first .. ' … ' .. g.last)
  end
  local about = vim.tbl_filter(function(x) return x ~= '' end, {
    table.concat(g.agents or {}, ', '),
    table.concat(g.episodes or {}, ', '),
    when,
  })
  return ('%d× %s (%s)'):format(g.count or 0, (g.pattern or ''):gsub('%s+', ' '), table.concat(about, ' · '))
end

--- :Runls failures [episode-N] [level=L] [agent=A]. Fires `User RunlsFailures` with
--- {groups, items, error}.
function M.failures(args)
  local params, perr = M.parse_failures_args(args)
  if not params then
    notify_error('failures', { message = perr })
    done('RunlsFailures', { error = { message = perr } })
    return
  end
  R.with_client(function(client, msg)
    if not client then
      vim.notify(msg, vim.log.levels.ERROR)
      done('RunlsFailures', { error = { message = msg } })
      return
    end
    -- An entry a group, at its first record: one location a group is all the list
    -- needs (§9's 100 a group are 370 KB on a 1 GB run; runls' own maxRecords).
    client:request('run/failures', vim.tbl_extend('force', params, { maxRecords = 1 }), function(err, result)
      if err then
        notify_error('failures', err)
        done('RunlsFailures', { error = err })
        return
      end
      local groups = (result and result.groups ~= vim.NIL and result.groups) or {}
      local items = {}
      for _, g in ipairs(groups) do
        local first = g.records and g.records[1]
        if first then
          local item = R.symbol_items({ { name = M.failure_text(g), location = first } }, client.offset_encoding)[1]
          item.col, item.end_lnum, item.end_col = 1, nil, nil
          item.user_data = { runls_failure = g }
          items[#items + 1] = item
        end
      end
      local title = 'runls failures' .. (params.episode and (' of ' .. params.episode) or '')
      require('runls.lists').fill_list(items, title, nil, { runls = { failures = params } })
      if #items == 0 then
        vim.notify('runls: no failures' .. (params.episode and (' in ' .. params.episode) or ''), vim.log.levels.INFO)
      end
      done('RunlsFailures', { groups = groups, items = items })
    end)
  end)
end

--- The failure group of the list entry under the cursor (in a quickfix or location list
--- window), else of the quickfix list's current entry, and the params of the :Runls
--- failures that listed it.
---@return table? group, table? params
local function group_here()
  local what = { items = 0, idx = 0, context = 0 }
  local list
  if vim.bo.buftype == 'quickfix' then
    local loclist = vim.fn.getwininfo(vim.api.nvim_get_current_win())[1].loclist == 1
    list = loclist and vim.fn.getloclist(0, what) or vim.fn.getqflist(what)
    list.idx = vim.api.nvim_win_get_cursor(0)[1]
  else
    list = vim.fn.getqflist(what)
  end
  local it = list.items[list.idx]
  local g = it and type(it.user_data) == 'table' and it.user_data.runls_failure
  if type(g) ~= 'table' or type(g.pattern) ~= 'string' then
    return nil
  end
  local ctx = type(list.context) == 'table' and type(list.context.runls) == 'table' and list.context.runls.failures
  return g, type(ctx) == 'table' and ctx or {}
end

--- :Runls group: the records of the failure group under the cursor (an entry of a
--- :Runls failures list), with the list's filters, into a new quickfix list (`:colder`
--- goes back to the groups), an entry a record with its first line. Fires `User
--- RunlsGroup` with {group, items, error}.
function M.group()
  local g, params = group_here()
  if not g then
    local msg = 'not on an entry of a :Runls failures list'
    notify_error('group', { message = msg })
    done('RunlsGroup', { error = { message = msg } })
    return
  end
  R.with_client(function(client, msg)
    if not client then
      vim.notify(msg, vim.log.levels.ERROR)
      done('RunlsGroup', { error = { message = msg } })
      return
    end
    client:request('run/failures', vim.tbl_extend('force', params, { pattern = g.pattern }), function(err, result)
      if err then
        notify_error('group', err)
        done('RunlsGroup', { error = err })
        return
      end
      local found
      for _, x in ipairs((result and result.groups ~= vim.NIL and result.groups) or {}) do
        if x.pattern == g.pattern then
          found = x
        end
      end
      if not found then
        local gone = 'the run no longer has this group: :Runls failures lists it again'
        vim.notify('runls: ' .. gone, vim.log.levels.WARN)
        done('RunlsGroup', { error = { message = gone } })
        return
      end
      local locs = found.records ~= vim.NIL and found.records or {}
      local syms = vim.tbl_map(function(l) return { name = found.pattern, location = l } end, locs)
      local items = R.symbol_items(syms, client.offset_encoding)
      local line_text = require('runls.lists').line_reader(locs)
      for _, item in ipairs(items) do
        item.col, item.end_lnum, item.end_col = 1, nil, nil
        item.text = line_text(item.filename, item.lnum - 1) or item.text
      end
      local shown = found.count > #locs and (' (the first %d)'):format(#locs) or ''
      local title = ('runls failures: %d× %s%s'):format(found.count, found.pattern:gsub('%s+', ' '), shown)
      require('runls.lists').fill_list(items, title, nil, { runls = { failures = params, group = found.pattern } })
      done('RunlsGroup', { group = found, items = items })
    end)
  end)
end

return M
