-- Finding the run folder: the folder that holds `episode-N` folders.
local M = {}

local EPISODE = '^episode%-%d+$'

--- True when `dir` holds at least one `episode-N` folder.
---@param dir string
---@return boolean
function M.is_run(dir)
  for name, kind in vim.fs.dir(dir) do
    if name:match(EPISODE) and (kind == 'directory' or (kind == 'link' and vim.fn.isdirectory(dir .. '/' .. name) == 1)) then
      return true
    end
  end
  return false
end

--- The run folder of `path` (a file or folder below it, or the run folder itself), or nil.
--- The nearest answer wins: an `episode-N` ancestor's parent, or an ancestor that holds
--- `episode-N` folders (for files directly in the run folder).
---@param path string
---@return string?
function M.find(path)
  if path == nil or path == '' then
    return nil
  end
  path = vim.fs.normalize(vim.fn.fnamemodify(path, ':p'))
  local start = path
  if vim.fn.isdirectory(path) == 0 then
    start = vim.fs.dirname(path)
  end
  local dirs = { start }
  for dir in vim.fs.parents(start) do
    dirs[#dirs + 1] = dir
  end
  for _, dir in ipairs(dirs) do
    local parent = vim.fs.dirname(dir)
    if vim.fs.basename(dir):match(EPISODE) and parent ~= dir then
      return parent
    end
    if vim.fn.isdirectory(dir) == 1 and M.is_run(dir) then
      return dir
    end
  end
  return nil
end

return M
