-- runls for Neovim: Picking the chat context (agent, episode, conversation) from what the run holds (run/info).
local M = {}

-- The other modules' functions, through the plugin's table (loaded lazily: no cycle).
local R = setmetatable({}, { __index = function(_, k) return require('runls')[k] end })
local function done(...) return require('runls.events').done(...) end
local function notify_error(...) return require('runls.events').notify_error(...) end

--- `run/info` of the current client, to `cb(err, info)`.
---@param cb fun(err: any, info: table?)
function M.info(cb)
  R.with_client(function(client, msg)
    if not client then
      cb({ message = msg }, nil)
      return
    end
    client:request('run/info', vim.empty_dict(), function(err, result)
      cb(err, result)
    end)
  end)
end

local ALL_AGENTS = '(all agents)'
local NO_EPISODE = '(no current episode)'
local NO_CONVERSATION = '(no conversation)'

--- Picks agent, episode and conversation from what the run holds (run/info) with
--- vim.ui.select, then sends the new settings. Fires `User RunlsContext` when set.
function M.context()
  M.info(function(err, info)
    if err or not info then
      notify_error('context', err or { message = 'no run/info result' })
      return
    end
    local agents = { ALL_AGENTS }
    vim.list_extend(agents, info.agents or {})
    vim.ui.select(agents, { prompt = 'runls agent' }, function(agent)
      if not agent then
        return
      end
      local episodes = { NO_EPISODE }
      local by_name = {}
      for _, ep in ipairs(info.episodes or {}) do
        episodes[#episodes + 1] = ep.episode
        by_name[ep.episode] = ep
      end
      vim.ui.select(episodes, {
        prompt = 'runls episode',
        format_item = function(e)
          local ep = by_name[e]
          return ep and ('%s (%s)'):format(e, table.concat(ep.agents or {}, ', ')) or e
        end,
      }, function(episode)
        if not episode then
          return
        end
        local convs = { NO_CONVERSATION }
        local ids = vim.deepcopy((by_name[episode] or {}).conversations or {})
        table.sort(ids, M.natural_less)
        vim.list_extend(convs, ids)
        local function pick_conv(summaries)
          -- The conversations as :Runls conversation lists them: agents, record
          -- count, time span and first message.
          local by_id = {}
          for _, sm in ipairs(summaries or {}) do
            by_id[sm.conversation] = sm
          end
          vim.ui.select(convs, {
            prompt = 'runls conversation',
            format_item = function(c)
              return by_id[c] and R.format_summary(by_id[c]) or c
            end,
          }, function(conv)
            if not conv then
              return
            end
            local picked = {
              agent = agent == ALL_AGENTS and '' or agent,
              episode = episode == NO_EPISODE and '' or episode,
              conversation = conv == NO_CONVERSATION and '' or conv,
            }
            R.set(picked)
            vim.notify('runls: context ' .. R.context_label(R.settings()))
            done('RunlsContext', picked)
          end)
        end
        if episode == NO_EPISODE then
          pick_conv({})
        else
          R.conversation_summaries(episode, function(_, list)
            pick_conv(list)
          end)
        end
      end)
    end)
  end)
end

--- Orders ids as people read them: runs of digits by their number (conv-2 before
--- conv-10), the rest byte-wise; equal numbers (07, 7) by their text.
---@param a string
---@param b string
---@return boolean
function M.natural_less(a, b)
  local ia, ib = 1, 1
  while ia <= #a and ib <= #b do
    local da, db = a:match('^%d+', ia), b:match('^%d+', ib)
    if da and db then
      local na, nb = da:gsub('^0+(%d)', '%1'), db:gsub('^0+(%d)', '%1')
      if #na ~= #nb then
        return #na < #nb
      end
      if na ~= nb then
        return na < nb
      end
      if da ~= db then
        return da < db
      end
      ia, ib = ia + #da, ib + #db
    else
      local ca, cb = a:sub(ia, ia), b:sub(ib, ib)
      if ca ~= cb then
        return ca < cb
      end
      ia, ib = ia + 1, ib + 1
    end
  end
  return #a - ia < #b - ib
end

return M
