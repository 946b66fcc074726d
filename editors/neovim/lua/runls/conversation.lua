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

--- The lines of a conversation's buffer and, for each line of a block, the block's
--- record location.
---@return string[] lines, table<integer, table> where (1-based line -> location)
function M.render_conversation(episode, conv, records, more, filters)
  local shown_filters = M.filter_words(filters)
  local lines = {
    ('runls: %s · %s · %d%s record%s%s'):format(
      episode,
      conv,
      #records,
      more and '+' or '',
      (#records == 1 and not more) and '' or 's',
      #shown_filters > 0 and (' · ' .. table.concat(shown_filters, ' ')) or ''
    ),
    '',
  }
  local where = {}
  local prev
  for _, r in ipairs(records) do
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
    where[#lines] = r.location
    for _, l in ipairs(vim.split(r.text, '\n', { plain = true })) do
      lines[#lines + 1] = '  ' .. l
      where[#lines] = r.location
    end
  end
  if #records == 0 then
    lines[#lines + 1] = 'No records (of this conversation).'
  end
  if more then
    lines[#lines + 1] = ''
    lines[#lines + 1] = '… more records: move to the last line to load them.'
  end
  return lines, where
end

--- The buffer state of each conversation buffer.
local shown = {}

local function draw(buf)
  local st = shown[buf]
  local lines, where = M.render_conversation(st.episode, st.conv, st.records, st.cursor ~= nil, st.filters)
  st.where = where
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
end

--- Asks for pages of run/records until `want` records are loaded or the list ends,
--- after `cursor` (nil: from the start); then `cb(err, records, cursor)`.
local function fetch(client, st, cursor, want, cb, acc)
  acc = acc or {}
  local f = st.filters or {}
  local params = { episode = st.episode, conversation = st.conv, minLevel = f.minLevel, from = f.from, to = f.to, limit = PAGE, cursor = cursor }
  client:request('run/records', params, function(err, res)
    if err or not res then
      cb(err or { message = 'no run/records result' })
      return
    end
    vim.list_extend(acc, res.records or {})
    local next_cursor = res.cursor ~= vim.NIL and res.cursor or nil
    if next_cursor and #acc < want then
      fetch(client, st, next_cursor, want, cb, acc)
    else
      cb(nil, acc, next_cursor)
    end
  end)
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

local function load_more(buf)
  local st = shown[buf]
  if not st or not st.cursor or st.loading then
    return
  end
  st.loading = true
  client_of(st, function(client, msg)
    if not client then
      st.loading = false
      notify_error('conversation', { message = msg })
      return
    end
    fetch(client, st, st.cursor, 1, function(err, recs, cursor)
      st.loading = false
      if err then
        notify_error('conversation', err)
        return
      end
      vim.list_extend(st.records, recs)
      st.cursor = cursor
      if vim.api.nvim_buf_is_valid(buf) then
        draw(buf)
      end
    end)
  end)
end

--- Makes a conversation's buffer again from the first page, as many records as it
--- showed (so a grown file's records take their places in time order).
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
    fetch(client, st, nil, math.max(#st.records, 1), function(err, recs, cursor)
      if err then
        notify_error('conversation', err)
        return
      end
      st.records, st.cursor = recs, cursor
      if vim.api.nvim_buf_is_valid(buf) then
        draw(buf)
      end
      if cb then
        cb()
      end
      done('RunlsConversation', { buf = buf, episode = st.episode, conversation = st.conv, records = #st.records })
    end)
  end)
end

local function open(episode, conv, filters)
  local words = M.filter_words(filters)
  local name = ('runls://%s/%s'):format(episode, conv) .. (#words > 0 and ('?' .. table.concat(words, '&')) or '')
  local buf = vim.fn.bufnr('^' .. vim.pesc(name) .. '$')
  if buf == -1 or not shown[buf] then
    buf = vim.api.nvim_create_buf(true, true)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].buftype = 'nofile'
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].swapfile = false
    vim.bo[buf].filetype = 'runls-conversation'
    shown[buf] = { episode = episode, conv = conv, filters = filters or {}, records = {}, where = {}, client = R.client() }
    vim.keymap.set('n', '<CR>', function() jump(buf) end, { buffer = buf, desc = 'runls: open the record in its file' })
    vim.api.nvim_create_autocmd('CursorMoved', {
      buffer = buf,
      callback = function()
        if vim.api.nvim_win_get_cursor(0)[1] >= vim.api.nvim_buf_line_count(buf) - 2 then
          load_more(buf)
        end
      end,
    })
    vim.api.nvim_create_autocmd('BufWipeout', { buffer = buf, callback = function() shown[buf] = nil end })
  end
  shown[buf].client = shown[buf].client or R.client()
  vim.api.nvim_set_current_buf(buf)
  M.refresh_conversation(buf)
end

--- The filters of a conversation buffer as words `level=WARN from=… to=…` (times
--- with `T` for the space, so that each is one word of the command line).
function M.filter_words(filters)
  local out = {}
  filters = filters or {}
  if filters.minLevel then
    out[#out + 1] = 'level=' .. filters.minLevel
  end
  for _, k in ipairs({ 'from', 'to' }) do
    if filters[k] then
      out[#out + 1] = k .. '=' .. filters[k]:gsub(' ', 'T')
    end
  end
  return out
end

local FILTER_KEYS = { level = 'minLevel', from = 'from', to = 'to' }

--- The words of :Runls conversation: episode and conversation (either may be
--- missing), then filters `level=L`, `from=T`, `to=T` (T as yyyy-MM-ddTHH:mm:ss or
--- with `_` for the space); an unknown key is an error naming it.
---@return string|nil episode, string|nil conv, table filters, string|nil err
function M.parse_conversation_args(args)
  local episode, conv, filters = nil, nil, {}
  for _, w in ipairs(vim.split(vim.trim(args or ''), '%s+', { trimempty = true })) do
    local k, v = w:match('^(%a+)=(.*)$')
    if k then
      if not FILTER_KEYS[k] then
        return nil, nil, {}, ('unknown filter %q (level=, from=, to=)'):format(k)
      end
      if k == 'level' then
        v = v:upper()
      else
        v = v:gsub('[T_]', ' ', 1)
      end
      filters[FILTER_KEYS[k]] = v
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

--- :Runls conversation [episode-N] [conv] [level=L] [from=T] [to=T]: what is missing
--- is picked from the run; the filters are run/records' minLevel, from and to.
function M.conversation(args)
  local episode, conv, filters, perr = M.parse_conversation_args(args)
  if perr then
    notify_error('conversation', { message = perr })
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
          format_item = function(s)
            return ('%s  %s · %d records · %s – %s · %s'):format(s.conversation, table.concat(s.agents, ', '), s.records, s.first, s.last, s.line)
          end,
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
