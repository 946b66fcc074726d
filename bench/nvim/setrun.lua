-- bench/nvim: the run folder of a query set (bench/serve's `-mode queries` JSON),
-- printed for bench/nvim.sh; decoded as JSON, since Go's encoder escapes & < > and \
-- in a path and a grep of the text would print them escaped.
--
--   nvim -l bench/nvim/setrun.lua SET.json
local f = assert(io.open(assert(arg[1], 'usage: nvim -l setrun.lua SET.json'), 'r'))
local set = vim.json.decode(f:read('*a'))
f:close()
if type(set) ~= 'table' or type(set.run) ~= 'string' or set.run == '' then
  error('no run in ' .. arg[1], 0)
end
io.stdout:write(set.run, '\n')
