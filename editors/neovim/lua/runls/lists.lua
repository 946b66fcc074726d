-- runls for Neovim: LSP locations as quickfix and location list items, columns converted to bytes, in the server's order.
local M = {}

local S = require('runls.state')
local state = S.state

--- A reader of the lines the given LSP locations point at (0-based line numbers):
--- from the file's buffer when it is loaded, else from disk, reading each file once
--- and only up to its last needed line (record files can be large).
---@param locations table[] LSP Locations
---@return fun(fname: string, lnum: integer): string?
local function line_reader(locations)
  local want = {} ---@type table<string, table<integer, true>>
  local last = {} ---@type table<string, integer>
  for _, loc in ipairs(locations) do
    local fname = vim.uri_to_fname(loc.uri)
    want[fname] = want[fname] or {}
    for _, pos in ipairs({ loc.range.start, loc.range['end'] }) do
      want[fname][pos.line] = true
      last[fname] = math.max(last[fname] or 0, pos.line)
    end
  end
  local got = {} ---@type table<string, table<integer, string>>
  return function(fname, lnum)
    local bufnr = vim.fn.bufnr(fname)
    if bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) then
      return vim.api.nvim_buf_get_lines(bufnr, lnum, lnum + 1, false)[1]
    end
    if not got[fname] then
      local lines = {}
      got[fname] = lines
      local fd = io.open(fname, 'rb')
      if fd then
        local n, stop, need = 0, last[fname] or lnum, want[fname] or {}
        for l in fd:lines() do
          if need[n] or n == lnum then
            lines[n] = (l:gsub('\r$', ''))
          end
          if n >= stop then
            break
          end
          n = n + 1
        end
        fd:close()
      end
    end
    return got[fname][lnum]
  end
end

--- Byte index (0-based) of a position counted in the client's encoding.
---@param text string?
---@param character integer
---@param encoding string
---@return integer
local function byte_col(text, character, encoding)
  if not text or encoding == 'utf-8' then
    return character
  end
  local ok, idx = pcall(vim.str_byteindex, text, encoding, character, false)
  if ok and idx then
    return idx
  end
  return character
end

--- A quickfix item for an LSP Location, with columns converted to bytes.
---@param location table LSP Location
---@param text string
---@param encoding string
---@param line_text fun(fname: string, lnum: integer): string?
---@return table
local function location_item(location, text, encoding, line_text)
  local fname = vim.uri_to_fname(location.uri)
  local s, e = location.range.start, location.range['end']
  local first = line_text(fname, s.line)
  local last = (e.line == s.line) and first or line_text(fname, e.line)
  return {
    filename = fname,
    lnum = s.line + 1,
    col = byte_col(first, s.character, encoding) + 1,
    end_lnum = e.line + 1,
    end_col = byte_col(last, e.character, encoding) + 1,
    text = text,
  }
end

--- List items from a run/search result, in the server's ranked order (never through
--- vim.lsp.util.locations_to_items, which sorts by position).
---@param result table
---@param encoding string
---@return table[]
function M.search_items(result, encoding)
  local items = {}
  local line_text = line_reader(vim.tbl_map(function(it)
    return it.location
  end, result.items or {}))
  for rank, it in ipairs(result.items or {}) do
    local item = location_item(it.location, M.item_text(rank, it), encoding, line_text)
    item.user_data = { runls = it }
    items[#items + 1] = item
  end
  return items
end

--- A search item's quickfix text: rank, score, the record's time and level, its
--- conversation, how it reads (told/said), then the piece. The path (episode and
--- agent) is the item's file name, so it is not repeated.
---@param rank integer
---@param it table a run/search item
---@return string
function M.item_text(rank, it)
  local parts = { '#' .. rank, ('%.2f'):format(tonumber(it.score) or 0) }
  for _, v in ipairs({ it.time, it.level }) do
    if type(v) == 'string' and v ~= '' then
      parts[#parts + 1] = v
    end
  end
  if type(it.conversation) == 'string' and it.conversation ~= '' then
    parts[#parts + 1] = '[' .. it.conversation .. ']'
  end
  if it.reading == 'told' or it.reading == 'said' then
    parts[#parts + 1] = it.reading .. ':'
  end
  parts[#parts + 1] = it.text
  return table.concat(parts, ' ')
end

local match_ns = vim.api.nvim_create_namespace('runls_matches')
vim.api.nvim_set_hl(0, 'RunlsMatch', { default = true, link = 'Search' })

--- The byte ranges, in a piece's text, of its matches (UTF-16 ranges, spec §9).
---@param text string
---@param matches table[]
---@return integer[][] 0-based [start, end) byte ranges
function M.match_bytes(text, matches)
  local out = {}
  for _, m in ipairs(matches or {}) do
    local ok1, s = pcall(vim.str_byteindex, text, 'utf-16', m[1], false)
    local ok2, e = pcall(vim.str_byteindex, text, 'utf-16', m[2], false)
    if ok1 and ok2 and s < e then
      out[#out + 1] = { s, e }
    end
  end
  return out
end

--- Highlights the query's words (RunlsMatch, linked to Search) in a quickfix or
--- location list buffer of a runls search: in each line, the piece's text ends it.
---@param buf integer the list's buffer
function M.highlight_list(buf)
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  local win = vim.fn.bufwinid(buf)
  local what = { items = 0, context = 0 }
  local list
  if win ~= -1 and vim.fn.getwininfo(win)[1].loclist == 1 then
    list = vim.fn.getloclist(win, what)
  else
    list = vim.fn.getqflist(what)
  end
  vim.api.nvim_buf_clear_namespace(buf, match_ns, 0, -1)
  if type(list.context) ~= 'table' or type(list.context.runls) ~= 'table' or not list.context.runls.query then
    return
  end
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  for i, item in ipairs(list.items or {}) do
    local it = type(item.user_data) == 'table' and item.user_data.runls
    local line = lines[i]
    if type(it) == 'table' and type(it.text) == 'string' and line and #line >= #it.text and line:sub(-#it.text) == it.text then
      local at = #line - #it.text
      for _, r in ipairs(M.match_bytes(it.text, it.matches)) do
        vim.api.nvim_buf_set_extmark(buf, match_ns, i - 1, at + r[1], { end_col = at + r[2], hl_group = 'RunlsMatch' })
      end
    end
  end
end

--- List items from a workspace/symbol result, in the server's order.
---@param result table
---@param encoding string
---@return table[]
function M.symbol_items(result, encoding)
  local items, locations = {}, {}
  for _, sym in ipairs(result or {}) do
    if sym.location and sym.location.range then
      locations[#locations + 1] = sym.location
    end
  end
  local line_text = line_reader(locations)
  for _, sym in ipairs(result or {}) do
    if sym.location and sym.location.range then
      local text = sym.name
      if sym.containerName and sym.containerName ~= '' then
        text = sym.containerName .. ': ' .. text
      end
      items[#items + 1] = location_item(sym.location, text, encoding, line_text)
    end
  end
  return items
end

--- Fills the quickfix list, or the current window's location list. With
--- `replace` (a list id), that list is filled again in place, where it is in the
--- stack, and no window opens or moves (a search asked again once indexing ends);
--- a list no longer there is left alone.
local function fill_list(items, title, loclist_win, context, replace)
  local what = { title = title, items = items, context = context }
  local cur = vim.api.nvim_get_current_win()
  if replace then
    what.id = replace
    local get = loclist_win and function(w) return vim.fn.getloclist(loclist_win, w) end or vim.fn.getqflist
    if not (loclist_win and not vim.api.nvim_win_is_valid(loclist_win)) and get({ id = replace }).id == replace then
      if loclist_win then
        vim.fn.setloclist(loclist_win, {}, 'r', what)
      else
        vim.fn.setqflist({}, 'r', what)
      end
      local qfbuf = get({ id = replace, qfbufnr = 0 }).qfbufnr
      if qfbuf and qfbuf > 0 then
        M.highlight_list(qfbuf)
      end
    end
    return
  end
  if loclist_win then
    if not vim.api.nvim_win_is_valid(loclist_win) then
      loclist_win = cur
    end
    vim.fn.setloclist(loclist_win, {}, ' ', what)
  else
    vim.fn.setqflist({}, ' ', what)
  end
  if state.open_list and #items > 0 then
    if loclist_win then
      vim.api.nvim_win_call(loclist_win, function()
        vim.cmd('lopen')
      end)
    else
      vim.cmd('botright copen')
    end
    local qfbuf = loclist_win and vim.fn.getloclist(loclist_win, { qfbufnr = 0 }).qfbufnr or vim.fn.getqflist({ qfbufnr = 0 }).qfbufnr
    if qfbuf and qfbuf > 0 then
      M.highlight_list(qfbuf)
    end
    -- Opening the list moves the cursor into it; the user stays where they were.
    if vim.api.nvim_win_is_valid(cur) then
      vim.api.nvim_set_current_win(cur)
    end
  end
end

M.fill_list = fill_list
M.line_reader = line_reader
return M
