-- runls for Neovim: `run/search` and `workspace/symbol` into the quickfix list.
local M = {}

-- The other modules' functions, through the plugin's table (loaded lazily: no cycle).
local R = setmetatable({}, { __index = function(_, k) return require('runls')[k] end })
local function done(...) return require('runls.events').done(...) end
local function notify_error(...) return require('runls.events').notify_error(...) end
local function fill_list(...) return require('runls.lists').fill_list(...) end

--- Calls cb(client) with the run's client (`given`, when a search is asked again
--- of the client that answered it); without one, says why and fires `User <event>`
--- with the query and that error.
---@param event string
---@param query string
---@param cb fun(client: vim.lsp.Client)
---@param given? vim.lsp.Client
local function with_client_for(event, query, cb, given)
  if given then
    cb(given)
    return
  end
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

--- The indexing notice of a run/search result (spec §12: the answer was made while
--- the run's first index was built, from part of it), or nil.
---@param result table
---@return table?
function M.indexing_notice(result)
  for _, n in ipairs((result or {}).notices or {}) do
    if n.field == 'indexing' then
      return n
    end
  end
end

--- What a list's title adds for a partial answer: ` [partial: 40% indexed]`, or ''.
---@param ctx table the list's context.runls
---@return string
local function partial_suffix(ctx)
  return ctx.partial and (' [partial: %s indexed]'):format(ctx.partial) or ''
end

--- After a partial answer from `client`: when run/info says the first index is
--- already done (the answer was on its way as it ended), the lists are searched again
--- at once; otherwise they are at the indexing progress's end (status.on_progress).
---@param client vim.lsp.Client
local function refresh_when_indexed(client)
  client:request('run/info', vim.empty_dict(), function(err, info)
    if not err and type(info) == 'table' and type(info.indexing) == 'table' and info.indexing.done then
      M.refresh_partial(client.id)
    end
  end)
end

--- Searches again the quickfix list and the location lists that hold a partial
--- answer of client `client_id` (their title says `[partial: …]`), each into its own
--- list, in place: called when that client's indexing ends. Fires `User RunlsSearch`
--- (data.refreshed true) for each.
---@param client_id integer
function M.refresh_partial(client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  if not client or client:is_stopped() then
    return
  end
  local function redo(list, win)
    local ctx = type(list.context) == 'table' and list.context.runls
    if type(ctx) ~= 'table' or not ctx.partial or ctx.client_id ~= client_id then
      return
    end
    if ctx.symbols then
      M.symbols(ctx.symbols, { client = client, replace = list.id })
    else
      M.search(ctx.query, { params = ctx.params, order = ctx.order, title = ctx.title, loclist = win ~= nil, win = win, client = client, replace = list.id })
    end
  end
  -- Every list of the stacks: a search and then a symbols list, both partial,
  -- are both asked again.
  for nr = 1, vim.fn.getqflist({ nr = '$' }).nr do
    redo(vim.fn.getqflist({ nr = nr, context = 0, id = 0 }))
  end
  local seen = {}
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    for nr = 1, vim.fn.getloclist(w, { nr = '$' }).nr do
      local l = vim.fn.getloclist(w, { nr = nr, context = 0, id = 0 })
      if l.id ~= 0 and not seen[l.id] then
        seen[l.id] = true
        redo(l, w)
      end
    end
  end
end

--- `run/search` for `query` into the quickfix list (or location list with
--- opts.loclist). opts.params adds request fields (spec §5) over the settings for
--- this search only; opts.order 'time' lists the results in time order; opts.title
--- names the list. An answer made while the run is still being indexed (its
--- `indexing` notice) is titled `[partial: 40% indexed]` and searched again, into the
--- same list, when indexing ends (opts.client, opts.win and opts.replace are that
--- search's: its client, location list window and list id). Fires `User RunlsSearch`
--- with data {query, items, error, partial, refreshed} when done.
---@param query string
---@param opts? {loclist?: boolean, params?: table, order?: string, title?: string, client?: vim.lsp.Client, win?: integer, replace?: integer}
function M.search(query, opts)
  opts = opts or {}
  query = vim.trim(query or '')
  if query == '' then
    vim.notify('runls: search: a query is needed', vim.log.levels.ERROR)
    return
  end
  local win = opts.win or vim.api.nvim_get_current_win()
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
      local partial = M.indexing_notice(result)
      local ctx = {
        query = query, asked = M.context_label(asked), params = opts.params, order = opts.order or 'rank', title = opts.title,
        partial = partial and partial.value or nil, client_id = client.id,
      }
      fill_list(items, (opts.title or ('runls: ' .. query)) .. partial_suffix(ctx), opts.loclist and win or nil, { runls = ctx }, opts.replace)
      local notes = M.notes(result, asked)
      if #items == 0 then
        table.insert(notes, 1, 'no evidence for ' .. query)
      end
      if opts.replace and not partial then
        table.insert(notes, 1, ('indexing done: %s searched again (%d results)'):format(query, #items))
      end
      if #notes > 0 then
        vim.notify('runls: ' .. table.concat(notes, '\n'), (#items == 0 and not opts.replace) and vim.log.levels.WARN or vim.log.levels.INFO)
      end
      if partial then
        refresh_when_indexed(client)
      end
      done('RunlsSearch', {
        query = query, items = items, hidden = result.hidden, notices = result.notices, notes = notes,
        partial = partial and partial.value or nil, refreshed = opts.replace ~= nil,
      })
    end)
  end, opts.client)
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
    if n.field == 'indexing' then
      line = line .. ' (searched again when indexing ends)'
    elseif n.field == 'agent' then
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
    local base = (ctx.title or ('runls: ' .. ctx.query)) .. partial_suffix(ctx)
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

--- `workspace/symbol` for `query` into the quickfix list. A partial answer (made
--- while the run is still being indexed: each symbol's container ends with
--- `· partial: 40% indexed`) is titled `[partial: 40% indexed]` and asked again, into
--- the same list, when indexing ends (opts.client and opts.replace are that ask's).
--- Fires `User RunlsSymbols` with data {query, items, error, partial, refreshed}.
---@param query string
---@param opts? {client?: vim.lsp.Client, replace?: integer}
function M.symbols(query, opts)
  opts = opts or {}
  query = vim.trim(query or '')
  with_client_for('RunlsSymbols', query, function(client)
    client:request('workspace/symbol', { query = query }, function(err, result)
      if err then
        notify_error('symbols', err)
        done('RunlsSymbols', { query = query, error = err })
        return
      end
      local partial
      for _, sym in ipairs(result or {}) do
        partial = partial or (type(sym.containerName) == 'string' and sym.containerName:match(' · partial: (%d+%%) indexed$'))
      end
      -- No symbol to carry the mark: the indexing progress still running says it.
      local p = require('runls.status').progress(client.id)
      if not partial and #(result or {}) == 0 and p and p.kind ~= 'end' then
        partial = ('%d%%'):format(p.percentage or 0)
      end
      local items = R.symbol_items(result or {}, client.offset_encoding)
      local ctx = { symbols = query, partial = partial, client_id = client.id }
      fill_list(items, 'runls symbols: ' .. query .. partial_suffix(ctx), nil, { runls = ctx }, opts.replace)
      if #items == 0 and not opts.replace then
        vim.notify('runls: no symbols for ' .. query, vim.log.levels.INFO)
      end
      if partial then
        vim.notify(('runls: symbols for %s from the %s of the run indexed so far (asked again when indexing ends)'):format(query, partial), vim.log.levels.INFO)
        refresh_when_indexed(client)
      end
      done('RunlsSymbols', { query = query, items = items, partial = partial, refreshed = opts.replace ~= nil })
    end)
  end, opts.client)
end

return M
