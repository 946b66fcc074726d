-- runls for Neovim: :Runls conversation: one conversation's records in time order
-- (run/records) in a scratch buffer, a block a record (a header `time · agent · level ·
-- conversation`, then the record's lines), <CR> jumps to the record in its file; and
-- the opt-in follow of run buffers (:Runls follow).
local M = {}

-- The other modules' functions, through the plugin's table (loaded lazily: no cycle).
local R = setmetatable({}, { __index = function(_, k) return require('runls')[k] end })
local function done(...) return require('runls.events').done(...) end
local function notify_error(...) return require('runls.events').notify_error(...) end

--- Records a page (run/records' default).
local PAGE = 1000
--- A gap of a minute or more between two records is written between their blocks
--- (as in VS Code: an agent's steps within one exchange are seconds apart).
local GAP_SECONDS = 60

--- Seconds since an epoch of its own for a record time as written, or nil.
local function seconds(t)
  if type(t) ~= 'string' then
    return nil
  end
  local y, mo, d, h, mi, s, ms = t:match('^(%d%d%d%d)-(%d%d)-(%d%d) (%d%d):(%d%d):(%d%d)[,.]?(%d*)')
  if not y then
    return nil
  end
  local days = os.time({ year = tonumber(y), month = tonumber(mo), day = tonumber(d), hour = 12 }) / 86400
  return math.floor(days) * 86400 + tonumber(h) * 3600 + tonumber(mi) * 60 + tonumber(s) + (ms ~= '' and tonumber(ms) / 1000 or 0)
end

--- A gap in words: "3 min 48 s", "2 h 3 min".
function M.duration(secs)
  local s = math.floor(secs + 0.5)
  if s < 60 then
    return s .. ' s'
  end
  local min = math.floor(s / 60)
  if min < 60 then
    return s % 60 ~= 0 and ('%d min %d s'):format(min, s % 60) or (min .. ' min')
  end
  local h = math.floor(min / 60)
  if h < 24 then
    return min % 60 ~= 0 and ('%d h %d min'):format(h, min % 60) or (h .. ' h')
  end
  local days = math.floor(h / 24)
  return h % 24 ~= 0 and ('%d d %d h'):format(days, h % 24) or (days .. ' d')
end

--- The record header of a line of a record file: its time, conversation ('' without
--- the field) and level, or nil for a continuation line (two-space indent, a stack
--- trace) or a line that is no record.
function M.parse_header(line)
  if not line or line:sub(1, 2) == '  ' then
    return nil
  end
  local time, rest = line:match('^(%d%d%d%d%-%d%d%-%d%d %d%d:%d%d:%d%d[,.]?%d*) (.*)$')
  if not time then
    return nil
  end
  local level = rest:match('^(%u+)%s+%[')
  if level then
    rest = rest:sub(#level + 1):gsub('^%s+', '')
  end
  local after = rest:match('^%[[^%]]*%] (.*)$')
  if not after then
    return nil
  end
  local conv = after:match('^%[([^%]]+)%] ')
  return { time = time, level = level, conversation = conv or '' }
end

--- The record that holds line `lnum` (1-based) of a record file: scans up from it
--- through `get(n)` for the record's first line. Returns { line (0-based), time,
--- conversation, level } or nil when no record starts at or above it.
function M.record_above(get, lnum)
  for n = lnum, 1, -1 do
    local h = M.parse_header(get(n))
    if h then
      h.line = n - 1
      return h
    end
  end
  return nil
end

--- The episode folder name of a path below a run (`episode-N`), or nil.
function M.episode_of(path)
  return (path or ''):gsub('\\', '/'):match('/(episode%-%d+)/')
end

--- Where the cursor is, as a record of the run: in a record file, in a quickfix or
--- location list window (the entry under the cursor), or in a conversation buffer.
--- Returns { uri, line (0-based), episode, conversation ('' for none), time } or nil
--- and why not.
function M.record_here()
  local buf = vim.api.nvim_get_current_buf()
  local st = M._shown[buf]
  if st then
    local lnum = vim.api.nvim_win_get_cursor(0)[1]
    local i = st.index[lnum]
    local r = i and st.records[i]
    if not r then
      return nil, 'the cursor is not on a record of this conversation'
    end
    return {
      uri = r.location.uri,
      line = r.location.range.start.line,
      episode = r.episode,
      agent = r.agent,
      level = r.level ~= vim.NIL and r.level or nil,
      conversation = r.conversation ~= vim.NIL and r.conversation or '',
      time = r.time ~= vim.NIL and r.time or nil,
    }
  end
  local fname, lnum
  if vim.bo[buf].buftype == 'quickfix' then
    local wininfo = vim.fn.getwininfo(vim.api.nvim_get_current_win())[1]
    local items = wininfo.loclist == 1 and vim.fn.getloclist(0) or vim.fn.getqflist()
    local it = items[vim.api.nvim_win_get_cursor(0)[1]]
    if not it or it.bufnr == 0 then
      return nil, 'no list entry under the cursor'
    end
    fname, lnum = vim.api.nvim_buf_get_name(it.bufnr), it.lnum
  else
    fname, lnum = vim.api.nvim_buf_get_name(buf), vim.api.nvim_win_get_cursor(0)[1]
  end
  local episode = M.episode_of(fname)
  if not episode then
    return nil, 'not a file of an episode of a run: ' .. fname
  end
  local get
  local fbuf = vim.fn.bufnr(fname)
  if fbuf ~= -1 and vim.api.nvim_buf_is_loaded(fbuf) then
    get = function(n)
      return vim.api.nvim_buf_get_lines(fbuf, n - 1, n, false)[1]
    end
  else
    -- The file up to the line (record files can be large: not read past it).
    local lines, n = {}, 0
    local fd = io.open(fname, 'rb')
    if fd then
      for l in fd:lines() do
        n = n + 1
        lines[n] = l
        if n >= lnum then
          break
        end
      end
      fd:close()
    end
    get = function(i)
      return lines[i]
    end
  end
  local rec = M.record_above(get, lnum)
  if not rec then
    return nil, 'no record at or above line ' .. lnum
  end
  return {
    uri = vim.uri_from_fname(fname),
    line = rec.line,
    episode = episode,
    agent = fname:gsub('\\', '/'):match('/episode%-%d+/([^/]+)/'),
    level = rec.level,
    conversation = rec.conversation,
    time = rec.time,
  }
end

--- A time bound as typed: `yyyy-MM-dd HH:mm[:ss]` (with ` `, `T` or `_`), or
--- `HH:mm[:ss]` on `day` (the episode's day: the record's). Seconds left out are :00
--- for a start and :59 for an end. Returns the bound, or nil and an error.
function M.parse_time_bound(v, day, is_end)
  v = vim.trim(v or '')
  if v == '' then
    return ''
  end
  -- A fraction of a second (as a record's time is written) is dropped: the bounds
  -- are compared to the second (spec §13).
  v = v:gsub('[,.]%d+$', '')
  local date, h, mi, s = v:match('^(%d%d%d%d%-%d%d%-%d%d)[ T_](%d%d?):(%d%d):?(%d*)$')
  if not date then
    h, mi, s = v:match('^(%d%d?):(%d%d):?(%d*)$')
    date = day
  end
  if not h then
    return nil, ('%q: expected HH:mm[:ss] or yyyy-MM-dd HH:mm[:ss]'):format(v)
  end
  if not date then
    return nil, ('%q: no day to put it on (no record under the cursor): give yyyy-MM-dd HH:mm[:ss]'):format(v)
  end
  if s == '' then
    s = is_end and '59' or '00'
  end
  if #s ~= 2 or tonumber(h) > 23 or tonumber(mi) > 59 or tonumber(s) > 59 then
    return nil, ('%q is not a time of day'):format(v)
  end
  return ('%s %02d:%s:%s'):format(date, tonumber(h), mi, s)
end

--- A record time to the second, its milliseconds dropped.
function M.second_of(t)
  return type(t) == 'string' and t:match('^(%d%d%d%d%-%d%d%-%d%d %d%d:%d%d:%d%d)') or nil
end

local LEVELS = { TRACE = 1, DEBUG = 2, INFO = 3, WARN = 4, ERROR = 5 }

--- Whether a record passes a buffer's filters (so that it can open at the record).
local function passes(r, f)
  if f.agent and r.agent ~= f.agent then
    return false
  end
  if f.minLevel and (r.level == nil or r.level == vim.NIL or (LEVELS[r.level] or 0) < (LEVELS[f.minLevel] or 0)) then
    return false
  end
  local t = M.second_of(r.time ~= vim.NIL and r.time or nil)
  if (f.from or f.to) and not t then
    return false
  end
  return not ((f.from and t < f.from) or (f.to and t > f.to))
end

M.EARLIER_LINE = '… earlier records: move to the first lines to load them.'

--- The lines of a conversation's buffer and, for each line of a block, the block's
--- record location; `earlier` (records come before those loaded) puts the line that
--- says so above the blocks.
---@return string[] lines, table<integer, table> where (1-based line -> location), table<integer, integer> index (1-based line -> record index), table<integer, integer> heads (record index -> its header line)
function M.render_conversation(episode, conv, records, more, filters, earlier)
  local shown_filters = M.filter_words(filters)
  local lines = {
    ('runls: %s · %s · %s%d%s record%s%s'):format(
      episode,
      (conv and conv ~= '') and conv or 'all records',
      earlier and '…' or '',
      #records,
      more and '+' or '',
      (#records == 1 and not more and not earlier) and '' or 's',
      #shown_filters > 0 and (' · ' .. table.concat(shown_filters, ' ')) or ''
    ),
    '',
  }
  if earlier then
    lines[#lines + 1] = M.EARLIER_LINE
    lines[#lines + 1] = ''
  end
  local where, index, heads = {}, {}, {}
  local prev
  for i, r in ipairs(records) do
    local t = seconds(r.time)
    if prev and t and t - prev >= GAP_SECONDS then
      lines[#lines + 1] = '⋯ ' .. M.duration(t - prev) .. ' later'
    end
    prev = t or prev
    local head = { r.time ~= vim.NIL and r.time or '(no time)', r.agent }
    if r.level and r.level ~= vim.NIL then
      head[#head + 1] = r.level
    end
    head[#head + 1] = (r.conversation ~= vim.NIL and r.conversation) or '(none)'
    lines[#lines + 1] = table.concat(head, ' · ')
    where[#lines], index[#lines], heads[i] = r.location, i, #lines
    for _, l in ipairs(vim.split(r.text, '\n', { plain = true })) do
      lines[#lines + 1] = '  ' .. l
      where[#lines], index[#lines] = r.location, i
    end
  end
  if #records == 0 then
    lines[#lines + 1] = ('No records (of this %s).'):format((conv and conv ~= '') and 'conversation' or 'episode')
  end
  if more then
    lines[#lines + 1] = ''
    lines[#lines + 1] = '… more records: move to the last line to load them.'
  end
  return lines, where, index, heads
end

--- The buffer state of each conversation buffer.
local shown = {}
M._shown = shown

local function draw(buf)
  local st = shown[buf]
  local lines, where, index, heads = M.render_conversation(st.episode, st.conv, st.records, st.cursor ~= nil, st.filters, st.prev_cursor ~= nil)
  st.where, st.index, st.heads = where, index, heads
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
end

--- The index of the loaded record that holds a location (its file, a line of it), or nil.
local function index_at(records, at)
  local line = at.range.start.line
  local want = vim.uri_to_fname(at.uri)
  for i, r in ipairs(records) do
    local l = r.location
    if l.range.start.line <= line and line <= l.range['end'].line and vim.uri_to_fname(l.uri) == want then
      return i
    end
  end
  return nil
end
M.index_at = index_at

--- Records a page: the `page_size` option (|runls-setup|), else run/records' default.
local function page_size()
  return require('runls.state').state.page_size or PAGE
end

--- One run/records request for a buffer's filters, with `extra` (cursor or at), to `cb(err, result)`.
local function request(client, st, extra, cb)
  local f = st.filters or {}
  local params = {
    episode = st.episode,
    conversation = (st.conv ~= '' and st.conv) or nil,
    agent = f.agent,
    minLevel = f.minLevel,
    from = f.from,
    to = f.to,
    limit = page_size(),
  }
  for k, v in pairs(extra or {}) do
    params[k] = v
  end
  client:request('run/records', params, function(err, res)
    if err or not res then
      cb(err or { message = 'no run/records result' })
      return
    end
    res.records = res.records or {}
    res.cursor = res.cursor ~= vim.NIL and res.cursor or nil
    res.previousCursor = res.previousCursor ~= vim.NIL and res.previousCursor or nil
    cb(nil, res)
  end)
end

--- Loads a buffer's records again: from the first page (or the page at `at`), then
--- the pages after until `want` records are loaded, the record `at` among them (a
--- server before spec rev 3 ignores `at`: then pages are read on until it shows, at
--- most 20); then `cb(err, records, cursor, prev_cursor)`.
local function fetch(client, st, at, want, cb)
  local acc, prev, n = {}, nil, 0
  local function step(extra)
    request(client, st, extra, function(err, res)
      if err then
        cb(err)
        return
      end
      if extra.at or not extra.cursor then
        prev = res.previousCursor
      end
      vim.list_extend(acc, res.records)
      n = n + 1
      local need = #acc < want or (at and not index_at(acc, at) and n <= 20)
      if res.cursor and need then
        step({ cursor = res.cursor })
      else
        cb(nil, acc, res.cursor, prev)
      end
    end)
  end
  step({ at = at })
end

--- The client of the run a conversation buffer shows (the one current when it was
--- opened: the scratch buffer itself belongs to no run), to `cb(client, err)`.
local function client_of(st, cb)
  if st.client and not st.client:is_stopped() then
    cb(st.client)
    return
  end
  R.with_client(function(client, msg)
    st.client = client
    cb(client, msg)
  end)
end

--- Opens the record of the line under the cursor in its file.
local function jump(buf)
  local st = shown[buf]
  local loc = st and st.where[vim.api.nvim_win_get_cursor(0)[1]]
  if not loc then
    return
  end
  vim.cmd.edit(vim.fn.fnameescape(vim.uri_to_fname(loc.uri)))
  vim.api.nvim_win_set_cursor(0, { loc.range.start.line + 1, 0 })
  done('RunlsJump', { uri = loc.uri, line = loc.range.start.line })
end

--- For each window on the buffer: the record under its cursor and at its top line
--- (and how far into their blocks), so that a redraw that adds lines above puts both
--- back.
local function anchors(buf)
  local st = shown[buf]
  local out = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    local view = vim.api.nvim_win_call(win, vim.fn.winsaveview)
    local a = { win = win, view = view }
    for _, which in ipairs({ 'cur', 'top' }) do
      local lnum = which == 'cur' and view.lnum or view.topline
      local i = st.index[lnum]
      if not i then
        -- A line between blocks: the next block's record.
        for l = lnum, #vim.api.nvim_buf_get_lines(buf, 0, -1, false) do
          if st.index[l] then
            i = st.index[l]
            lnum = l - (st.heads[st.index[l]] - lnum)
            break
          end
        end
      end
      if i then
        a[which] = { loc = st.records[i].location, off = lnum - st.heads[i] }
      end
    end
    out[#out + 1] = a
  end
  return out
end

local function restore(buf, list)
  local st = shown[buf]
  for _, a in ipairs(list) do
    if vim.api.nvim_win_is_valid(a.win) and vim.api.nvim_win_get_buf(a.win) == buf then
      local function line_of(x)
        local i = x and index_at(st.records, x.loc)
        return i and math.max(1, st.heads[i] + x.off) or nil
      end
      local view = vim.deepcopy(a.view)
      view.lnum = line_of(a.cur) or view.lnum
      view.topline = line_of(a.top) or view.topline
      view.lnum = math.min(view.lnum, vim.api.nvim_buf_line_count(buf))
      vim.api.nvim_win_call(a.win, function()
        vim.fn.winrestview(view)
      end)
    end
  end
end

--- Loads the page after the last record ('more') or before the first ('earlier');
--- windows on the buffer stay on the records they showed.
local function load(buf, which)
  local st = shown[buf]
  local cursor = st and (which == 'more' and st.cursor or st.prev_cursor)
  if not st or not cursor or st.loading then
    return
  end
  st.loading = true
  client_of(st, function(client, msg)
    if not client then
      st.loading = false
      notify_error('conversation', { message = msg })
      return
    end
    request(client, st, { cursor = cursor }, function(err, res)
      st.loading = false
      if err then
        notify_error('conversation', err)
        return
      end
      if not vim.api.nvim_buf_is_valid(buf) then
        return
      end
      local keep = anchors(buf)
      if which == 'more' then
        vim.list_extend(st.records, res.records)
        st.cursor = res.cursor
      else
        local recs = vim.list_extend(vim.deepcopy(res.records), st.records)
        st.records = recs
        st.prev_cursor = res.previousCursor
      end
      draw(buf)
      restore(buf, keep)
      done('RunlsConversationPage', { buf = buf, which = which, records = #st.records, earlier = st.prev_cursor ~= nil })
    end)
  end)
end

--- Makes a conversation's buffer again, so a grown file's records take their places
--- in time order: from the first page when it showed the list's start, else from the
--- page around its first record; as many records as it showed. Windows on it stay
--- on the records they showed.
function M.refresh_conversation(buf, cb)
  local st = shown[buf]
  if not st then
    return
  end
  client_of(st, function(client, msg)
    if not client then
      notify_error('conversation', { message = msg })
      return
    end
    local at = st.at or (st.prev_cursor and st.records[1] and st.records[1].location) or nil
    fetch(client, st, at, math.max(#st.records, 1), function(err, recs, cursor, prev)
      if err then
        notify_error('conversation', err)
        return
      end
      local keep = vim.api.nvim_buf_is_valid(buf) and anchors(buf) or {}
      local open_at = st.at
      st.at = nil
      st.records, st.cursor, st.prev_cursor = recs, cursor, prev
      local line
      if vim.api.nvim_buf_is_valid(buf) then
        draw(buf)
        if open_at then
          -- Opened at a record: its header under the cursor, in the middle of the window.
          local i = index_at(st.records, open_at)
          line = i and st.heads[i]
          for _, win in ipairs(vim.fn.win_findbuf(buf)) do
            if line then
              vim.api.nvim_win_set_cursor(win, { line, 0 })
              vim.api.nvim_win_call(win, function()
                vim.cmd('normal! zz')
              end)
            end
          end
        else
          restore(buf, keep)
        end
      end
      if cb then
        cb()
      end
      done('RunlsConversation', {
        buf = buf,
        episode = st.episode,
        conversation = st.conv,
        records = #st.records,
        line = line,
        earlier = st.prev_cursor ~= nil,
        more = st.cursor ~= nil,
      })
    end)
  end)
end

local function open(episode, conv, filters, at)
  local words = M.filter_words(filters)
  local name = ('runls://%s/%s'):format(episode, conv ~= '' and conv or '(all records)') .. (#words > 0 and ('?' .. table.concat(words, '&')) or '')
  local buf = vim.fn.bufnr('^' .. vim.pesc(name) .. '$')
  if buf == -1 or not shown[buf] then
    buf = vim.api.nvim_create_buf(true, true)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].buftype = 'nofile'
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].swapfile = false
    vim.bo[buf].filetype = 'runls-conversation'
    -- The client of the run the command was run in (R.client: the current buffer's,
    -- a list entry's file's, the current directory's).
    shown[buf] = { episode = episode, conv = conv, filters = filters or {}, records = {}, where = {}, index = {}, heads = {}, client = R.client() }
    vim.keymap.set('n', '<CR>', function() jump(buf) end, { buffer = buf, desc = 'runls: open the record in its file' })
    vim.api.nvim_create_autocmd('CursorMoved', {
      buffer = buf,
      callback = function()
        local st = shown[buf]
        local lnum = vim.api.nvim_win_get_cursor(0)[1]
        if st and st.cursor and lnum >= vim.api.nvim_buf_line_count(buf) - 2 then
          load(buf, 'more')
        elseif st and st.prev_cursor and lnum <= 4 then
          load(buf, 'earlier')
        end
      end,
    })
    vim.api.nvim_create_autocmd('BufWipeout', { buffer = buf, callback = function() shown[buf] = nil end })
  end
  local st = shown[buf]
  st.client = st.client or R.client()
  if at and index_at(st.records, at) then
    -- Already loaded: the cursor goes to the record.
    vim.api.nvim_set_current_buf(buf)
    local line = st.heads[index_at(st.records, at)]
    vim.api.nvim_win_set_cursor(0, { line, 0 })
    vim.cmd('normal! zz')
    done('RunlsConversation', { buf = buf, episode = episode, conversation = conv, records = #st.records, line = line, earlier = st.prev_cursor ~= nil, more = st.cursor ~= nil })
    return
  end
  if at then
    st.records, st.at = {}, at
  end
  vim.api.nvim_set_current_buf(buf)
  M.refresh_conversation(buf)
end

--- The filters of a conversation buffer as words `level=WARN agent=bob from=… to=…`
--- (times with `T` for the space, so that each is one word of the command line).
function M.filter_words(filters)
  local out = {}
  filters = filters or {}
  if filters.minLevel then
    out[#out + 1] = 'level=' .. filters.minLevel
  end
  if filters.agent then
    out[#out + 1] = 'agent=' .. filters.agent
  end
  for _, k in ipairs({ 'from', 'to' }) do
    if filters[k] then
      out[#out + 1] = k .. '=' .. filters[k]:gsub(' ', 'T')
    end
  end
  return out
end

local FILTER_KEYS = { level = 'minLevel', agent = 'agent', from = 'from', to = 'to' }

--- The words of :Runls conversation: episode and conversation (either may be
--- missing), then filters `level=L`, `agent=A`, `from=T`, `to=T` (T as
--- yyyy-MM-ddTHH:mm[:ss] or with `_` for the space, or HH:mm[:ss] on `day`); an
--- unknown key or a bad time is an error naming it.
---@return string|nil episode, string|nil conv, table filters, string|nil err
function M.parse_conversation_args(args, day)
  local episode, conv, filters = nil, nil, {}
  for _, w in ipairs(vim.split(vim.trim(args or ''), '%s+', { trimempty = true })) do
    local k, v = w:match('^(%a+)=(.*)$')
    if k then
      if not FILTER_KEYS[k] then
        return nil, nil, {}, ('unknown filter %q (level=, agent=, from=, to=)'):format(k)
      end
      if k == 'level' then
        v = v:upper()
      elseif k == 'from' or k == 'to' then
        local t, err = M.parse_time_bound(v, day, k == 'to')
        if not t then
          return nil, nil, {}, k .. '=' .. err
        end
        -- A full time as typed keeps its seconds; one without them gets :00 / :59.
        v = t
      end
      if v ~= '' then
        filters[FILTER_KEYS[k]] = v
      end
    elseif not episode then
      episode = w
    elseif not conv then
      conv = w
    else
      return nil, nil, {}, ('too many words: %q'):format(w)
    end
  end
  return episode, conv, filters, nil
end

--- :Runls conversation [episode-N] [conv] [level=L] [agent=A] [from=T] [to=T]: without
--- an episode, the conversation of the record under the cursor (of a record file, a
--- quickfix or location list entry, a conversation buffer), opened at that record
--- (the episode's records, for a record without the conversation field); with no
--- record there, the episode and conversation are picked from the run. The filters
--- are run/records' minLevel, agent, from and to (times as HH:mm[:ss] on the record's
--- day, or in full).
function M.conversation(args)
  local words = vim.split(vim.trim(args or ''), '%s+', { trimempty = true })
  local positional = #vim.tbl_filter(function(w) return not w:find('=', 1, true) end, words)
  local here = positional == 0 and M.record_here() or nil
  local day = here and here.time and here.time:sub(1, 10) or nil
  local episode, conv, filters, perr = M.parse_conversation_args(args, day)
  if perr then
    notify_error('conversation', { message = perr })
    return
  end
  if here then
    local at = { uri = here.uri, range = { start = { line = here.line, character = 0 }, ['end'] = { line = here.line, character = 0 } } }
    local rec = { agent = here.agent, level = here.level, time = here.time }
    -- The filtered buffer opens at the record only when the record passes the filters.
    if next(filters) ~= nil and not passes(rec, filters) then
      at = nil
    end
    open(here.episode, here.conversation, filters, at)
    return
  end
  if episode and conv then
    open(episode, conv, filters)
    return
  end
  R.info(function(err, info)
    if err or not info then
      notify_error('conversation', err or { message = 'no run/info result' })
      return
    end
    local function pick_conv(ep)
      M.conversation_summaries(ep, function(e2, list)
        if e2 then
          notify_error('conversation', e2)
          return
        end
        vim.ui.select(list, {
          prompt = 'runls conversation of ' .. ep,
          format_item = M.format_summary,
        }, function(s)
          if s then
            open(ep, s.conversation, filters)
          end
        end)
      end)
    end
    if episode then
      pick_conv(episode)
      return
    end
    local eps = vim.tbl_map(function(e) return e.episode end, info.episodes or {})
    vim.ui.select(eps, { prompt = 'runls episode' }, function(ep)
      if ep then
        pick_conv(ep)
      end
    end)
  end)
end

--- A conversation's summary as a picker line: its id, agents, record count, time
--- span and first message.
function M.format_summary(s)
  return ('%s  %s · %d records · %s – %s · %s'):format(s.conversation, table.concat(s.agents or {}, ', '), s.records or 0, s.first or '', s.last or '', s.line or '')
end

--- run/info with an episode: its conversations' summaries, to `cb(err, list)`.
function M.conversation_summaries(episode, cb)
  R.with_client(function(client, msg)
    if not client then
      cb({ message = msg })
      return
    end
    client:request('run/info', { episode = episode }, function(err, res)
      cb(err, (res and res.conversations ~= vim.NIL and res.conversations) or {})
    end)
  end)
end

--- Completion of `:Runls conversation {episode} {conv}` from the running client
--- (synchronous, at most a second): ids in natural order. `of` is 'episode' for the
--- episode ids, else the episode whose conversations to offer.
function M.complete_conversation(of, arglead)
  local client = R.client()
  if not client then
    return {}
  end
  local res
  if of == 'episode' then
    -- The run folder's episode folders: run/info answers at once while indexing,
    -- with what it has read so far, and completion must not wait.
    local root = client.root_dir or (client.config and client.config.root_dir)
    res = {}
    for _, name in ipairs(root and vim.fn.readdir(root) or {}) do
      if name:match('^episode%-%d+$') and vim.fn.isdirectory(root .. '/' .. name) == 1 then
        res[#res + 1] = name
      end
    end
  else
    local r = client:request_sync('run/info', { episode = of }, 1000)
    res = vim.tbl_map(function(s) return s.conversation end, (r and r.result and r.result.conversations ~= vim.NIL and r.result.conversations) or {})
  end
  table.sort(res, R.natural_less)
  return vim.tbl_filter(function(s) return vim.startswith(s, arglead) end, res)
end

-- Follow ----------------------------------------------------------------------------

local FOLLOW_MS = 1000
local to_end
local timers = {}

--- Puts a window's cursor on its buffer's last line, that line at the window's
--- bottom (zb sets the window's top line now, not at the next redraw).
to_end = function(win, buf)
  vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
  vim.api.nvim_win_call(win, function()
    vim.cmd('normal! zb')
  end)
end

--- :Runls follow: toggles following of the current buffer. A run file is read again
--- (autoread, :checktime every second) and a conversation buffer asked again; while
--- the cursor is on the last line it stays there as lines are added (moving up
--- pauses that, going back to the last line resumes it).
function M.follow(buf)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  if timers[buf] then
    timers[buf]:stop()
    timers[buf]:close()
    timers[buf] = nil
    if shown[buf] then
      shown[buf].follow = false
    end
    vim.notify('runls: follow off')
    return false
  end
  local conv = shown[buf]
  if not conv then
    vim.bo[buf].autoread = true
  end
  local timer = assert(vim.uv.new_timer())
  timers[buf] = timer
  local last_count = vim.api.nvim_buf_line_count(buf)
  local function tick()
    if not vim.api.nvim_buf_is_valid(buf) then
      timer:stop()
      timers[buf] = nil
      return
    end
    -- At the end: on the last line the buffer had at the last tick (the buffer may
    -- have been read again since, by the plugin's own :checktime).
    local at_end = {}
    for _, win in ipairs(vim.fn.win_findbuf(buf)) do
      at_end[win] = vim.api.nvim_win_get_cursor(win)[1] >= last_count
    end
    local function stay()
      for win, was in pairs(at_end) do
        if was and vim.api.nvim_win_is_valid(win) then
          to_end(win, buf)
        end
      end
      last_count = vim.api.nvim_buf_line_count(buf)
      done('RunlsFollow', { buf = buf })
    end
    if conv then
      M.refresh_conversation(buf, stay)
    else
      pcall(vim.cmd.checktime, buf)
      stay()
    end
  end
  timer:start(FOLLOW_MS, FOLLOW_MS, vim.schedule_wrap(tick))
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    to_end(win, buf)
  end
  vim.notify('runls: following ' .. vim.api.nvim_buf_get_name(buf))
  return true
end

return M
