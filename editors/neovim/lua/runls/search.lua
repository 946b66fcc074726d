-- runls for Neovim: `run/search` and `workspace/symbol` into the quickfix list.
local M = {}

-- The other modules' functions, through the plugin's table (loaded lazily: no cycle).
local R = setmetatable({}, { __index = function(_, k) return require('runls')[k] end })
local function done(...) return require('runls.events').done(...) end
local function notify_error(...) return require('runls.events').notify_error(...) end
local function fill_list(...) return require('runls.lists').fill_list(...) end

--- Calls cb(client) with the run's client; without one, says why and fires
--- `User <event>` with the query and that error.
---@param event string
---@param query string
---@param cb fun(client: vim.lsp.Client)
local function with_client_for(event, query, cb)
  R.with_client(function(client, msg)
    if not client then
      vim.notify(msg, vim.log.levels.ERROR)
      done(event, { query = query, error = { message = msg } })
      return
    end
    cb(client)
  end)
end

--- The context a request is asked in, in words: `alice · episode-2 (scope: run) ·
--- conv-1` ("all agents", "no episode", "no conversation" for unset fields): the
--- scope stands beside the episode, since with scope run the results come from every
--- episode, not only the one named.
---@param s table settings (and request fields over them)
---@return string
function M.context_label(s)
  local function v(x)
    return (type(x) == 'string' and x ~= '') and x or nil
  end
  return ('%s · %s (scope: %s) · %s'):format(
    v(s.agent) or 'all agents',
    v(s.episode) or 'no episode',
    v(s.scope) == 'episode' and 'episode' or 'run',
    v(s.conversation) or 'no conversation'
  )
end

--- Orders search items by the records' time, oldest first (`,` and `.` alike), items
--- without a time last; ties by rank. Returns a new list.
---@param items table[] quickfix items with user_data.runls (the search item) and user_data.rank
---@return table[]
function M.by_time(items)
  local out = vim.list_slice(items)
  local function t(it)
    local x = it.user_data and it.user_data.runls and it.user_data.runls.time
    return type(x) == 'string' and x:gsub(',', '.') or nil
  end
  local function rank(it)
    return (it.user_data and it.user_data.rank) or 0
  end
  table.sort(out, function(a, b)
    local ta, tb = t(a), t(b)
    if ta and tb and ta ~= tb then
      return ta < tb
    end
    if (ta == nil) ~= (tb == nil) then
      return ta ~= nil
    end
    return rank(a) < rank(b)
  end)
  return out
end

--- `run/search` for `query` into the quickfix list (or location list with
--- opts.loclist). opts.params adds request fields (spec §5) over the settings for
--- this search only; opts.order 'time' lists the results in time order; opts.title
--- names the list. Fires `User RunlsSearch` with data {query, items, error} when done.
---@param query string
---@param opts? {loclist?: boolean, params?: table, order?: string, title?: string}
function M.search(query, opts)
  opts = opts or {}
  query = vim.trim(query or '')
  if query == '' then
    vim.notify('runls: search: a query is needed', vim.log.levels.ERROR)
    return
  end
  local win = vim.api.nvim_get_current_win()
  with_client_for('RunlsSearch', query, function(client)
    local params = vim.tbl_extend('force', opts.params or {}, { query = query })
    client:request('run/search', params, function(err, result)
      if err then
        notify_error('search', err)
        done('RunlsSearch', { query = query, error = err })
        return
      end
      result = result or {}
      -- A buffer of a file that changed on disk is read again first, so that the
      -- items' columns are the file's and a jump lands on the right line.
      R.reload_changed(vim.tbl_map(function(it)
        return vim.uri_to_fname(it.location.uri)
      end, result.items or {}))
      local items = R.search_items(result, client.offset_encoding)
      for i, it in ipairs(items) do
        it.user_data.rank = i
      end
      if opts.order == 'time' then
        items = M.by_time(items)
      end
      local asked = vim.tbl_extend('force', R.settings(), opts.params or {})
      fill_list(items, opts.title or ('runls: ' .. query), opts.loclist and win or nil, {
        runls = { query = query, asked = M.context_label(asked), params = opts.params, order = opts.order or 'rank', title = opts.title },
      })
      local notes = M.notes(result, asked)
      if #items == 0 then
        table.insert(notes, 1, 'no evidence for ' .. query)
      end
      if #notes > 0 then
        vim.notify('runls: ' .. table.concat(notes, '\n'), #items == 0 and vim.log.levels.WARN or vim.log.levels.INFO)
      end
      done('RunlsSearch', { query = query, items = items, hidden = result.hidden, notices = result.notices, notes = notes })
    end)
  end)
end

--- What a search's filters hid and which of its values the run does not hold
--- (spec §12), a line each, with the command that widens the search.
---@param result table a run/search result
---@param asked table the request's fields (settings and params)
---@return string[]
function M.notes(result, asked)
  local out = {}
  for _, n in ipairs(result.notices or {}) do
    local line = n.message or ''
    if n.field == 'agent' then
      local to = type(n.suggestion) == 'string' and n.suggestion or ''
      line = line .. (' (:Runls set agent=%s)'):format(to)
    elseif n.field == 'episode' or n.field == 'conversation' then
      line = line .. ' (:Runls context)'
    end
    out[#out + 1] = line
  end
  local h = type(result.hidden) == 'table' and result.hidden or {}
  local ep = (type(asked.episode) == 'string' and asked.episode ~= '') and asked.episode or 'the current episode'
  if (h.scope or 0) > 0 then
    out[#out + 1] = ('%d more outside %s (:Runls set scope=run)'):format(h.scope, ep)
  end
  if (h.noContext or 0) > 0 then
    out[#out + 1] = ('%d more in record files, which need an episode and a conversation (:Runls context)'):format(h.noContext)
  end
  if (h.unfielded or 0) > 0 then
    out[#out + 1] = ('%d more without the conversation field in %s (evidence only from another episode)'):format(h.unfielded, ep)
  end
  if (h.otherConversation or 0) > 0 then
    out[#out + 1] = ('%d more in other conversations of %s (:Runls searchall searches them)'):format(h.otherConversation, ep)
  end
  return out
end

--- :Runls before [query]: searches what was written before the record under the
--- cursor (of a record file, a quickfix entry, a conversation buffer): `to` is the
--- record's time, the episode and conversation are the record's (for this search
--- only); the results are listed in time order.
---@param query string
function M.before(query)
  local here, why = R.record_here()
  local to = here and require('runls.conversation').second_of(here.time)
  if not to then
    vim.notify('runls: before: put the cursor on a record (' .. (why or 'it has no time') .. ')', vim.log.levels.ERROR)
    return
  end
  local params = { to = to }
  if here.conversation ~= '' then
    params.episode, params.conversation = here.episode, here.conversation
  end
  M.search(query, { params = params, order = 'time', title = ('runls before %s: %s'):format(to, vim.trim(query or '')) })
end

--- :Runls sort time|rank: the runls search in the quickfix list, in time order or in
--- the server's ranking.
---@param order string
function M.sort(order)
  if order ~= 'time' and order ~= 'rank' then
    vim.notify('runls: sort: expected time or rank, got ' .. vim.inspect(order), vim.log.levels.ERROR)
    return
  end
  local list = vim.fn.getqflist({ items = 0, context = 0, title = 0, idx = 0 })
  local ctx = type(list.context) == 'table' and list.context.runls
  if type(ctx) ~= 'table' or not ctx.query then
    vim.notify('runls: sort: the quickfix list holds no runls search', vim.log.levels.ERROR)
    return
  end
  local items = list.items
  if order == 'time' then
    items = M.by_time(items)
  else
    table.sort(items, function(a, b)
      return ((a.user_data or {}).rank or 0) < ((b.user_data or {}).rank or 0)
    end)
  end
  ctx.order = order
  vim.fn.setqflist({}, 'r', { items = items, context = list.context, title = list.title })
  done('RunlsSort', { order = order, items = items })
end

--- After a context change: the runls searches in the quickfix list and the current
--- window's location list asked in another context are titled stale (their results
--- were chosen for that context); fires `User RunlsStale` with the titles changed.
function M.mark_stale()
  local now = R.settings()
  local changed = {}
  local function mark(get, set)
    local list = get({ context = 0, title = 0, id = 0 })
    local ctx = type(list.context) == 'table' and list.context.runls
    if type(ctx) ~= 'table' or not ctx.asked then
      return
    end
    local label = M.context_label(vim.tbl_extend('force', now, ctx.params or {}))
    local base = ctx.title or ('runls: ' .. ctx.query)
    local title = label == ctx.asked and base or ('%s [stale: asked in %s; now %s]'):format(base, ctx.asked, label)
    if title ~= list.title then
      set({}, 'a', { id = list.id, title = title })
      changed[#changed + 1] = title
    end
  end
  mark(vim.fn.getqflist, vim.fn.setqflist)
  mark(function(what) return vim.fn.getloclist(0, what) end, function(l, a, what) return vim.fn.setloclist(0, l, a, what) end)
  done('RunlsStale', { titles = changed })
end

--- `workspace/symbol` for `query` into the quickfix list. Fires `User RunlsSymbols`.
---@param query string
function M.symbols(query)
  query = vim.trim(query or '')
  with_client_for('RunlsSymbols', query, function(client)
    client:request('workspace/symbol', { query = query }, function(err, result)
      if err then
        notify_error('symbols', err)
        done('RunlsSymbols', { query = query, error = err })
        return
      end
      local items = R.symbol_items(result or {}, client.offset_encoding)
      fill_list(items, 'runls symbols: ' .. query, nil, { runls = { symbols = query } })
      if #items == 0 then
        vim.notify('runls: no symbols for ' .. query, vim.log.levels.INFO)
      end
      done('RunlsSymbols', { query = query, items = items })
    end)
  end)
end

return M
