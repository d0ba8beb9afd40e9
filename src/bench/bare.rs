//! The replay benchmark's limit line: the plan's line cases sent straight to the
//! instant host (`typist host --backend fixed`, what `typist-fixed` runs) by a bare LSP
//! client on its stdio, with nothing else done: per case one incremental change (the
//! lines from the previous case's line down to this one, inserted) and one
//! `textDocument/inlineCompletion` request, whose answer is awaited before the next
//! case, as the replay's one worker does. No records, no outcomes, no scheduling, no
//! document model: what remains is the host's own work and the pipes, which is the
//! floor of a replay against that host (`typist / bare` is then typist's cost).
//!
//! Frames are written with the client's own `lsp::framing::encode`; answers are read
//! synchronously by their `Content-Length` and the request id only.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// What the bare pass measured.
#[derive(Debug, Clone, Copy)]
pub struct Bare {
    pub cases: usize,
    /// Requests answered with at least one item.
    pub answered: usize,
    /// Wall seconds from starting the host to its exit.
    pub seconds: f64,
}

impl Bare {
    pub fn per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.answered as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// One case of a plan: the file (dataset-relative, `repo/file`) and its 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Case {
    path: String,
    line: usize,
}

/// The line cases of a plan file (its first line, the plan's header, is skipped).
fn cases(plan: &Path) -> Result<Vec<Case>> {
    let text = std::fs::read_to_string(plan)
        .with_context(|| format!("cannot read the plan {}", plan.display()))?;
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let v: Value = serde_json::from_str(l)
            .with_context(|| format!("{}:{}: not JSON", plan.display(), i + 1))?;
        if v.get("plan").is_some() {
            continue;
        }
        let (Some(repo), Some(file), Some(line)) =
            (v["repo"].as_str(), v["file"].as_str(), v["line"].as_u64())
        else {
            bail!(
                "{}:{}: a case without repo, file and line",
                plan.display(),
                i + 1
            );
        };
        out.push(Case {
            path: format!("{repo}/{file}"),
            line: line as usize,
        });
    }
    out.sort();
    Ok(out)
}

/// The document open in the host: its path, the file's lines, and how many of them it
/// holds.
struct OpenFile {
    path: String,
    lines: Vec<String>,
    done: usize,
}

impl OpenFile {
    fn uri(&self) -> String {
        format!("file:///bare/{}", self.path)
    }
}

/// Reads frames until the answer to `id`; whether it holds at least one item.
fn answer_of(r: &mut impl BufRead, id: u64) -> Result<bool> {
    loop {
        let mut len = None;
        loop {
            let mut h = String::new();
            if r.read_line(&mut h)? == 0 {
                bail!("the host closed its output before answering request {id}");
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some(n) = h.strip_prefix("Content-Length:") {
                len = Some(n.trim().parse::<usize>()?);
            }
        }
        let mut body = vec![0; len.context("a frame without Content-Length")?];
        r.read_exact(&mut body)?;
        let v: Value = serde_json::from_slice(&body)?;
        if v["id"].as_u64() == Some(id) {
            if let Some(e) = v.get("error") {
                bail!("the host answered request {id} with an error: {e}");
            }
            let items = v["result"]["items"]
                .as_array()
                .or_else(|| v["result"].as_array());
            return Ok(items.is_some_and(|a| !a.is_empty()));
        }
    }
}

/// A fresh `typist host --backend fixed` and the bare client's ends of its stdio.
struct Host {
    child: Child,
    w: BufWriter<ChildStdin>,
    r: BufReader<ChildStdout>,
    /// The last request's id, also the version of the last change.
    id: u64,
}

impl Host {
    /// Starts the host and initializes it.
    fn start() -> Result<Host> {
        let mut child = Command::new(std::env::current_exe()?)
            .args(["host", "--backend", "fixed"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start typist host")?;
        let w = BufWriter::new(child.stdin.take().context("host stdin")?);
        let r = BufReader::new(child.stdout.take().context("host stdout")?);
        let mut host = Host { child, w, r, id: 0 };
        host.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"processId": null, "rootUri": null, "capabilities": {}}}),
        )?;
        answer_of(&mut host.r, 0)?;
        host.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}))?;
        Ok(host)
    }

    fn send(&mut self, v: Value) -> Result<()> {
        self.w
            .write_all(&crate::lsp::framing::encode(v.to_string().as_bytes()))?;
        self.w.flush()?;
        Ok(())
    }

    /// Opens `path` (of `dataset`) empty, as the replay does before typing into it.
    fn open(&mut self, dataset: &Path, path: &str) -> Result<OpenFile> {
        let text = std::fs::read_to_string(dataset.join(path))
            .with_context(|| format!("cannot read {}", dataset.join(path).display()))?;
        let file = OpenFile {
            path: path.to_string(),
            lines: text.split('\n').map(|l| format!("{l}\n")).collect(),
            done: 0,
        };
        self.send(
            json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": file.uri(), "languageId": "plaintext", "version": 0, "text": ""}}}),
        )?;
        Ok(file)
    }

    fn close(&mut self, file: &OpenFile) -> Result<()> {
        self.send(
            json!({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": file.uri()}}}),
        )
    }

    /// One case: the lines before `line` not yet in the document inserted, then a
    /// request at the line's start; whether its answer holds an item.
    fn ask(&mut self, file: &mut OpenFile, line: usize) -> Result<bool> {
        let upto = (line - 1).min(file.lines.len());
        let inserted: String = file.lines[file.done..upto.max(file.done)].concat();
        self.id += 1;
        let (id, done) = (self.id, file.done);
        self.send(
            json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": file.uri(), "version": id},
                "contentChanges": [{"range": {"start": {"line": done, "character": 0}, "end": {"line": done, "character": 0}}, "text": inserted}],
            }}),
        )?;
        file.done = upto.max(file.done);
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/inlineCompletion", "params": {
                "textDocument": {"uri": file.uri()},
                "position": {"line": file.done, "character": 0},
                "context": {"triggerKind": 2},
            }}),
        )?;
        answer_of(&mut self.r, id)
    }

    /// Shuts the host down and waits for its exit.
    fn finish(mut self) -> Result<()> {
        self.id += 1;
        let id = self.id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "shutdown"}))?;
        answer_of(&mut self.r, id)?;
        self.send(json!({"jsonrpc": "2.0", "method": "exit"}))?;
        drop(self.w);
        self.child.wait()?;
        Ok(())
    }
}

/// Sends `plan`'s cases (files of `dataset`) to a fresh `typist host --backend fixed`.
pub fn run(dataset: &Path, plan: &Path) -> Result<Bare> {
    let cases = cases(plan)?;
    let start = Instant::now();
    let mut host = Host::start()?;
    let mut answered = 0;
    let mut open: Option<OpenFile> = None;
    for c in &cases {
        if open.as_ref().is_none_or(|f| f.path != c.path) {
            if let Some(f) = open.take() {
                host.close(&f)?;
            }
            open = Some(host.open(dataset, &c.path)?);
        }
        let file = open.as_mut().expect("a document is open");
        answered += usize::from(host.ask(file, c.line)?);
    }
    host.finish()?;
    Ok(Bare {
        cases: cases.len(),
        answered,
        seconds: start.elapsed().as_secs_f64(),
    })
}
