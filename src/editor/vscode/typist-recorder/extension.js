// typist's recorder for VS Code (`typist record --editor vscode`), the counterpart of
// Neovim's `recorder.lua`, writing the same log. typist starts code-server with
//   TYPIST_RECORD_LOG      the log (JSON lines, appended and flushed one by one)
//   TYPIST_RECORD_ROOT     the workspace: only its files are recorded
//   TYPIST_RECORD_T0       the recording's start (milliseconds since the epoch)
//   TYPIST_RECORD_CONTROL  a file typist creates to end the recording (Ctrl-C there)
//   TYPIST_RECORD_OPEN     the files to open at start (JSON list, workspace-relative)
// For every document of a file inside the workspace it writes, each with `t`,
// milliseconds since the start:
//   open   {file, text}         the file's text when first read (null: not on disk)
//   change {file, at, del, text} bytes `at`..`at + del` of the text replaced by `text`
//   cursor {file, row, col}      the cursor (0-based row, byte column)
//   save   {file}
//   final  {file, text}          each open file's text when the recording ends
//   end    {}                    the recording ended (Typist: Stop Recording, or typist)
// VS Code counts in UTF-16 code units; the log counts bytes of UTF-8, as Neovim does:
// the recorder keeps each file's text and turns every change's offsets into bytes of
// it. Only one window records: a second one says so and writes nothing until the first
// one's extension host is gone, then takes over (its `open` lines give the texts it
// sees).
'use strict';
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');

const env = process.env;
const LOG = env.TYPIST_RECORD_LOG;
const ROOT = env.TYPIST_RECORD_ROOT ? path.resolve(env.TYPIST_RECORD_ROOT) : undefined;
const T0 = Number(env.TYPIST_RECORD_T0) || Date.now();
const CONTROL = env.TYPIST_RECORD_CONTROL;

let fd; // the log, while this window records
let owner; // the file saying which extension host records
let ended = false;
const texts = new Map(); // workspace-relative path -> its text as recorded
const live = new Set(); // the paths whose document is open now
const lastCursor = new Map();

function write(ev) {
  if (fd === undefined || ended) return;
  ev.t = Math.max(0, Date.now() - T0);
  fs.writeSync(fd, JSON.stringify(ev) + '\n');
}

// The document's path relative to the workspace, or undefined when it is not a file in it.
function relOf(doc) {
  if (!ROOT || doc.uri.scheme !== 'file') return undefined;
  const p = path.resolve(doc.uri.fsPath);
  if (!p.startsWith(ROOT + path.sep)) return undefined;
  return p.slice(ROOT.length + 1).split(path.sep).join('/');
}

const bytes = (s) => Buffer.byteLength(s, 'utf8');

function track(doc) {
  const rel = relOf(doc);
  if (!rel || live.has(rel)) return rel;
  live.add(rel);
  const now = doc.getText();
  const before = texts.get(rel);
  if (before === undefined) {
    const onDisk = fs.existsSync(doc.uri.fsPath);
    write({ ev: 'open', file: rel, text: onDisk ? now : null });
    if (!onDisk && now !== '') write({ ev: 'change', file: rel, at: 0, del: 0, text: now });
  } else if (before !== now) {
    // Opened again after VS Code let it go, and changed meanwhile (on disk).
    write({ ev: 'change', file: rel, at: 0, del: bytes(before), text: now });
  }
  texts.set(rel, now);
  return rel;
}

function changed(e) {
  const rel = relOf(e.document);
  // An event without changes (the line endings switched) still changes the text: the
  // comparison below replaces it whole.
  if (!rel || !live.has(rel)) return;
  let text = texts.get(rel);
  // Applied one after another, as VS Code's own extension host applies them.
  for (const c of e.contentChanges) {
    const from = c.rangeOffset;
    const to = from + c.rangeLength;
    write({
      ev: 'change',
      file: rel,
      at: bytes(text.slice(0, from)),
      del: bytes(text.slice(from, to)),
      text: c.text,
    });
    text = text.slice(0, from) + c.text + text.slice(to);
  }
  const now = e.document.getText();
  if (text !== now) {
    // Never seen; kept faithful all the same: the whole text, replaced.
    write({ ev: 'change', file: rel, at: 0, del: bytes(text), text: now });
    text = now;
  }
  texts.set(rel, text);
}

function cursor(e) {
  const doc = e.textEditor.document;
  const rel = relOf(doc);
  if (!rel || !live.has(rel) || e.selections.length === 0) return;
  const pos = e.selections[0].active;
  const line = pos.line < doc.lineCount ? doc.lineAt(pos.line).text : '';
  const col = bytes(line.slice(0, pos.character));
  const key = `${pos.line}:${col}`;
  if (lastCursor.get(rel) === key) return;
  lastCursor.set(rel, key);
  write({ ev: 'cursor', file: rel, row: pos.line, col });
}

function finish() {
  if (fd === undefined || ended) return;
  for (const doc of vscode.workspace.textDocuments) {
    const rel = relOf(doc);
    if (rel && live.has(rel)) write({ ev: 'final', file: rel, text: doc.getText() });
  }
  write({ ev: 'end' });
  ended = true;
  try {
    fs.writeFileSync(LOG + '.ended', '');
  } catch (_) {}
  fs.closeSync(fd);
  fd = undefined;
  // The owner file stays: no other window records after the end.
  vscode.window.showInformationMessage('typist: the recording has ended; you may close this tab.');
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

// One extension host records: the first to write its pid in the owner file, or the
// next after that one's process is gone (a window reloaded).
function claim() {
  owner = LOG + '.owner';
  for (let i = 0; i < 2; i++) {
    try {
      const f = fs.openSync(owner, 'wx');
      fs.writeSync(f, String(process.pid));
      fs.closeSync(f);
      return true;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      const pid = Number(fs.readFileSync(owner, 'utf8'));
      if (pid && alive(pid)) return false;
      try {
        fs.unlinkSync(owner);
      } catch (_) {}
    }
  }
  return false;
}

function release() {
  try {
    if (owner && Number(fs.readFileSync(owner, 'utf8')) === process.pid) fs.unlinkSync(owner);
  } catch (_) {}
}

function start(context) {
  fd = fs.openSync(LOG, 'a');
  const ws = vscode.workspace;
  context.subscriptions.push(
    ws.onDidOpenTextDocument(track),
    ws.onDidCloseTextDocument((doc) => {
      const rel = relOf(doc);
      if (rel) live.delete(rel);
    }),
    ws.onDidChangeTextDocument(changed),
    ws.onDidSaveTextDocument((doc) => {
      const rel = relOf(doc);
      if (rel && live.has(rel)) write({ ev: 'save', file: rel });
    }),
    vscode.window.onDidChangeTextEditorSelection(cursor)
  );
  for (const doc of ws.textDocuments) track(doc);
}

function activate(context) {
  if (!LOG || !ROOT) return;
  context.subscriptions.push(
    vscode.commands.registerCommand('typist.stopRecording', () => {
      if (fd === undefined) {
        vscode.window.showWarningMessage(
          'typist: this window is not the one recording; run Typist: Stop Recording there, or press Ctrl-C where typist runs.'
        );
        return;
      }
      finish();
    })
  );
  let warned = false;
  const tryStart = () => {
    if (fd !== undefined || ended) return;
    if (claim()) {
      start(context);
    } else if (!warned) {
      warned = true;
      vscode.window.showWarningMessage(
        'typist records in one window only: edits made in this one are not recorded (it takes over once the recording window is gone).'
      );
    }
  };
  tryStart();
  // The end typist asks for, and a window gone whose recording this one takes over.
  const poll = setInterval(() => {
    if (fd !== undefined && CONTROL && fs.existsSync(CONTROL)) {
      clearInterval(poll);
      finish();
    } else if (fd === undefined && !fs.existsSync(LOG + '.ended')) {
      tryStart();
    }
  }, 200);
  context.subscriptions.push({ dispose: () => clearInterval(poll) });
  let open = [];
  try {
    open = JSON.parse(env.TYPIST_RECORD_OPEN || '[]');
  } catch (_) {}
  if (fd === undefined) return;
  (async () => {
    for (const rel of open) {
      const uri = vscode.Uri.file(path.join(ROOT, rel));
      try {
        await vscode.window.showTextDocument(uri, { preview: false });
      } catch (e) {
        vscode.window.showErrorMessage(`typist: cannot open ${rel}: ${e.message}`);
      }
    }
  })();
}

function deactivate() {
  release();
}

module.exports = { activate, deactivate };
