--- The few places where Neovim's LSP client differs between 0.7 (Debian's) and 0.10+.
---
--- Everything version-dependent lives here, so the other modules read the same on every
--- release: client methods became `client:method()` in 0.11, `vim.lsp.start` arrived in 0.8
--- (and could start a client without attaching a buffer only from 0.11), inlay hints in 0.10.
local M = {}

local function has(feature)
  return vim.fn.has(feature) == 1
end

M.method_calls = has("nvim-0.11")
M.inlay_hints = has("nvim-0.10") and vim.lsp.inlay_hint ~= nil
M.autocmd_data = has("nvim-0.8")
-- From 0.10 an attached buffer gets 'omnifunc' = vim.lsp.omnifunc and K = hover by itself.
M.sets_lsp_defaults = has("nvim-0.10")
M.refreshes_code_lens_everywhere = has("nvim-0.10")

--- Send a request through a client: `handler(err, result, ctx)`; returns (ok, request_id).
function M.request(client, method, params, handler, bufnr)
  if M.method_calls then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

function M.is_stopped(client)
  if M.method_calls then
    return client:is_stopped()
  end
  return client.is_stopped()
end

--- Where Neovim's LSP log is (the engine's standard error goes there).
function M.log_path()
  if vim.lsp.log and vim.lsp.log.get_filename then
    return vim.lsp.log.get_filename()
  end
  return vim.lsp.get_log_path()
end

--- Every running client named `name`.
function M.clients(name)
  local all = vim.lsp.get_clients and vim.lsp.get_clients({ name = name })
    or vim.lsp.get_active_clients()
  local found = {}
  for _, client in pairs(all) do
    if client.name == name then
      table.insert(found, client)
    end
  end
  return found
end

--- Start a client, or reuse the running one `reuse(client)` accepts (`known_id`, if the
--- caller already knows it), and attach `bufnr` to it.
function M.start_attached(config, bufnr, reuse, known_id)
  if known_id then
    vim.lsp.buf_attach_client(bufnr, known_id)
    return known_id
  end
  if vim.lsp.start then
    return vim.lsp.start(config, {
      bufnr = bufnr,
      reuse_client = function(client, _)
        return reuse(client)
      end,
    })
  end
  local client_id = vim.lsp.start_client(config)
  if client_id then
    vim.lsp.buf_attach_client(bufnr, client_id)
  end
  return client_id
end

--- Start a client attached to no buffer (for commands run where no file is open).
function M.start_detached(config)
  if M.method_calls then
    return vim.lsp.start(config, { attach = false })
  end
  return vim.lsp.start_client(config)
end

--- Ask the engine again for a buffer's code lenses and show them.
---
--- Before 0.10 `vim.lsp.codelens.refresh()` only knows the current buffer and never clears
--- lenses that went away (its display returns early on an empty list), so ask ourselves.
function M.refresh_code_lens(client, bufnr)
  if M.refreshes_code_lens_everywhere then
    vim.lsp.codelens.refresh({ bufnr = bufnr })
    return
  end
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) } }
  M.request(client, "textDocument/codeLens", params, function(err, result, ctx)
    if not err and (result == nil or vim.tbl_isempty(result)) then
      local namespace = vim.api.nvim_create_namespace("vim_lsp_codelens:" .. client.id)
      if vim.api.nvim_buf_is_valid(bufnr) then
        vim.api.nvim_buf_clear_namespace(bufnr, namespace, 0, -1)
      end
    end
    ctx.bufnr = ctx.bufnr or bufnr
    vim.lsp.codelens.on_codelens(err, result or {}, ctx)
  end, bufnr)
end

function M.enable_inlay_hints(bufnr)
  if M.inlay_hints then
    pcall(vim.lsp.inlay_hint.enable, true, { bufnr = bufnr })
  end
end

--- Fire `User PATTERN`, handing `data` to Lua callbacks where Neovim can (0.8+).
function M.fire_user_event(pattern, data)
  local options = { pattern = pattern, modeline = false }
  if M.autocmd_data then
    options.data = data
  end
  vim.api.nvim_exec_autocmds("User", options)
end

return M
