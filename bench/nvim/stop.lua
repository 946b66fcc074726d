-- bench/nvim: what bench/nvim.sh's Neovim runs when bench/nvim/latency.lua failed,
-- before `cquit! 2`: the server stopped, so that none is left running (reparented
-- to pid 1) after Neovim exits. A server that hangs before answering initialize is
-- an uninitialized client, which vim.lsp.get_clients() leaves out unless asked
-- (`_uninitialized`, Neovim 0.12; 0.11 lists every client), so Neovim's own
-- children (the servers it started) are also sent SIGTERM, then SIGKILL.
for _, c in ipairs(vim.lsp.get_clients({ _uninitialized = true })) do
  c:stop(true)
end
local function children()
  return vim.api.nvim_get_proc_children(vim.fn.getpid())
end
for _, sig in ipairs({ 'sigterm', 'sigkill' }) do
  if vim.wait(2000, function() return #children() == 0 end, 20) then
    break
  end
  for _, pid in ipairs(children()) do
    vim.uv.kill(pid, sig)
  end
end
