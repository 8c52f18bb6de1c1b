--- What the user sees: the index buffer, the read-only record documents, the search list.
local M = {}

M.SCHEME = "lazy-memory:"
M.INDEX_NAME = "lazy-memory index"
--- What the index shows when the engine's answer holds neither records nor its marker.
M.NO_INDEX_MARKER = "MEMORY INDEX UNAVAILABLE (the engine's answer holds no index)"

--- Whitespace runs as one space, so a description stays on its one line.
function M.one_line(text)
  if type(text) ~= "string" then
    return ""
  end
  return (text:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", ""))
end

--- `name (type): description`, the index line every lazy-memory client shows.
function M.index_line(record)
  return ("%s (%s): %s"):format(record.name, record.type, M.one_line(record.description))
end

--- The record name a `lazy-memory:NAME` buffer (or URI) shows, or nil.
---
--- Neovim makes buffer names absolute (`/project/lazy-memory:NAME`), so take what follows
--- the last `lazy-memory:`; `lazy-memory://NAME` is accepted too.
function M.name_from_buffer_name(buffer_name)
  local name = buffer_name:match(".*lazy%-memory:(.*)$")
  if name == nil then
    return nil
  end
  name = name:gsub("^//", "")
  if name == "" then
    return nil
  end
  return name
end

function M.uri(name)
  return M.SCHEME .. name
end

local function set_lines(bufnr, lines)
  local modifiable, readonly = vim.bo[bufnr].modifiable, vim.bo[bufnr].readonly
  vim.bo[bufnr].modifiable = true
  vim.bo[bufnr].readonly = false
  -- setbufline replaces lines in place: a quickfix entry's mark on line 1 survives the
  -- first fill (nvim_buf_set_lines on the empty buffer would report "line deleted").
  vim.fn.setbufline(bufnr, 1, lines)
  if vim.api.nvim_buf_line_count(bufnr) > #lines then
    vim.api.nvim_buf_set_lines(bufnr, #lines, -1, false, {})
  end
  vim.bo[bufnr].modifiable = modifiable
  vim.bo[bufnr].readonly = readonly
  vim.bo[bufnr].modified = false
end

local function make_scratch(bufnr)
  vim.bo[bufnr].buftype = "nofile"
  vim.bo[bufnr].swapfile = false
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].readonly = true
end

--- Lines of a document text (split on newlines; a trailing newline adds no empty line).
function M.text_lines(text)
  local normalized = (text or ""):gsub("\r\n", "\n")
  local lines = vim.split(normalized, "\n", { plain = true })
  if #lines > 1 and lines[#lines] == "" then
    table.remove(lines)
  end
  return lines
end

--- Fill a `lazy-memory:NAME` buffer with the record's document, read-only, as markdown.
function M.fill_document(bufnr, name, text)
  make_scratch(bufnr)
  vim.bo[bufnr].bufhidden = "hide"
  vim.b[bufnr].lazy_memory_name = name
  set_lines(bufnr, M.text_lines(text))
  if vim.bo[bufnr].filetype ~= "markdown" then
    vim.bo[bufnr].filetype = "markdown"
  end
end

--- Replace a shown document's text, keeping the cursor where it can stay.
function M.refill_document(bufnr, text)
  local windows = vim.fn.win_findbuf(bufnr)
  local cursors = {}
  for _, window in ipairs(windows) do
    cursors[window] = vim.api.nvim_win_get_cursor(window)
  end
  set_lines(bufnr, M.text_lines(text))
  local count = vim.api.nvim_buf_line_count(bufnr)
  for window, cursor in pairs(cursors) do
    pcall(vim.api.nvim_win_set_cursor, window, { math.min(cursor[1], count), cursor[2] })
  end
end

--- Open `lazy-memory:NAME` (its BufReadCmd fills it); `modifiers` like `vertical` split.
function M.open_document(name, modifiers)
  local target = vim.fn.fnameescape(M.uri(name))
  local current = vim.api.nvim_get_current_buf()
  if modifiers and modifiers ~= "" then
    vim.cmd(modifiers .. " split " .. target)
  elseif vim.bo[current].modified and not vim.o.hidden then
    vim.cmd("split " .. target)
  else
    vim.cmd("edit " .. target)
  end
end

local function index_buffer()
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.b[bufnr].lazy_memory_index then
      return bufnr
    end
  end
  local bufnr = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(bufnr, M.INDEX_NAME)
  vim.b[bufnr].lazy_memory_index = true
  make_scratch(bufnr)
  vim.bo[bufnr].bufhidden = "hide"
  vim.bo[bufnr].filetype = "lazymemory"
  local function map(lhs, rhs)
    vim.api.nvim_buf_set_keymap(bufnr, "n", lhs, rhs, { noremap = true, silent = true })
  end
  map("<CR>", "<Cmd>lua require('lazy_memory').show_under_cursor()<CR>")
  map("q", "<Cmd>close<CR>")
  return bufnr
end

local function show_in_split(bufnr, height)
  local windows = vim.fn.win_findbuf(bufnr)
  if #windows > 0 then
    vim.api.nvim_set_current_win(windows[1])
    return
  end
  vim.cmd(("botright %dsplit"):format(height))
  vim.api.nvim_win_set_buf(0, bufnr)
end

--- The records of a `lazy/memory/recall {}` answer, or nil and the marker of a store that
--- cannot be read (the engine answers `records` null and the marker as `unavailable`): an
--- unreadable store never shows as an empty one.
function M.index_of(result)
  if type(result) == "table" and type(result.records) == "table" then
    return result.records, nil
  end
  local marker = type(result) == "table" and result.unavailable or nil
  if type(marker) ~= "string" or marker:match("^%s*$") then
    marker = M.NO_INDEX_MARKER
  end
  return nil, marker
end

--- Show the index in the `lazy-memory index` buffer: the records' lines, or the marker's.
function M.show_index(records, root, marker)
  local lines = {}
  for _, record in ipairs(records or {}) do
    table.insert(lines, M.index_line(record))
  end
  local bufnr = index_buffer()
  vim.b[bufnr].lazy_memory_root = root
  if marker then
    lines = M.text_lines(marker)
  elseif #lines == 0 then
    lines = { "-- no memory records have been saved for this project yet" }
  end
  set_lines(bufnr, lines)
  show_in_split(bufnr, math.max(3, math.min(#lines, 15)))
  return bufnr
end

--- Put search hits in the quickfix list (one entry per record, opening `lazy-memory:NAME`).
function M.show_hits(query, hits)
  local items = {}
  for _, hit in ipairs(hits) do
    local text = M.index_line(hit)
    local snippet = M.one_line(hit.snippet)
    if snippet ~= "" then
      text = text .. " | " .. snippet
    end
    table.insert(items, { filename = M.uri(hit.name), lnum = 1, col = 1, text = text })
  end
  vim.fn.setqflist({}, " ", { title = "lazy-memory search: " .. query, items = items })
  vim.cmd("botright copen")
end

return M
