-- typist's side inside Neovim (loaded once per editor with nvim_exec_lua; `...` is the
-- setup table). It sets the options that keep typing literal and the disk clean, starts
-- the profile's server with Neovim's own client, turns on inline completion, and tells
-- typist over the RPC channel about every inline-completion request Neovim sends
-- (`typist_request`), its answer with the ghost text shown right after the answer was
-- drawn (`typist_answer`), cancellations (`LspRequest`) and the server's detach. Every
-- field of a notification and of a state reply is always sent (`vim.NIL` for none):
-- typist refuses one with a field missing (`protocol.rs`).
local opts = ...
local api = vim.api
for k, v in pairs(opts) do
  if v == vim.NIL then
    opts[k] = nil
  end
end
local M = {
  chan = opts.chan,
  epoch = 0,
  seq = 0,
  ids = {},
  -- The slowest round trip of each watched method so far (ms): Neovim's completion
  -- waits up to its average round trip before asking again for an incomplete list.
  slowest = {},
  client_id = nil,
  langs = {},
  progress = { seen = false, active = {} },
  quiescent = vim.NIL,
}
_G.typist = M

-- Nothing on disk but the workspace copy typist writes itself.
vim.o.swapfile = false
vim.o.backup = false
vim.o.writebackup = false
vim.o.undofile = false
vim.o.shadafile = 'NONE'
vim.o.shada = ''
-- Typing stays literal: no indentation, wrapping or formatting of what typist types.
vim.cmd('filetype plugin indent off')
vim.cmd('syntax off')
for _, o in ipairs({ 'autoindent', 'smartindent', 'cindent', 'smarttab', 'expandtab' }) do
  vim.o[o] = false
end
vim.o.indentexpr = ''
vim.o.indentkeys = ''
vim.o.formatoptions = ''
vim.o.textwidth = 0
vim.o.completeopt = 'menuone,noselect,popup'
vim.o.shortmess = vim.o.shortmess .. 'AIF'
-- The client's log: its folder is made when the module loads (under XDG_STATE_HOME,
-- which typist pointed into the session's folder for this), its file is the session's,
-- and nothing is logged; then the user's XDG_STATE_HOME is back for the servers.
local log = require('vim.lsp.log')
log._set_filename(opts.lsp_log)
log.set_level(vim.log.levels.OFF)
vim.env.XDG_STATE_HOME = opts.xdg_state_home
-- Neovim's temporary folder and socket were made in the session's folder at start-up
-- (TMPDIR and XDG_RUNTIME_DIR); the servers get the user's (vim.NIL: unset).
vim.fn.tempname()
vim.env.TMPDIR = opts.tmpdir ~= vim.NIL and opts.tmpdir or nil
vim.env.XDG_RUNTIME_DIR = opts.xdg_runtime_dir ~= vim.NIL and opts.xdg_runtime_dir or nil

-- Errors a person would see: the message history's error entries (an error message, an
-- exception escaping a plugin's callback, `:echoerr`, `vim.notify` at ERROR), read through
-- a UI of typist's own that takes the messages (`ext_messages`: `:messages` then lists
-- them with their kinds). An error a plugin silenced (`silent! iunmap`: only `v:errmsg`
-- is set, nothing is shown or kept) is none.
local history = nil
vim.ui_attach(api.nvim_create_namespace('typist.messages'), { ext_messages = true }, function(event, entries)
  if event == 'msg_history_show' then
    history = entries
  end
end)
local ERROR_KINDS = { emsg = true, echoerr = true, lua_error = true, rpc_error = true }

-- Every message in the history, as {kind, text}.
function M.messages()
  history = nil
  vim.cmd('messages')
  local out = {}
  for _, e in ipairs(history or {}) do
    local parts = {}
    for _, chunk in ipairs(e[2] or {}) do
      parts[#parts + 1] = chunk[2]
    end
    out[#out + 1] = { e[1], table.concat(parts) }
  end
  history = nil
  return out
end

-- The error messages shown since the case was placed, one string each.
function M.errors()
  local out = {}
  for _, m in ipairs(M.messages()) do
    if ERROR_KINDS[m[1]] then
      out[#out + 1] = m[2]
    end
  end
  return out
end

local namespaces = {}
for _, name in ipairs(opts.namespaces) do
  namespaces[#namespaces + 1] = api.nvim_create_namespace(name)
end

local function notify(event, data)
  vim.rpcnotify(M.chan, event, data)
end

-- A plugin's info beside its suggestion (llama.vim's statistics) is drawn in a highlight
-- of its own: with `highlights` set, only chunks in those groups are read.
local highlights = nil
if opts.highlights and #opts.highlights > 0 then
  highlights = {}
  for _, g in ipairs(opts.highlights) do
    highlights[g] = true
  end
end

-- A chunk's highlight groups by name (a chunk names none, one, or a list).
local function groups_of(hl)
  local out = {}
  for _, h in ipairs(type(hl) == 'table' and hl or { hl }) do
    if type(h) == 'number' then
      h = vim.fn.synIDattr(h, 'name')
    end
    if type(h) == 'string' and h ~= '' then
      out[#out + 1] = h
    end
  end
  return out
end

-- The text of `chunks` that is read (every chunk, or those in `highlights`), and the
-- groups of the chunks read, added to `seen`.
local function chunks_text(chunks, seen)
  local parts = {}
  for _, chunk in ipairs(chunks or {}) do
    local gs = groups_of(chunk[2])
    -- Blank cells with no highlight (a plugin's padding) are drawn as they are: kept,
    -- and not a group of their own.
    local padding = #gs == 0 and not (chunk[1] or ''):find('%S')
    local keep = highlights == nil or padding
    for _, g in ipairs(gs) do
      keep = keep or highlights[g] == true
    end
    if keep then
      parts[#parts + 1] = chunk[1]
      for _, g in ipairs(gs) do
        seen[g] = true
      end
      if #gs == 0 and not padding then
        seen[''] = true
      end
    end
  end
  return table.concat(parts)
end

-- The byte column of screen column `vcol` (0-based, from the line's first text column) in
-- `line`, and the blank cells drawn between the line's end and it.
local function byte_col(line, vcol)
  local width = 0
  local i = 0
  for _, ch in ipairs(vim.fn.split(line, '\\zs')) do
    if width >= vcol then
      return i, 0
    end
    width = width + vim.fn.strdisplaywidth(ch, width)
    i = i + #ch
  end
  return #line, math.max(0, vcol - width)
end

-- How many bytes of `line` from byte `col` a text `width` cells wide drawn over them hides.
local function covered(line, col, width)
  local start = vim.fn.strdisplaywidth(line:sub(1, col))
  local n = 0
  for _, ch in ipairs(vim.fn.split(line:sub(col + 1), '\\zs')) do
    local w = vim.fn.strdisplaywidth(ch, start)
    if width < w then
      break
    end
    width = width - w
    start = start + w
    n = n + #ch
  end
  return n
end

-- The ghost text at the cursor's row in the namespaces read (never diagnostics'), as
-- Neovim draws it: each extmark's virtual text with where it goes (`inline` and
-- `overlay` at its byte column, a fixed window column turned into one, `eol`,
-- `right_align`) and its virtual lines (a mark on the next row with `virt_lines_above`
-- draws them below the cursor's row too). Typist composes the line as shown from these.
function M.shown(buf)
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    return { marks = {} }
  end
  local row, col = unpack(api.nvim_win_get_cursor(win))
  local line = api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or ''
  local marks = {}
  local seen = {}
  local last = row < api.nvim_buf_line_count(buf) and row or row - 1
  for _, ns in ipairs(namespaces) do
    for _, m in ipairs(api.nvim_buf_get_extmarks(buf, ns, { row - 1, 0 }, { last, -1 }, { details = true })) do
      local d = m[4]
      local on_row = m[2] == row - 1
      local lines = {}
      if (d.virt_lines_above == true) ~= on_row then
        for _, l in ipairs(d.virt_lines or {}) do
          lines[#lines + 1] = chunks_text(l, seen)
        end
      end
      local text = on_row and chunks_text(d.virt_text, seen) or ''
      if on_row or #lines > 0 then
        local pos = d.virt_text_pos or 'eol'
        local at, pad = m[3], 0
        if d.virt_text_win_col ~= nil then
          pos = 'overlay'
          at, pad = byte_col(line, d.virt_text_win_col)
        elseif pos == 'eol_right_align' then
          pos = 'right_align'
        end
        marks[#marks + 1] = {
          id = m[1],
          row = m[2],
          col = at,
          pad = pad,
          text = text,
          covers = pos == 'overlay' and covered(line, at, vim.fn.strdisplaywidth(text)) or 0,
          lines = lines,
          pos = pos,
        }
      end
    end
  end
  local groups = vim.tbl_keys(seen)
  table.sort(groups)
  return { line = line, row = row - 1, col = col, marks = marks, groups = groups }
end

-- The requests typist follows: Neovim's inline completion and its completion popup.
local WATCHED = { ['textDocument/inlineCompletion'] = true, ['textDocument/completion'] = true }

-- The completion popup as shown: the LSP items of the entries that match what is typed,
-- in display order (after Neovim's filtering and sorting and the popup's own
-- filtering as keys are typed).
function M.popup()
  local info = vim.fn.complete_info({ 'matches', 'pum_visible', 'selected' })
  local items = {}
  for _, m in ipairs(info.matches or {}) do
    local lsp = vim.tbl_get(m, 'user_data', 'nvim', 'lsp', 'completion_item')
    if lsp then
      items[#items + 1] = lsp
    end
  end
  return { items = items, visible = info.pum_visible == 1, selected = info.selected }
end

local function watch(client)
  if client._typist then
    return
  end
  client._typist = true
  local request = client.request
  client.request = function(self, method, params, handler, bufnr)
    if not WATCHED[method] or not handler then
      return request(self, method, params, handler, bufnr)
    end
    M.seq = M.seq + 1
    local seq = M.seq
    local buf = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
    -- The document asked about: Neovim's inline completion asks for every attached
    -- buffer on an `InsertEnter` in any of them (the current buffer's cursor with each
    -- one's URI), so a request is told by its document, not by the current buffer.
    local td = type(params) == 'table' and params.textDocument or nil
    if td and td.uri then
      buf = vim.uri_to_bufnr(td.uri)
    end
    notify('typist_request', {
      seq = seq,
      method = method,
      buf = buf,
      epoch = M.epoch,
      version = vim.lsp.util.buf_versions[buf] or -1,
      row = params.position.line,
      params = params,
    })
    local sent = vim.uv.hrtime()
    local ok, id = request(self, method, params, function(err, result, ctx, config)
      local rtt = (vim.uv.hrtime() - sent) / 1e6
      M.slowest[method] = math.max(M.slowest[method] or 0, rtt)
      local fine, herr = pcall(handler, err, result, ctx, config)
      local items = result and (result.items or result) or nil
      local completion = method == 'textDocument/completion'
      notify('typist_answer', {
        seq = seq,
        method = method,
        error = err and (err.message or vim.inspect(err)) or vim.NIL,
        null = result == nil,
        items = items and #items or 0,
        incomplete = completion and type(result) == 'table' and result.isIncomplete == true,
        -- Inline: the ghost text drawn; completion: the popup's items as shown.
        shown = completion and M.popup() or M.shown(buf),
        handler_error = (not fine) and tostring(herr) or vim.NIL,
      })
    end, bufnr)
    if ok and id then
      M.ids[id] = seq
    elseif not ok then
      notify('typist_answer', {
        seq = seq,
        method = method,
        error = 'the client refused the request (shut down)',
        null = true,
        items = 0,
        incomplete = false,
        shown = vim.NIL,
        handler_error = vim.NIL,
      })
    end
    return ok, id
  end
end

api.nvim_create_autocmd('LspRequest', {
  callback = function(ev)
    local r = ev.data.request
    if r and r.type == 'cancel' and M.ids[ev.data.request_id] then
      notify('typist_cancel', { seq = M.ids[ev.data.request_id] })
    end
  end,
})
api.nvim_create_autocmd('LspDetach', {
  callback = function(ev)
    if ev.data.client_id == M.client_id then
      notify('typist_detach', { client_id = ev.data.client_id })
    end
  end,
})

local handlers = {
  -- rust-analyzer's readiness (`readiness.rule = "server-status"`).
  ['experimental/serverStatus'] = function(_, result)
    if type(result) == 'table' and result.quiescent ~= nil then
      M.quiescent = result.quiescent
    end
  end,
}
local capabilities = vim.lsp.protocol.make_client_capabilities()
capabilities.experimental = { serverStatusNotification = true }

local config = {
  name = opts.name,
  handlers = handlers,
  -- Whole-text changes: with 'endofline' off (below), Neovim's incremental changes still
  -- end a change that reaches the last line with a line break, so the server's document
  -- gained a "\n" after the cursor that the buffer does not hold. The whole text is the
  -- buffer's lines joined, exactly what typist placed.
  flags = { allow_incremental_sync = false },
  capabilities = capabilities,
  cmd = opts.cmd,
  cmd_env = opts.cmd_env,
  cmd_cwd = opts.root,
  root_dir = opts.root,
  settings = opts.settings,
  init_options = opts.init_options,
  get_language_id = function(bufnr, filetype)
    return M.langs[api.nvim_buf_get_name(bufnr)] or filetype
  end,
}

-- Opens `path` in a buffer with Neovim's client attached (the first one starts it).
function M.open(path, lang, current)
  M.langs[path] = lang
  local buf = vim.fn.bufadd(path)
  vim.fn.bufload(buf)
  vim.bo[buf].swapfile = false
  vim.bo[buf].undofile = false
  -- The server gets the buffer's lines joined, with no line break added after the
  -- last: the text typist placed, as its own client sends it and as the disk copy is.
  vim.bo[buf].endofline = false
  vim.bo[buf].fixendofline = false
  -- Its lines as typist wrote them, a last empty one for a final line break (Neovim
  -- reads that break as 'endofline'), so that the server opens the text typist's own
  -- client opens.
  local lines = vim.fn.readfile(path, 'b')
  if #lines == 0 then
    lines = { '' }
  end
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  if current then
    api.nvim_set_current_buf(buf)
  end
  if opts.cmd == nil then
    -- A plugin with no server: nothing to start.
    return buf
  end
  if M.client_id == nil then
    M.client_id = vim.lsp.start(config, { bufnr = buf, silent = false })
    if M.client_id == nil then
      error('vim.lsp.start could not start ' .. opts.name)
    end
    watch(vim.lsp.get_client_by_id(M.client_id))
  else
    vim.lsp.buf_attach_client(buf, M.client_id)
  end
  if opts.inline then
    vim.lsp.inline_completion.enable(true, { bufnr = buf })
  end
  if opts.popup then
    -- "auto": the popup is asked again as keys are typed while it is incomplete (and on
    -- the server's trigger characters); "manual": only when typist asks.
    vim.lsp.completion.enable(true, M.client_id, buf, { autotrigger = opts.popup == 'auto' })
  end
  return buf
end

-- The client's state (`gone`, `starting`, `initialized`), and once initialized the
-- server's name, version and completion trigger characters.
function M.ready()
  local c = M.client_id and vim.lsp.get_client_by_id(M.client_id)
  if not c or not c.initialized then
    return { state = c and 'starting' or 'gone', name = vim.NIL, version = vim.NIL, triggers = {} }
  end
  local info = c.server_info or {}
  local cp = (c.server_capabilities or {}).completionProvider or {}
  return {
    state = 'initialized',
    name = info.name or vim.NIL,
    version = info.version or vim.NIL,
    triggers = cp.triggerCharacters or {},
  }
end

-- What the profile's readiness rules look at: whether the server began any `$/progress`,
-- which is still running, and rust-analyzer's last `quiescent`.
function M.readiness()
  return { seen = M.progress.seen, active = vim.tbl_count(M.progress.active), quiescent = M.quiescent }
end

api.nvim_create_autocmd('LspProgress', {
  callback = function(ev)
    if ev.data.client_id ~= M.client_id then
      return
    end
    local p = ev.data.params or {}
    local kind = type(p.value) == 'table' and p.value.kind or nil
    if kind == 'begin' then
      M.progress.seen = true
      M.progress.active[tostring(p.token)] = true
    elseif kind == 'end' then
      M.progress.active[tostring(p.token)] = nil
    end
  end,
})

-- Asks Neovim's completion for a popup at the cursor, as `<C-x><C-o>` or a trigger
-- character does (`ctx`: the request's CompletionContext).
function M.complete(ctx)
  vim.lsp.completion.get({ ctx = ctx })
end

-- The slowest round trip of `method` so far, in whole ms (0: none answered yet).
function M.slowest_ms(method)
  return math.ceil(M.slowest[method] or 0)
end

-- Puts the cursor at byte `col` of row `row` (0-based) in insert mode.
function M.cursor(row, col)
  api.nvim_win_set_cursor(0, { row + 1, col })
end

-- A new case: the buffer's lines from `start` (0-based) replaced by `lines`, the cursor
-- at byte `col` of row `row` (0-based) in normal mode, the message history emptied.
-- Returns the placement's epoch.
function M.place(buf, start, lines, row, col)
  M.epoch = M.epoch + 1
  vim.cmd('messages clear')
  api.nvim_buf_set_lines(buf, start, -1, false, lines)
  api.nvim_win_set_cursor(0, { row + 1, col })
  return M.epoch
end

-- Edit sessions (`edits.rs`). One change of a session made in `buf` as the person made
-- it: bytes from (`srow`, `scol`) to (`erow`, `ecol`) replaced by `lines`, in normal
-- mode, so that Neovim's client sends the change it computes for it.
function M.edit(buf, srow, scol, erow, ecol, lines)
  api.nvim_buf_set_text(buf, srow, scol, erow, ecol, lines)
end

-- An ask where the session stands: `buf` shown in the window (a file switched to), the
-- message history emptied, the cursor at byte `col` of row `row` (0-based) in normal
-- mode. Returns the placement's epoch.
function M.at(buf, row, col)
  M.epoch = M.epoch + 1
  if api.nvim_get_current_buf() ~= buf then
    api.nvim_win_set_buf(0, buf)
  end
  vim.cmd('messages clear')
  api.nvim_win_set_cursor(0, { row + 1, col })
  return M.epoch
end

-- The next edit at byte `col` of row `row` in `buf`, asked as copilot-lsp (a Neovim
-- plugin for Copilot's next edits) asks it: `textDocument/didFocus` when the buffer was
-- not the focused one, then `textDocument/copilotInlineEdit` with the position in the
-- client's encoding and the buffer's version; `textDocument/didShowInlineEdit` for the
-- first edit of an answer that has one. The answer is kept for `next_edit_answer`.
M.nes = { seq = 0, answers = {}, ids = {} }
function M.next_edit(buf, row, col)
  local c = M.client_id and vim.lsp.get_client_by_id(M.client_id)
  if not c then
    return { seq = -1, uri = vim.NIL, version = -1, encoding = vim.NIL, params = vim.NIL }
  end
  local uri = vim.uri_from_bufnr(buf)
  if M.nes.focused ~= buf then
    c:notify('textDocument/didFocus', { textDocument = { uri = uri } })
    M.nes.focused = buf
  end
  local line = api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ''
  local params = {
    textDocument = { uri = uri, version = vim.lsp.util.buf_versions[buf] },
    position = { line = row, character = vim.str_utfindex(line, c.offset_encoding, col, false) },
  }
  M.nes.seq = M.nes.seq + 1
  local seq = M.nes.seq
  local ok, id = c:request('textDocument/copilotInlineEdit', params, function(err, result)
    M.nes.ids[seq] = nil
    M.nes.answers[seq] = {
      error = err and (err.message or vim.inspect(err)) or vim.NIL,
      code = err and err.code or vim.NIL,
      result = result or vim.NIL,
    }
    if not err and type(result) == 'table' and type(result.edits) == 'table' and result.edits[1] then
      c:notify('textDocument/didShowInlineEdit', { item = result.edits[1] })
    end
  end, buf)
  if ok then
    M.nes.ids[seq] = id
  else
    M.nes.answers[seq] = { error = 'the client refused the request (shut down)', code = vim.NIL, result = vim.NIL }
  end
  return {
    seq = seq,
    uri = uri,
    version = params.textDocument.version,
    encoding = c.offset_encoding,
    params = params,
  }
end

-- The answer to next-edit request `seq` once it came (taken), else nil.
function M.next_edit_answer(seq)
  local a = M.nes.answers[seq]
  M.nes.answers[seq] = nil
  return a
end

-- Cancels next-edit request `seq`, no longer waited for.
function M.next_edit_cancel(seq)
  local c = M.client_id and vim.lsp.get_client_by_id(M.client_id)
  local id = M.nes.ids[seq]
  M.nes.ids[seq] = nil
  if c and id then
    c:cancel_request(id)
  end
end

-- Where typing stands: mode, buffer version, cursor (0-based row, byte column), the
-- cursor's line.
function M.state(buf)
  local row, col = unpack(api.nvim_win_get_cursor(0))
  return {
    mode = api.nvim_get_mode().mode,
    version = vim.lsp.util.buf_versions[buf] or -1,
    row = row - 1,
    col = col,
    line = api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or '',
    lines = api.nvim_buf_line_count(buf),
    errors = M.errors(),
    pum = vim.fn.pumvisible() == 1,
  }
end

-- Cancels the request typist stopped waiting for.
function M.cancel(seq)
  local c = M.client_id and vim.lsp.get_client_by_id(M.client_id)
  for id, s in pairs(M.ids) do
    if s == seq and c then
      c:cancel_request(id)
    end
  end
end

-- The plugin's configuration: a Vimscript file is sourced, a Lua file run.
if opts.config then
  if opts.config:match('%.vim$') then
    vim.cmd.source(vim.fn.fnameescape(opts.config))
  else
    dofile(opts.config)
  end
end
return true
