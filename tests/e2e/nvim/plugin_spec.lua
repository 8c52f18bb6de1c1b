-- Drives the lazy-memory Neovim plugin against a real `lazy engine`, as a user would, and
-- writes what it saw as JSON for tests/e2e/test_neovim.py to assert on.
--
-- Run as `nvim --headless --clean -u NONE -c "luafile plugin_spec.lua"` with
-- LAZY_NVIM_SPEC naming a JSON file: {plugin_dir, cmd, data_dir, project, notes, output,
-- scenario ("builder", "agent" or "unreadable"), timeout_ms}. Each step's observations land
-- under its name; a step that raised has {error = message} instead, and the others still run.

local spec = vim.fn.json_decode(vim.fn.readfile(os.getenv("LAZY_NVIM_SPEC")))
vim.opt.runtimepath:prepend(spec.plugin_dir)
vim.o.hidden = true

local TIMEOUT = spec.timeout_ms
local observations = { nvim_version = { vim.version().major, vim.version().minor } }
local notifications = {}
local changes = {}

-- What the plugin tells the user, kept for the assertions (and still shown on stderr).
vim.notify = function(message, level)
  table.insert(notifications, { message = message, level = level or vim.log.levels.INFO })
end

local function all_clients(filter)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients(filter)
  end
  return vim.lsp.get_active_clients(filter)
end

local function wait_for(condition, timeout)
  return vim.wait(timeout or TIMEOUT, condition, 20)
end

local function step(name, body)
  local ok, result = pcall(body)
  if ok then
    observations[name] = result == nil and vim.empty_dict() or result
  else
    observations[name] = { error = tostring(result) }
  end
end

local function notifications_since(count)
  local found = {}
  for index = count + 1, #notifications do
    table.insert(found, notifications[index])
  end
  return found
end

local function lines_of(bufnr)
  return vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
end

local function request(client, method, params, bufnr)
  local answer, reason
  if vim.fn.has("nvim-0.11") == 1 then
    answer, reason = client:request_sync(method, params, TIMEOUT, bufnr)
  else
    answer, reason = client.request_sync(method, params, TIMEOUT, bufnr)
  end
  if answer == nil then
    error(("%s: no answer (%s)"):format(method, tostring(reason)))
  end
  return answer
end

local function position(bufnr, line, pattern, offset)
  local text = vim.api.nvim_buf_get_lines(bufnr, line, line + 1, false)[1]
  local start = assert(text:find(pattern, 1, true), pattern .. " not on line " .. line)
  return {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = { line = line, character = start - 1 + (offset or 0) },
  }
end

local function line_holding(bufnr, pattern)
  for index, text in ipairs(lines_of(bufnr)) do
    if text:find(pattern, 1, true) then
      return index - 1
    end
  end
  error(pattern .. " is not in the buffer")
end

local function floating_windows()
  local found = {}
  for _, window in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(window).relative ~= "" then
      table.insert(found, window)
    end
  end
  return found
end

local function close_floating_windows()
  for _, window in ipairs(floating_windows()) do
    pcall(vim.api.nvim_win_close, window, true)
  end
end

local function diagnostics(bufnr)
  local found = {}
  for _, item in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(found, {
      line = item.lnum,
      col = item.col,
      message = item.message,
      severity = item.severity,
      source = item.source,
    })
  end
  return found
end

-- The descriptions shown inline: code lenses before 0.10 (as the plugin displays them, in
-- the code-lens namespace's virtual text), inlay hints from 0.10 on.
local function inline_texts(client, bufnr)
  local found = {}
  if vim.lsp.inlay_hint and vim.lsp.inlay_hint.is_enabled({ bufnr = bufnr }) then
    for _, item in ipairs(vim.lsp.inlay_hint.get({ bufnr = bufnr })) do
      local label = item.inlay_hint.label
      if type(label) == "table" then
        local parts = {}
        for _, part in ipairs(label) do
          table.insert(parts, part.value)
        end
        label = table.concat(parts)
      end
      table.insert(found, { kind = "inlay_hint", line = item.inlay_hint.position.line, text = label })
    end
    return found
  end
  local namespace = vim.api.nvim_create_namespace("vim_lsp_codelens:" .. client.id)
  local marks = vim.api.nvim_buf_get_extmarks(bufnr, namespace, 0, -1, { details = true })
  for _, mark in ipairs(marks) do
    local chunks = {}
    for _, chunk in ipairs(mark[4].virt_text or {}) do
      table.insert(chunks, chunk[1])
    end
    local text = table.concat(chunks)
    if text ~= "" then
      table.insert(found, { kind = "code_lens", line = mark[2], text = text })
    end
  end
  return found
end

local function find_text(items, needle)
  for _, item in ipairs(items) do
    if item.text:find(needle, 1, true) then
      return item
    end
  end
  return nil
end

local lazy_memory
local client
local notes

local function count_engines()
  local names = {}
  for _, candidate in ipairs(all_clients()) do
    table.insert(names, candidate.name)
  end
  return names
end

-- :LazyMemoryList, and the index buffer it opened.
local function list_index()
  vim.cmd("LazyMemoryList")
  local index
  wait_for(function()
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.b[bufnr].lazy_memory_index then
        index = bufnr
        return true
      end
    end
    return false
  end)
  assert(index, ":LazyMemoryList opened no index buffer")
  return index
end

-- The notes buffer attached to its engine: the client, and whether it attached in time.
local function attach_notes()
  notes = vim.api.nvim_get_current_buf()
  local started = vim.loop.hrtime()
  local attached = wait_for(function()
    local found = lazy_memory.client(notes)
    return found ~= nil and found.initialized and vim.lsp.buf_is_attached(notes, found.id)
  end, spec.start_timeout_ms)
  observations.start_ms = math.floor((vim.loop.hrtime() - started) / 1e6)
  client = lazy_memory.client(notes)
  return attached
end

local function builder_steps()
  step("attach", function()
    local attached = attach_notes()
    return {
      attached = attached,
      clients = count_engines(),
      root_dir = client and client.config.root_dir,
      buffer_root = vim.b[notes].lazy_memory_root,
      omnifunc = vim.bo[notes].omnifunc,
      hover_key = vim.fn.maparg("K", "n"),
    }
  end)
  assert(client, "no lazy-memory client: " .. vim.inspect(observations.attach))

  step("recall", function()
    local answer = request(client, "lazy/memory/recall", vim.empty_dict(), notes)
    local one = request(client, "lazy/memory/recall", { name = "deploy-steps" }, notes)
    return { index = answer.result, record = one.result, err = answer.err }
  end)

  step("hover", function()
    local params = position(notes, line_holding(notes, "memory:deploy-steps"), "deploy-steps", 2)
    local answer = request(client, "textDocument/hover", params, notes)
    vim.api.nvim_win_set_cursor(0, { params.position.line + 1, params.position.character })
    vim.lsp.buf.hover()
    wait_for(function()
      return #floating_windows() > 0
    end)
    local shown = {}
    for _, window in ipairs(floating_windows()) do
      vim.list_extend(shown, lines_of(vim.api.nvim_win_get_buf(window)))
    end
    close_floating_windows()
    local bare = position(notes, line_holding(notes, "plain style-guide"), "style-guide", 1)
    local bare_answer = request(client, "textDocument/hover", bare, notes)
    return { result = answer.result, err = answer.err, shown = shown, bare = bare_answer.result }
  end)

  step("completion", function()
    local line = line_holding(notes, "Complete here: memory:")
    local text = lines_of(notes)[line + 1]
    local params = {
      textDocument = { uri = vim.uri_from_bufnr(notes) },
      position = { line = line, character = #text },
      context = { triggerKind = 2, triggerCharacter = ":" },
    }
    local answer = request(client, "textDocument/completion", params, notes)
    local link_line = line_holding(notes, "Link: [[")
    local link_text = lines_of(notes)[link_line + 1]
    local link_params = {
      textDocument = { uri = vim.uri_from_bufnr(notes) },
      position = { line = link_line, character = #link_text },
      context = { triggerKind = 2, triggerCharacter = "[" },
    }
    local link_answer = request(client, "textDocument/completion", link_params, notes)
    local function items(result)
      if result == nil or result == vim.NIL then
        return {}
      end
      local found = {}
      for _, item in ipairs(result.items or result) do
        local documentation = item.documentation
        if type(documentation) == "table" then
          documentation = documentation.value
        end
        table.insert(found, {
          label = item.label,
          detail = item.detail,
          documentation = documentation,
          new_text = item.textEdit and item.textEdit.newText or item.insertText,
        })
      end
      return found
    end
    return {
      memory = items(answer.result),
      link = items(link_answer.result),
      trigger_characters = client.server_capabilities.completionProvider
        and client.server_capabilities.completionProvider.triggerCharacters,
    }
  end)

  step("diagnostics", function()
    wait_for(function()
      return #vim.diagnostic.get(notes) >= 2
    end)
    return diagnostics(notes)
  end)

  step("inline", function()
    wait_for(function()
      return find_text(inline_texts(client, notes), "How we deploy to staging") ~= nil
    end)
    return inline_texts(client, notes)
  end)

  step("list", function()
    local index = list_index()
    local result = {
      lines = lines_of(index),
      shown = #vim.fn.win_findbuf(index) > 0,
      modifiable = vim.bo[index].modifiable,
    }
    -- <CR> on a line opens that record.
    vim.api.nvim_set_current_win(vim.fn.win_findbuf(index)[1])
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    vim.cmd("execute \"normal \\<CR>\"")
    wait_for(function()
      return vim.b.lazy_memory_name ~= nil
    end)
    result.enter_opens = vim.b.lazy_memory_name
    result.enter_lines = lines_of(0)
    vim.cmd("only")
    vim.cmd("buffer " .. notes)
    return result
  end)

  step("show", function()
    local completed = vim.fn.getcompletion("LazyMemoryShow dep", "cmdline")
    vim.cmd("LazyMemoryShow deploy-steps")
    local bufnr = vim.api.nvim_get_current_buf()
    local result = {
      completion = completed,
      buffer_name = vim.api.nvim_buf_get_name(bufnr),
      lines = lines_of(bufnr),
      modifiable = vim.bo[bufnr].modifiable,
      readonly = vim.bo[bufnr].readonly,
      buftype = vim.bo[bufnr].buftype,
      filetype = vim.bo[bufnr].filetype,
      attached = vim.lsp.buf_is_attached(bufnr, client.id),
    }
    local before = #notifications
    vim.cmd("LazyMemoryShow no-such-record")
    result.unknown_notifications = notifications_since(before)
    result.unknown_lines = lines_of(0)
    vim.cmd("buffer " .. notes)
    -- No argument: the record under the cursor.
    local line = line_holding(notes, "[[style-guide]]")
    local column = lines_of(notes)[line + 1]:find("style-guide", 1, true)
    vim.api.nvim_win_set_cursor(0, { line + 1, column + 2 })
    vim.cmd("LazyMemoryShow")
    result.under_cursor = vim.b.lazy_memory_name
    result.under_cursor_lines = lines_of(0)
    vim.cmd("buffer " .. notes)
    return result
  end)

  step("search", function()
    vim.fn.setqflist({}, "r", { title = "", items = {} })
    vim.cmd("LazyMemorySearch release")
    wait_for(function()
      return #vim.fn.getqflist() > 0
    end)
    local items = {}
    for _, item in ipairs(vim.fn.getqflist()) do
      table.insert(items, { buffer_name = vim.fn.bufname(item.bufnr), text = item.text })
    end
    local result = { title = vim.fn.getqflist({ title = 1 }).title, items = items }
    vim.cmd("cclose")
    vim.cmd("cc 1")
    result.selected_name = vim.b.lazy_memory_name
    result.selected_lines = lines_of(0)
    vim.cmd("buffer " .. notes)
    local before = #notifications
    vim.cmd("LazyMemorySearch in:elsewhere deploy")
    wait_for(function()
      return #notifications > before
    end)
    result.bad_query_notifications = notifications_since(before)
    before = #notifications
    vim.cmd("LazyMemorySearch zebra")
    wait_for(function()
      return #notifications > before
    end)
    result.no_hit_notifications = notifications_since(before)
    return result
  end)

  step("symbols", function()
    local answer = request(client, "workspace/symbol", { query = "deploy" }, notes)
    local uris = {}
    for _, symbol in ipairs(answer.result or {}) do
      table.insert(uris, symbol.location.uri)
    end
    -- The engine's locations are lazy-memory: URIs; the plugin's buffers open them.
    vim.cmd("edit " .. vim.fn.fnameescape(vim.uri_to_fname(uris[1])))
    local result = { uris = uris, opened = vim.b.lazy_memory_name, lines = lines_of(0) }
    vim.cmd("buffer " .. notes)
    return result
  end)

  step("changed", function()
    local line = line_holding(notes, "memory:no-such-record")
    vim.cmd("LazyMemoryShow style-guide")
    local record_buffer = vim.api.nvim_get_current_buf()
    vim.cmd("buffer " .. notes)
    local answer
    lazy_memory.execute("lazy-memory.save", {
      {
        name = "no-such-record",
        type = "reference",
        description = "Saved from Neovim just now",
        body = "It exists after all.",
      },
    }, function(err, result)
      answer = { err = err, result = result }
    end)
    wait_for(function()
      return answer ~= nil
    end)
    local heard = wait_for(function()
      for _, change in ipairs(changes) do
        if change.name == "no-such-record" then
          return true
        end
      end
      return false
    end)
    local cleared = wait_for(function()
      for _, item in ipairs(diagnostics(notes)) do
        if item.line == line then
          return false
        end
      end
      return true
    end)
    local shown = wait_for(function()
      return find_text(inline_texts(client, notes), "Saved from Neovim just now") ~= nil
    end)
    -- Another process changes a record whose buffer is open: the buffer follows.
    vim.env.LAZY_DATA = spec.data_dir
    local saved = vim.fn.system({
      spec.python,
      "-m",
      "lazy_memory.rpc.cli",
      "memory",
      "save",
      "style-guide",
      "--body",
      "Rewritten by the CLI.",
    })
    local reloaded = wait_for(function()
      return vim.tbl_contains(lines_of(record_buffer), "Rewritten by the CLI.")
    end)
    return {
      answer = answer,
      heard = heard,
      changes = changes,
      diagnostic_cleared = cleared,
      diagnostics = diagnostics(notes),
      inline_shown = shown,
      inline = inline_texts(client, notes),
      cli_output = saved,
      record_buffer_reloaded = reloaded,
      record_buffer_lines = lines_of(record_buffer),
    }
  end)

  step("end", function()
    return { clients = count_engines() }
  end)
end

-- The first steps of the agent's and the unreadable store's: attach, then the raw index.
local function attach_and_recall()
  step("attach", function()
    return { attached = attach_notes() }
  end)
  assert(client, "no lazy-memory client: " .. vim.inspect(observations.attach))

  step("recall", function()
    return request(client, "lazy/memory/recall", vim.empty_dict(), notes)
  end)
end

local function agent_steps()
  attach_and_recall()

  step("save", function()
    local before = #notifications
    local answer
    lazy_memory.execute("lazy-memory.save", {
      { name = "agent-note", type = "project", description = "Written by an agent", body = "no" },
    }, function(err, result)
      answer = { err = err, result = result }
    end)
    wait_for(function()
      return answer ~= nil
    end)
    local raw = request(client, "workspace/executeCommand", {
      command = "lazy-memory.save",
      arguments = { { name = "agent-note", type = "project", description = "Raw", body = "no" } },
    }, notes)
    return { answer = answer, raw = raw, notifications = notifications_since(before) }
  end)
end

-- A store that cannot be read: the index shows the engine's marker, never "no records".
local function unreadable_steps()
  attach_and_recall()

  step("list", function()
    local index = list_index()
    return { lines = lines_of(index), shown = #vim.fn.win_findbuf(index) > 0 }
  end)

  step("names", function()
    return { names = lazy_memory.record_names() }
  end)
end

local function main()
  vim.api.nvim_create_autocmd("User", {
    pattern = "LazyMemoryChanged",
    callback = function()
      table.insert(changes, require("lazy_memory").last_change)
    end,
  })
  lazy_memory = require("lazy_memory")
  lazy_memory.setup({
    cmd = spec.cmd,
    data_dir = spec.data_dir,
    env = { LAZY_POLL_SECONDS = "0.3" },
    timeout_ms = TIMEOUT,
  })
  vim.cmd("cd " .. vim.fn.fnameescape(spec.project))
  vim.cmd("edit " .. vim.fn.fnameescape(spec.notes))
  if spec.scenario == "agent" then
    agent_steps()
  elseif spec.scenario == "unreadable" then
    unreadable_steps()
  else
    builder_steps()
  end
end

local function write_observations()
  observations.notifications = notifications
  observations.messages = vim.split(vim.fn.execute("messages"), "\n", { trimempty = true })
  vim.fn.writefile({ vim.fn.json_encode(observations) }, spec.output)
end

-- A step stuck somewhere (a prompt, a request never answered) still reports what it saw.
vim.defer_fn(function()
  observations.fatal = "the script did not finish in " .. spec.watchdog_ms .. " ms"
  write_observations()
  vim.cmd("cquit! 2")
end, spec.watchdog_ms)

local ok, problem = pcall(main)
if not ok then
  observations.fatal = tostring(problem)
end
write_observations()
for _, running in ipairs(all_clients()) do
  if vim.fn.has("nvim-0.11") == 1 then
    running:stop()
  else
    running.stop()
  end
end
vim.wait(3000, function()
  return #all_clients() == 0
end, 20)
vim.cmd(ok and "qall!" or "cquit! 1")
