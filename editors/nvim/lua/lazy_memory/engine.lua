--- The `lazy engine` processes: one Neovim LSP client per project root, and requests to them.
local compat = require("lazy_memory.compat")

local M = {}

M.NAME = "lazy-memory"

local options = nil
local ready = {} -- client id -> true once initialize has been answered
local waiting = {} -- client id -> callbacks to run once it is ready (or has exited)
local exit_errors = {} -- client id -> the error to answer once the engine has exited
local handlers = {} -- method -> function(client_id, params): filled by init.lua
local by_root = {} -- project root -> the id of the client started for it

--- Use these options for every client started from now on.
function M.configure(new_options)
  options = new_options
end

--- Call `handler(client_id, params)` for the notification or server request `method`.
function M.on(method, handler)
  handlers[method] = handler
end

local function is_directory(path)
  local stat = vim.loop.fs_stat(path)
  return stat ~= nil and stat.type == "directory"
end

local function without_trailing_slash(path)
  if #path > 1 then
    return (path:gsub("/+$", ""))
  end
  return path
end

--- The nearest ancestor of `path` holding one of the root markers (lazy.toml, .git), or nil.
function M.find_root(path)
  local directory = vim.fn.fnamemodify(path, ":p")
  if not is_directory(directory) then
    directory = vim.fn.fnamemodify(directory, ":h")
  end
  directory = without_trailing_slash(directory)
  while directory ~= nil and directory ~= "" do
    for _, marker in ipairs(options.root_markers) do
      if vim.loop.fs_stat(directory .. "/" .. marker) then
        return directory
      end
    end
    local parent = vim.fn.fnamemodify(directory, ":h")
    if parent == directory then
      return nil
    end
    directory = parent
  end
  return nil
end

--- The project root for commands run outside any file: that of the working directory.
function M.default_root()
  local cwd = vim.loop.cwd()
  return M.find_root(cwd) or without_trailing_slash(cwd)
end

local function environment()
  local env = {}
  for key, value in pairs(options.env or {}) do
    env[key] = value
  end
  if options.data_dir then
    env.LAZY_DATA = vim.fn.fnamemodify(vim.fn.expand(options.data_dir), ":p")
  end
  -- The engine then writes as the person at this editor (human:<user>), as the CLI does.
  env.LAZY_EDITOR = "nvim"
  return env
end

local function capabilities()
  local wanted = vim.lsp.protocol.make_client_capabilities()
  wanted.workspace = wanted.workspace or {}
  wanted.textDocument = wanted.textDocument or {}
  -- 0.7 shows code lenses but does not say so; the engine offers them to clients
  -- without inlay hints, and asks them to refresh after a change (see init.lua).
  wanted.textDocument.codeLens = wanted.textDocument.codeLens or { dynamicRegistration = false }
  wanted.workspace.codeLens = wanted.workspace.codeLens or {}
  wanted.workspace.codeLens.refreshSupport = true
  return wanted
end

local function run_waiting(client_id, err)
  local callbacks = waiting[client_id] or {}
  waiting[client_id] = nil
  for _, callback in ipairs(callbacks) do
    callback(err)
  end
end

local function client_handlers()
  local table_of_handlers = {}
  for method, handler in pairs(handlers) do
    table_of_handlers[method] = function(_, params, ctx)
      return handler(ctx.client_id, params)
    end
  end
  return table_of_handlers
end

local function client_config(root)
  return {
    name = M.NAME,
    cmd = options.cmd,
    cmd_cwd = root,
    cmd_env = environment(),
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    capabilities = capabilities(),
    handlers = client_handlers(),
    flags = { debounce_text_changes = 150 },
    on_init = function(client)
      ready[client.id] = true
      run_waiting(client.id, nil)
    end,
    on_attach = function(client, bufnr)
      if options.attached then
        options.attached(client, bufnr)
      end
    end,
    on_exit = function(code, signal, client_id)
      ready[client_id] = nil
      if by_root[root] == client_id then
        by_root[root] = nil
      end
      local message = ("the engine (%s) exited with status %s%s; the log is %s"):format(
        table.concat(options.cmd, " "),
        tostring(code),
        (signal and signal ~= 0) and (", signal " .. signal) or "",
        compat.log_path()
      )
      exit_errors[client_id] = { code = -32099, message = message }
      vim.schedule(function()
        -- Requests still waiting for the engine report its exit; say it once otherwise.
        local reported = waiting[client_id] ~= nil and #waiting[client_id] > 0
        run_waiting(client_id, exit_errors[client_id])
        if code ~= 0 and not reported then
          vim.notify("lazy-memory: " .. message, vim.log.levels.ERROR)
        end
      end)
    end,
  }
end

local function serves(client, root)
  return client.name == M.NAME
    and not compat.is_stopped(client)
    and without_trailing_slash(client.config.root_dir or "") == root
end

local function start_failed(problem)
  vim.notify(
    ("lazy-memory: could not start %s (%s); set `cmd` in require('lazy_memory').setup{}"):format(
      table.concat(options.cmd, " "),
      tostring(problem)
    ),
    vim.log.levels.ERROR
  )
end

--- The running client for `root` (initialized or still starting), or nil.
---
--- Clients are remembered by root as they start: before 0.8 the list of clients
--- (vim.lsp.get_active_clients) holds only those that finished initializing.
function M.running(root)
  local client_id = by_root[root]
  local client = client_id and vim.lsp.get_client_by_id(client_id)
  if client and serves(client, root) then
    return client
  end
  by_root[root] = nil
  for _, candidate in ipairs(compat.clients(M.NAME)) do
    if serves(candidate, root) then
      by_root[root] = candidate.id
      return candidate
    end
  end
  return nil
end

--- Attach `bufnr` to its root's client, starting the engine for that root if none runs.
function M.attach(bufnr, root)
  local known = M.running(root)
  local ok, client_id = pcall(compat.start_attached, client_config(root), bufnr, function(client)
    return (known ~= nil and client.id == known.id) or serves(client, root)
  end, known and known.id)
  if not ok or client_id == nil then
    start_failed(client_id or "no client")
    return nil
  end
  by_root[root] = client_id
  return client_id
end

--- The client for `root`, started (attached to no buffer) if none runs; nil if it cannot start.
function M.client(root)
  local client = M.running(root)
  if client then
    return client
  end
  local ok, client_id = pcall(compat.start_detached, client_config(root))
  if not ok or client_id == nil then
    start_failed(client_id or "no client")
    return nil
  end
  by_root[root] = client_id
  return vim.lsp.get_client_by_id(client_id)
end

--- Run `callback(err)` once the client has been initialized (at once if it already is).
local function when_ready(client, callback)
  if ready[client.id] or client.initialized then
    callback(nil)
  elseif exit_errors[client.id] then
    callback(exit_errors[client.id])
  else
    waiting[client.id] = waiting[client.id] or {}
    table.insert(waiting[client.id], callback)
  end
end

--- Describe an engine error in one line: its message and the error's type.
function M.describe(err)
  if type(err) ~= "table" then
    return tostring(err)
  end
  local kind = type(err.data) == "table" and err.data.type or nil
  local message = err.message or vim.inspect(err)
  if kind and kind ~= vim.NIL then
    return ("%s (%s)"):format(message, kind)
  end
  return message
end

function M.notify_error(err)
  vim.notify("lazy-memory: " .. M.describe(err), vim.log.levels.ERROR)
end

--- Send `method` to `root`'s engine; `callback(err, result)`. Errors are also notified,
--- unless `quiet`.
function M.request(root, method, params, callback, quiet)
  callback = callback or function() end
  local function answer(err, result)
    if err and not quiet then
      M.notify_error(err)
    end
    callback(err, result)
  end
  local client = M.client(root)
  if not client then
    -- M.client has said why the engine could not start.
    callback({ code = -32099, message = "the engine is not running" }, nil)
    return
  end
  when_ready(client, function(err)
    if err then
      answer(err, nil)
      return
    end
    local sent = compat.request(client, method, params, function(request_err, result)
      answer(request_err, result)
    end)
    if not sent then
      answer({ code = -32099, message = "the engine has stopped" }, nil)
    end
  end)
end

--- Like request, but wait (up to the configured timeout) and return `err, result`.
function M.request_sync(root, method, params, quiet)
  local done, answer_err, answer_result = false, nil, nil
  M.request(root, method, params, function(err, result)
    done, answer_err, answer_result = true, err, result
  end, quiet)
  local finished = vim.wait(options.timeout_ms, function()
    return done
  end, 10)
  if not finished then
    local err = {
      code = -32099,
      message = ("%s got no answer within %d ms"):format(method, options.timeout_ms),
    }
    if not quiet then
      M.notify_error(err)
    end
    return err, nil
  end
  return answer_err, answer_result
end

--- Every buffer attached to `client_id`.
function M.buffers(client_id)
  local found = {}
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.lsp.buf_is_attached(bufnr, client_id) then
      table.insert(found, bufnr)
    end
  end
  return found
end

return M
