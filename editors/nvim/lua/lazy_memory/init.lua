--- lazy-memory for Neovim: the project's memory records in the editor, served by `lazy engine`.
---
--- `require("lazy_memory").setup{}` starts one engine per project root with Neovim's own LSP
--- client and attaches it to buffers as they open (hover, completion after `memory:` and `[[`,
--- diagnostics, code lenses or inlay hints); it adds :LazyMemoryList, :LazyMemoryShow and
--- :LazyMemorySearch, and the read-only `lazy-memory:NAME` buffers they open.
local compat = require("lazy_memory.compat")
local engine = require("lazy_memory.engine")
local views = require("lazy_memory.views")

local M = {}

M.defaults = {
  -- The engine's command line (stdio).
  cmd = { "lazy", "engine" },
  -- LAZY_DATA for the engine; nil: the engine's own default (`<project root>/.lazy/`).
  data_dir = nil,
  -- More environment for the engine, e.g. { LAZY_STORAGE = "postgres", LAZY_PG_DSN = "..." }.
  env = nil,
  -- Filetypes to attach to; nil: every buffer that shows a file.
  filetypes = nil,
  -- What marks a project root (one engine each): the nearest ancestor holding one of these.
  root_markers = { "lazy.toml", ".git" },
  -- Show each reference's description inline: inlay hints (0.10+), else code lenses.
  inlay_hints = true,
  code_lens = true,
  -- Before 0.10 (which does both itself): K = hover unless the buffer maps K, and
  -- 'omnifunc' = vim.lsp.omnifunc (<C-x><C-o> completes record names).
  keymaps = true,
  -- Called as on_attach(client, bufnr) after the plugin's own set-up of a buffer.
  on_attach = nil,
  -- How long commands that must wait (:LazyMemoryShow, name completion) wait, in ms.
  timeout_ms = 10000,
}

M.options = nil
--- The last `lazy/memory/changed` notification: `{name, revision, operation}`.
M.last_change = nil

local OPTION_TYPES = {
  cmd = "table",
  data_dir = "string",
  env = "table",
  filetypes = "table",
  root_markers = "table",
  inlay_hints = "boolean",
  code_lens = "boolean",
  keymaps = "boolean",
  on_attach = "function",
  timeout_ms = "number",
}

local GROUP = "lazy_memory"
-- Not cleared by setup: a buffer's lens autocommands live as long as its attachment.
local LENS_GROUP = vim.api.nvim_create_augroup("lazy_memory_lenses", { clear = false })
local names_by_root = {}
local pending_root = nil

local function is_url(buffer_name)
  return buffer_name:match("^%a[%w+.-]*://") ~= nil
end

local function is_record_buffer(bufnr)
  return vim.b[bufnr].lazy_memory_name ~= nil
    or views.name_from_buffer_name(vim.api.nvim_buf_get_name(bufnr)) ~= nil
end

--- Whether `bufnr` is a file buffer the engine should see.
local function attachable(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or not vim.api.nvim_buf_is_loaded(bufnr) then
    return false
  end
  local buffer_name = vim.api.nvim_buf_get_name(bufnr)
  if vim.bo[bufnr].buftype ~= "" or buffer_name == "" or is_url(buffer_name) then
    return false
  end
  if is_record_buffer(bufnr) then
    return false
  end
  local filetypes = M.options.filetypes
  return filetypes == nil or vim.tbl_contains(filetypes, vim.bo[bufnr].filetype)
end

--- The project root whose engine serves `bufnr` (default: the current buffer).
function M.root(bufnr)
  if bufnr == nil or bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  local remembered = vim.b[bufnr].lazy_memory_root
  if remembered then
    return remembered
  end
  local buffer_name = vim.api.nvim_buf_get_name(bufnr)
  if vim.bo[bufnr].buftype == "" and buffer_name ~= "" and not is_url(buffer_name) then
    if not is_record_buffer(bufnr) then
      return engine.find_root(buffer_name) or engine.default_root()
    end
  end
  return engine.default_root()
end

--- Attach `bufnr` (default: current) to its project's engine, if it shows a file.
function M.attach(bufnr)
  if bufnr == nil or bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  if not attachable(bufnr) then
    return nil
  end
  local root = M.root(bufnr)
  vim.b[bufnr].lazy_memory_root = root
  return engine.attach(bufnr, root)
end

--- The engine's client for the current buffer's project (started if need be), or nil.
function M.client(bufnr)
  return engine.client(M.root(bufnr))
end

--- Send any engine request for the current project: `callback(err, result)`.
--- Errors are shown with vim.notify (their message and type) unless `quiet`.
function M.request(method, params, callback, quiet)
  engine.request(M.root(), method, params, callback, quiet)
end

--- Run one of the engine's commands (lazy-memory.save, .rm, .compact, .doctor).
function M.execute(command, arguments, callback, quiet)
  local params = { command = command, arguments = arguments or {} }
  engine.request(M.root(), "workspace/executeCommand", params, callback, quiet)
end

local function code_lens_offered(client)
  return M.options.code_lens and client.server_capabilities ~= nil
    and client.server_capabilities.codeLensProvider ~= nil
    and client.server_capabilities.codeLensProvider ~= false
end

local function refresh_code_lenses(client, buffers)
  if not code_lens_offered(client) then
    return
  end
  for _, bufnr in ipairs(buffers) do
    compat.refresh_code_lens(client, bufnr)
  end
end

local function set_up_buffer(client, bufnr)
  if code_lens_offered(client) and not vim.b[bufnr].lazy_memory_lenses then
    vim.b[bufnr].lazy_memory_lenses = true
    vim.api.nvim_create_autocmd({ "BufEnter", "InsertLeave", "CursorHold", "BufWritePost" }, {
      group = LENS_GROUP,
      buffer = bufnr,
      desc = "lazy-memory: refresh the code lenses",
      callback = function()
        local current = vim.lsp.get_client_by_id(client.id)
        if current and not compat.is_stopped(current) then
          refresh_code_lenses(current, { bufnr })
        end
      end,
    })
  end
  refresh_code_lenses(client, { bufnr })
  local provider = client.server_capabilities and client.server_capabilities.inlayHintProvider
  if M.options.inlay_hints and provider then
    compat.enable_inlay_hints(bufnr)
  end
  if M.options.keymaps and not compat.sets_lsp_defaults then
    -- A filetype's own 'omnifunc' (markdown's is HTML tags) cannot complete record names.
    vim.bo[bufnr].omnifunc = "v:lua.vim.lsp.omnifunc"
    local mapped = vim.fn.maparg("K", "n", false, true)
    if not (type(mapped) == "table" and mapped.buffer == 1) then
      vim.api.nvim_buf_set_keymap(bufnr, "n", "K", "<Cmd>lua vim.lsp.buf.hover()<CR>", {
        noremap = true,
        silent = true,
      })
    end
  end
  if M.options.on_attach then
    M.options.on_attach(client, bufnr)
  end
end

local function record_buffers(name)
  local found = {}
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.b[bufnr].lazy_memory_name == name then
      table.insert(found, bufnr)
    end
  end
  return found
end

local function reload_record_buffers(root, change)
  for _, bufnr in ipairs(record_buffers(change.name)) do
    if (vim.b[bufnr].lazy_memory_root or root) == root then
      local params = { uri = views.uri(change.name) }
      engine.request(root, "lazy/memory/document", params, function(err, result)
        if not vim.api.nvim_buf_is_valid(bufnr) then
          return
        end
        if err then
          vim.notify(
            ("lazy-memory: %s is no longer readable: %s"):format(
              change.name,
              engine.describe(err)
            ),
            vim.log.levels.WARN
          )
          return
        end
        views.refill_document(bufnr, result.text)
      end, true)
    end
  end
end

local function on_changed(client_id, change)
  vim.schedule(function()
    local client = vim.lsp.get_client_by_id(client_id)
    local root = client and client.config.root_dir
    if root then
      names_by_root[root] = nil
      refresh_code_lenses(client, engine.buffers(client_id))
      if type(change) == "table" and type(change.name) == "string" then
        reload_record_buffers(root, change)
      end
    end
    M.last_change = change
    compat.fire_user_event("LazyMemoryChanged", change)
  end)
end

local function on_code_lens_refresh(client_id, _)
  vim.schedule(function()
    local client = vim.lsp.get_client_by_id(client_id)
    if client then
      refresh_code_lenses(client, engine.buffers(client_id))
    end
  end)
  return vim.NIL
end

--- The names of the live records (for completion), from the engine's index.
function M.record_names(root)
  root = root or M.root()
  if names_by_root[root] then
    return names_by_root[root]
  end
  local err, result = engine.request_sync(root, "lazy/memory/recall", vim.empty_dict(), true)
  local records = not err and views.index_of(result)
  if not records then
    return {} -- not kept: the store may be readable at the next try
  end
  local names = {}
  for _, record in ipairs(records) do
    table.insert(names, record.name)
  end
  names_by_root[root] = names
  return names
end

--- The record name under the cursor: `memory:NAME`, `[[NAME]]`, an index line, or the word.
function M.name_under_cursor()
  local line = vim.api.nvim_get_current_line()
  if vim.b.lazy_memory_index then
    return line:match("^(%S+) %(")
  end
  local column = vim.api.nvim_win_get_cursor(0)[2] + 1
  for start, name, finish in line:gmatch("()memory:([%w._-]+)()") do
    if column >= start and column < finish then
      return name
    end
  end
  for start, name, finish in line:gmatch("()%[%[([^%]]+)%]%]()") do
    if column >= start and column < finish then
      return name
    end
  end
  local start = column
  while start > 1 and line:sub(start - 1, start - 1):match("[%w._-]") do
    start = start - 1
  end
  local word = line:sub(start):match("^[%w._-]+")
  if word and word:match("%w") then
    return word
  end
  return nil
end

--- :LazyMemoryList: the index, one `name (type): description` line per record.
function M.list()
  local root = M.root()
  engine.request(root, "lazy/memory/recall", vim.empty_dict(), function(err, result)
    if err then
      return
    end
    local records, marker = views.index_of(result)
    local names = {}
    for _, record in ipairs(records or {}) do
      table.insert(names, record.name)
    end
    names_by_root[root] = records and names or nil
    views.show_index(records, root, marker)
  end)
end

--- :LazyMemoryShow [NAME]: open the read-only `lazy-memory:NAME` buffer.
function M.show(name, modifiers)
  if name == nil or name == "" then
    name = M.name_under_cursor()
    if name == nil then
      vim.notify("lazy-memory: no record name under the cursor", vim.log.levels.WARN)
      return
    end
  end
  pending_root = M.root()
  local ok, problem = pcall(views.open_document, name, modifiers)
  pending_root = nil
  if not ok then
    vim.notify("lazy-memory: " .. tostring(problem), vim.log.levels.ERROR)
  end
end

function M.show_under_cursor()
  M.show(nil, nil)
end

--- :LazyMemorySearch QUERY: the hits, best first, in the quickfix list.
function M.search(query)
  if query == nil or query:match("^%s*$") then
    vim.notify("lazy-memory: :LazyMemorySearch needs a query", vim.log.levels.WARN)
    return
  end
  engine.request(M.root(), "lazy/search", { query = query }, function(err, result)
    if err then
      return
    end
    local hits = result.hits or {}
    if #hits == 0 then
      vim.notify(("lazy-memory: no record matches %s"):format(query), vim.log.levels.INFO)
      return
    end
    views.show_hits(query, hits)
  end)
end

local function alternate_root()
  local alternate = vim.fn.bufnr("#")
  if alternate > 0 and vim.api.nvim_buf_is_valid(alternate) then
    return M.root(alternate)
  end
  return engine.default_root()
end

local function read_record_buffer(args)
  local bufnr = args.buf
  local name = views.name_from_buffer_name(args.match ~= "" and args.match or args.file)
  if name == nil then
    return
  end
  local root = pending_root or vim.b[bufnr].lazy_memory_root or alternate_root()
  vim.b[bufnr].lazy_memory_root = root
  local err, result = engine.request_sync(root, "lazy/memory/document", { uri = views.uri(name) })
  if err or type(result) ~= "table" then
    views.fill_document(bufnr, name, "")
    return
  end
  views.fill_document(bufnr, name, result.text)
end

local function complete_names(argument_lead)
  local matching = {}
  for _, name in ipairs(M.record_names()) do
    if name:sub(1, #argument_lead) == argument_lead then
      table.insert(matching, name)
    end
  end
  table.sort(matching)
  return matching
end

local function define_commands()
  vim.api.nvim_create_user_command("LazyMemoryList", function()
    M.list()
  end, { nargs = 0, desc = "lazy-memory: list the project's memory records" })
  vim.api.nvim_create_user_command("LazyMemoryShow", function(command)
    M.show(command.args, command.mods)
  end, {
    nargs = "?",
    complete = complete_names,
    desc = "lazy-memory: open a memory record (default: the one under the cursor)",
  })
  vim.api.nvim_create_user_command("LazyMemorySearch", function(command)
    M.search(command.args)
  end, { nargs = "+", desc = "lazy-memory: search the memory records into the quickfix list" })
end

local function define_autocmds()
  vim.api.nvim_create_augroup(GROUP, { clear = true })
  vim.api.nvim_create_autocmd("BufReadCmd", {
    group = GROUP,
    pattern = "lazy-memory:*",
    desc = "lazy-memory: read a memory record from the engine",
    callback = read_record_buffer,
  })
  local events = M.options.filetypes and { "FileType" } or { "BufReadPost", "BufNewFile" }
  vim.api.nvim_create_autocmd(events, {
    group = GROUP,
    pattern = M.options.filetypes or "*",
    desc = "lazy-memory: attach the engine",
    callback = function(args)
      M.attach(args.buf)
    end,
  })
end

--- Configure the plugin and attach the engine to every file buffer already open.
function M.setup(user_options)
  local options = vim.tbl_extend("force", {}, M.defaults, user_options or {})
  for key, expected in pairs(OPTION_TYPES) do
    local value = options[key]
    local optional = key ~= "cmd" and key ~= "root_markers" and key ~= "timeout_ms"
    if not (type(value) == expected or (optional and value == nil)) then
      error(("lazy_memory.setup: `%s` should be a %s, not %s"):format(key, expected, type(value)), 2)
    end
  end
  if options.actor ~= nil then
    vim.notify(
      "lazy-memory: the `actor` option is gone: your saves are yours (human:<user>), as from the CLI",
      vim.log.levels.WARN
    )
  end
  M.options = options
  engine.configure(vim.tbl_extend("force", options, { attached = set_up_buffer }))
  engine.on("lazy/memory/changed", on_changed)
  if vim.lsp.handlers["workspace/codeLens/refresh"] == nil then
    engine.on("workspace/codeLens/refresh", on_code_lens_refresh)
  end
  define_autocmds()
  define_commands()
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    M.attach(bufnr)
  end
end

return M
