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

--- `run/search` for `query` into the quickfix list (or location list with
--- opts.loclist). opts.params adds request fields (spec §5) over the settings for
--- this search only. Fires `User RunlsSearch` with data {query, items, error} when done.
---@param query string
---@param opts? {loclist?: boolean, params?: table}
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
      fill_list(items, 'runls: ' .. query, opts.loclist and win or nil, { runls = { query = query } })
      local notes = M.notes(result, vim.tbl_extend('force', R.settings(), opts.params or {}))
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
