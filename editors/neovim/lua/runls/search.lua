-- runls for Neovim: `run/search` and `workspace/symbol` into the quickfix list.
local M = {}

-- The other modules' functions, through the plugin's table (loaded lazily: no cycle).
local R = setmetatable({}, { __index = function(_, k) return require('runls')[k] end })
local function done(...) return require('runls.events').done(...) end
local function notify_error(...) return require('runls.events').notify_error(...) end
local function fill_list(...) return require('runls.lists').fill_list(...) end

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
  R.with_client(function(client, msg)
    if not client then
      vim.notify(msg, vim.log.levels.ERROR)
      done('RunlsSearch', { query = query, error = { message = msg } })
      return
    end
    local params = vim.tbl_extend('force', opts.params or {}, { query = query })
    client:request('run/search', params, function(err, result)
      if err then
        notify_error('search', err)
        done('RunlsSearch', { query = query, error = err })
        return
      end
      local items = R.search_items(result or {}, client.offset_encoding)
      fill_list(items, 'runls: ' .. query, opts.loclist and win or nil, { runls = { query = query } })
      if #items == 0 then
        vim.notify('runls: no evidence for ' .. query, vim.log.levels.INFO)
      end
      done('RunlsSearch', { query = query, items = items })
    end)
  end)
end

--- `workspace/symbol` for `query` into the quickfix list. Fires `User RunlsSymbols`.
---@param query string
function M.symbols(query)
  query = vim.trim(query or '')
  R.with_client(function(client, msg)
    if not client then
      vim.notify(msg, vim.log.levels.ERROR)
      done('RunlsSymbols', { query = query, error = { message = msg } })
      return
    end
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
