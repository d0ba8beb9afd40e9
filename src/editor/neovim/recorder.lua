-- typist's recorder (`typist record --editor neovim`), loaded with `--cmd` before the
-- person's configuration. For every buffer of a file inside the workspace it appends
-- JSON lines to the log, each with `t`, milliseconds since the start:
--   open   {file, text}         the file's text when it was first read (absent: new)
--   change {file, at, del, text} bytes `at`..`at + del` of the text replaced by `text`
--   cursor {file, row, col}      the cursor (0-based row, byte column)
--   save   {file}
--   final  {file, text}          each file's text when Neovim leaves
-- A buffer's text is its lines joined by "\n", with a last "\n" when 'endofline' is
-- on (Neovim's byte offsets count it so). Nothing of a buffer outside the workspace,
-- nor of a help, terminal or scratch buffer, is written. Each line is flushed.
local uv = vim.uv or vim.loop
local root = vim.env.TYPIST_RECORD_ROOT
local log = assert(io.open(vim.env.TYPIST_RECORD_LOG, 'a'))
local t0 = uv.hrtime()
local files = {} -- buffer number -> path relative to the workspace
local last_cursor = {}

local function write(ev)
  ev.t = math.floor((uv.hrtime() - t0) / 1e6)
  log:write(vim.json.encode(ev), '\n')
  log:flush()
end

local function text_of(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local text = table.concat(lines, '\n')
  if vim.bo[buf].endofline or vim.bo[buf].fixendofline then
    text = text .. '\n'
  end
  return text
end

-- The buffer's path relative to the workspace, or nil when it is not a file in it.
local function rel_of(buf)
  if vim.bo[buf].buftype ~= '' then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(buf)
  if name == '' then
    return nil
  end
  local path = vim.fs.normalize(vim.fn.fnamemodify(name, ':p'))
  local prefix = vim.fs.normalize(root) .. '/'
  if path:sub(1, #prefix) ~= prefix then
    return nil
  end
  return path:sub(#prefix + 1)
end

local function track(buf)
  if files[buf] then
    return
  end
  local rel = rel_of(buf)
  if not rel then
    return
  end
  files[buf] = rel
  local exists = uv.fs_stat(vim.api.nvim_buf_get_name(buf)) ~= nil
  write({ ev = 'open', file = rel, text = exists and text_of(buf) or vim.NIL })
  vim.api.nvim_buf_attach(buf, false, {
    on_bytes = function(_, b, _, _, _, at, _, _, del, _, _, add)
      local rel_now = files[b]
      if not rel_now then
        return true
      end
      local text = text_of(b):sub(at + 1, at + add)
      write({ ev = 'change', file = rel_now, at = at, del = del, text = text })
    end,
    on_detach = function(_, b)
      files[b] = nil
    end,
  })
end

local group = vim.api.nvim_create_augroup('typist_record', { clear = true })
vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile', 'BufEnter' }, {
  group = group,
  callback = function(ev)
    track(ev.buf)
  end,
})
vim.api.nvim_create_autocmd({ 'CursorMoved', 'CursorMovedI' }, {
  group = group,
  callback = function(ev)
    local rel = files[ev.buf]
    if not rel then
      return
    end
    local row, col = unpack(vim.api.nvim_win_get_cursor(0))
    local key = rel .. ':' .. row .. ':' .. col
    if last_cursor[ev.buf] == key then
      return
    end
    last_cursor[ev.buf] = key
    write({ ev = 'cursor', file = rel, row = row - 1, col = col })
  end,
})
vim.api.nvim_create_autocmd('BufWritePost', {
  group = group,
  callback = function(ev)
    if files[ev.buf] then
      write({ ev = 'save', file = files[ev.buf] })
    end
  end,
})
vim.api.nvim_create_autocmd('VimLeavePre', {
  group = group,
  callback = function()
    for buf, rel in pairs(files) do
      if vim.api.nvim_buf_is_loaded(buf) then
        write({ ev = 'final', file = rel, text = text_of(buf) })
      end
    end
    log:close()
  end,
})
