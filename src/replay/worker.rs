//! A worker: takes units (assistant × pass × file) from the run's queue, replays each
//! file under the run's editor conditions in a session of its own, and sends one record
//! per case to the sink. Restart policy: a server that exits is restarted with the
//! editor's state and asked once more; `restart_after_timeouts` timeouts in a row
//! restart it too; `max_restarts` restarts in a row stop the run. A server typist
//! attached to (`connect`) is never restarted: its crash or hang is recorded as the
//! case's error or timeout, and the next unit's connection fails if it is gone.
//!
//! One live server per unit: it is started with the target file already holding the
//! editor's text on disk, and replaced before a case whose line it has been shown. Typing
//! is by paste or by character, as the run's conditions say.
//!
//! Why one server per unit rather than per repository: a server that has read a file at
//! one state keeps it (pyright's index, an agent's neighbour cache), and no protocol
//! message makes it forget. With `--context full` the server is replaced before every
//! case.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::sync::mpsc;

use super::RunConditions;
use super::manifest::{ServerEntry, Sessions};
use super::outcome::{self, Ask};
use super::records::Record;
use super::typing::{self, Granularity, TypingMode};
use super::units::{Unit, neighbours};
use crate::dataset::{Case, Dataset};
use crate::editor::{Document, EditorSession, Editors, Profile, SessionError, SessionOptions};

mod golf;
mod golf_list;
mod restart;
mod tokens;

use restart::{Next, Supervisor, Why};

/// What the workers of a run share.
pub(super) struct Shared {
    /// The run's editors host.
    editors: Editors,
    ds: Arc<Dataset>,
    profiles: Vec<Profile>,
    cond: RunConditions,
    queue: Mutex<VecDeque<Unit>>,
    cancel: Arc<AtomicBool>,
    servers: Mutex<BTreeMap<String, ServerEntry>>,
    max_restarts: u32,
    transcripts: Option<PathBuf>,
    sessions_started: AtomicU64,
    /// Nanoseconds spent in `EditorSession::start`, summed.
    server_start_nanos: AtomicU64,
    /// Servers restarted because they exited, and because they stopped answering.
    restarts_after_exit: AtomicU64,
    restarts_after_timeouts: AtomicU64,
    /// Reliability drill hook: `RunOptions::panic_at` (`--drill-panic-at N`) makes the
    /// worker recording the Nth record of the run panic instead (what a bug in a worker
    /// would do).
    panic_at: Option<u64>,
    recorded: AtomicU64,
    /// The real editor's version, as the first session reported it.
    editor_version: Mutex<Option<String>>,
}

impl Shared {
    pub(super) fn new(
        editors: &Editors,
        ds: Arc<Dataset>,
        profiles: Vec<Profile>,
        cond: RunConditions,
        queue: VecDeque<Unit>,
        cancel: Arc<AtomicBool>,
        opts: &super::RunOptions,
    ) -> Shared {
        Shared {
            editors: editors.clone(),
            ds,
            profiles,
            cond,
            queue: Mutex::new(queue),
            cancel,
            servers: Mutex::new(BTreeMap::new()),
            max_restarts: opts.max_restarts,
            transcripts: opts.transcripts.clone(),
            sessions_started: AtomicU64::new(0),
            server_start_nanos: AtomicU64::new(0),
            restarts_after_exit: AtomicU64::new(0),
            restarts_after_timeouts: AtomicU64::new(0),
            panic_at: opts.panic_at,
            recorded: AtomicU64::new(0),
            editor_version: Mutex::new(None),
        }
    }

    /// The server each assistant ran, as it named itself.
    pub(super) fn servers(&self) -> BTreeMap<String, ServerEntry> {
        self.servers.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// The real editor's version (`None` with typist's own client).
    pub(super) fn editor_version(&self) -> Option<String> {
        self.editor_version.lock().ok().and_then(|v| v.clone())
    }

    /// Seconds spent starting servers, summed over sessions and workers.
    pub(super) fn server_start_seconds(&self) -> f64 {
        self.server_start_nanos.load(Ordering::SeqCst) as f64 / 1e9
    }

    pub(super) fn sessions(&self) -> Sessions {
        Sessions {
            started: self.sessions_started.load(Ordering::SeqCst),
            restarted_after_exit: self.restarts_after_exit.load(Ordering::SeqCst),
            restarted_after_timeouts: self.restarts_after_timeouts.load(Ordering::SeqCst),
            start_seconds: Some(self.server_start_seconds()),
        }
    }
}

/// Runs `jobs` workers until the queue is empty, the run is cancelled or one fails
/// (which cancels the others). Returns the first failure.
pub(super) async fn run_workers(
    shared: Arc<Shared>,
    jobs: usize,
    tx: mpsc::Sender<Record>,
) -> Option<String> {
    let mut workers = tokio::task::JoinSet::new();
    for id in 0..jobs.max(1) {
        let worker = Worker {
            id,
            shared: shared.clone(),
            tx: tx.clone(),
            live: None,
            restarts: Supervisor::new(shared.max_restarts),
            closing: tokio::task::JoinSet::new(),
        };
        workers.spawn(worker.run());
    }
    drop(tx);
    let mut failure: Option<String> = None;
    while let Some(res) = workers.join_next().await {
        let res = res
            .map_err(|e| anyhow::anyhow!("worker panicked: {e}"))
            .and_then(|r| r);
        if let Err(e) = res {
            if failure.is_none() {
                failure = Some(format!("{e:#}"));
            }
            shared.cancel.store(true, Ordering::SeqCst);
        }
    }
    failure
}

/// Where a server's view of the target file ends, for token cases: (0-based line,
/// character). The server may know everything before it.
type Seen = (usize, usize);

struct Worker {
    id: usize,
    shared: Arc<Shared>,
    tx: mpsc::Sender<Record>,
    /// The live session, serving one unit (assistant × pass × file) at most.
    live: Option<Live>,
    /// The restart policy's runs of failures.
    restarts: Supervisor,
    /// Sessions being shut down in the background.
    closing: tokio::task::JoinSet<()>,
}

/// A server process and its workspace, serving one unit. A session never outlives its
/// unit, and is replaced within it before a case whose line it has been shown: a server
/// that has seen a line (in a document or on disk) may remember it, so it is never asked
/// to predict it. The target file's disk copy mirrors the editor's document at every
/// moment, from before the server starts.
struct Live {
    session: EditorSession,
    /// The first suggestion waits for the profile's readiness rule.
    warmed: bool,
    /// 0-based lines of the target file this server has been shown in full.
    shown: Vec<std::ops::Range<usize>>,
    /// Token cases: where the server's view of the target file ends.
    seen: Seen,
}

impl Live {
    fn has_seen(&self, line: usize) -> bool {
        self.shown.iter().any(|r| r.contains(&line))
    }
    /// Every line of `text` but the cursor's has been shown (a document's lines are the
    /// file's lines: the target line is cut to its typed prefix, never removed).
    fn show(&mut self, text: &str, cursor_line: usize) {
        let n = memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1;
        self.shown.push(0..cursor_line.min(n));
        if cursor_line + 1 < n {
            self.shown.push(cursor_line + 1..n);
        }
        // Kept sorted and disjoint (merged in place), so a long file's cases do not each
        // add ranges.
        self.shown.retain(|r| !r.is_empty());
        self.shown.sort_unstable_by_key(|r| r.start);
        self.shown.dedup_by(|next, kept| {
            let overlaps = next.start <= kept.end;
            if overlaps {
                kept.end = kept.end.max(next.end);
            }
            overlaps
        });
    }
}

impl Worker {
    async fn run(mut self) -> Result<()> {
        let result = self.run_units().await;
        self.retire();
        while self.closing.join_next().await.is_some() {}
        result
    }

    async fn run_units(&mut self) -> Result<()> {
        loop {
            if self.shared.cancel.load(Ordering::SeqCst) {
                return Ok(());
            }
            let unit = self
                .shared
                .queue
                .lock()
                .ok()
                .and_then(|mut q| q.pop_front());
            let Some(unit) = unit else { return Ok(()) };
            tracing::debug!(worker = self.id, file = %unit.file, pass = unit.pass, "unit");
            let result = self.replay_file(&unit).await;
            self.retire();
            result?;
        }
    }

    fn profile(&self, a: usize) -> &Profile {
        &self.shared.profiles[a]
    }

    /// Shuts the live session down in the background (its process group and temporary
    /// folder go with it; `run` waits for every one before returning).
    fn retire(&mut self) {
        if let Some(live) = self.live.take() {
            self.closing.spawn(async move {
                live.session
                    .shutdown(crate::editor::options::SHUTDOWN_WAIT)
                    .await;
            });
        }
    }

    /// Starts a server for `unit` in a fresh workspace holding the repository's files,
    /// with the target file already holding `text` (what the editor holds) before the
    /// server starts, then opens the tabs and the target document with `text`.
    async fn start_session(&mut self, unit: &Unit, text: &str) -> Result<()> {
        self.retire();
        self.restarts.fresh_server();
        let profile = self.profile(unit.assistant).clone();
        let ds = self.shared.ds.clone();
        let repo = ds
            .repos
            .iter()
            .find(|r| r.name == unit.repo)
            .context("repository vanished from the dataset")?;
        let contents = repo.workspace_contents(&unit.file, text);
        let n = self.shared.sessions_started.fetch_add(1, Ordering::SeqCst);
        let transcript = self.shared.transcripts.as_ref().map(|d| {
            d.join(format!(
                "{}-{}-{n}.jsonl",
                profile.name,
                unit.repo.replace('/', "_")
            ))
        });
        let t0 = std::time::Instant::now();
        let started = EditorSession::start(
            &self.shared.editors,
            &self.shared.cond.app,
            &profile,
            &self.shared.cond.editor,
            SessionOptions {
                contents,
                transcript,
                ..Default::default()
            },
        )
        .await;
        self.shared.server_start_nanos.fetch_add(
            u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX),
            Ordering::SeqCst,
        );
        let mut session = started.map_err(|e| anyhow::anyhow!("{e}"))?;
        for t in neighbours(&repo.files, &unit.file, self.shared.cond.open_tabs as usize) {
            session.open(&t.rel, &t.text).await?;
        }
        session.open(&unit.file, text).await?;
        // After the opens: a real editor starts its server with the first document.
        let info = session.server_info().clone();
        if let Ok(mut s) = self.shared.servers.lock() {
            s.entry(profile.name.clone())
                .or_insert_with(|| ServerEntry {
                    name: info.name.clone(),
                    version: info.version.clone(),
                });
        }
        if let Some(v) = session.editor_version()
            && let Ok(mut e) = self.shared.editor_version.lock()
        {
            e.get_or_insert_with(|| v.to_string());
        }
        self.live = Some(Live {
            session,
            warmed: false,
            shown: Vec::new(),
            seen: (0, 0),
        });
        Ok(())
    }

    async fn replay_file(&mut self, unit: &Unit) -> Result<()> {
        let ds = self.shared.ds.clone();
        let file = ds
            .file(&unit.repo, &unit.file)
            .context("file vanished from the dataset")?;
        let lines = file.lines();
        if unit.cases.iter().any(|c| c.token.is_some()) {
            return self.replay_tokens(unit, &lines).await;
        }
        let cond = self.shared.cond.clone();
        match cond.typing {
            TypingMode::Paste => self.replay_paste(unit, &lines, &cond).await,
            TypingMode::Type => self.replay_type(unit, &lines, &cond).await,
        }
    }

    async fn replay_paste(
        &mut self,
        unit: &Unit,
        lines: &[&str],
        cond: &RunConditions,
    ) -> Result<()> {
        for case in &unit.cases {
            if self.shared.cancel.load(Ordering::SeqCst) {
                return Ok(());
            }
            if let Some(golf) = cond.golf {
                self.golf_case(unit, lines, case, cond, golf).await?;
                continue;
            }
            let idx = case.line as usize - 1;
            let (text, cursor) = typing::paste_document(
                lines,
                case.line as usize,
                cond.typed_prefix as usize,
                cond.context,
                cond.suffix_lines as usize,
            );
            if self.live.as_ref().is_none_or(|l| l.has_seen(idx)) {
                self.start_session(unit, "").await?;
            }
            self.set_text(unit, &text)?;
            self.ask_and_record(unit, case, &text, cursor).await?;
        }
        Ok(())
    }

    async fn replay_type(
        &mut self,
        unit: &Unit,
        lines: &[&str],
        cond: &RunConditions,
    ) -> Result<()> {
        let cases: BTreeMap<u32, &Case> = unit.cases.iter().map(|c| (c.line, c)).collect();
        let Some(&last) = cases.keys().next_back() else {
            return Ok(());
        };
        self.start_session(unit, "").await?;
        let mut text = String::new();
        for (i, line) in lines.iter().enumerate() {
            let n = i as u32 + 1;
            if n > last || self.shared.cancel.load(Ordering::SeqCst) {
                break;
            }
            let rest: &str = if let Some(case) = cases.get(&n) {
                let typed = typing::typed_prefix(line, cond.typed_prefix as usize);
                self.type_into(unit, &mut text, typed, cond.granularity)?;
                let cursor = text.len();
                self.ask_and_record(unit, case, &text, cursor).await?;
                &line[typed.len()..]
            } else {
                line
            };
            let mut chunk = rest.to_string();
            if i + 1 < lines.len() {
                chunk.push('\n');
            }
            self.type_into(unit, &mut text, &chunk, cond.granularity)?;
        }
        Ok(())
    }

    fn type_into(
        &mut self,
        unit: &Unit,
        text: &mut String,
        add: &str,
        g: Granularity,
    ) -> Result<()> {
        match g {
            Granularity::Line => {
                text.push_str(add);
                self.set_text(unit, text)
            }
            Granularity::Char => {
                for c in add.chars() {
                    text.push(c);
                    self.set_text(unit, text)?;
                }
                Ok(())
            }
        }
    }

    /// Sets the target document (and so its disk copy) to `text`.
    fn set_text(&mut self, unit: &Unit, text: &str) -> Result<()> {
        let Some(live) = self.live.as_mut() else {
            bail!("no session")
        };
        live.session.set_text(&unit.file, text)?;
        Ok(())
    }

    async fn ask(&mut self, unit: &Unit, text: &str, cursor_byte: usize) -> Ask {
        let settle = self.shared.cond.settle_ms;
        if settle > 0 {
            tokio::time::sleep(Duration::from_millis(settle)).await;
        }
        let Some(live) = self.live.as_mut() else {
            return Ask::Failed(SessionError::NoSession);
        };
        let pos = Document::position_of(text, cursor_byte, live.session.encoding());
        live.show(text, pos.line as usize);
        let s = &mut live.session;
        let r = if live.warmed {
            s.suggest(&unit.file, pos).await
        } else {
            s.suggest_when_ready(&unit.file, pos).await
        };
        match r {
            Ok(t) => {
                live.warmed = true;
                Ask::Got(t)
            }
            Err(e) => Ask::Failed(e),
        }
    }

    /// Asks as the restart policy says (`restart.rs`): once, and once more with a fresh
    /// server holding the editor's state (on disk and in the document) after an exit or
    /// too many timeouts in a row. `case` names the case in the log.
    pub(super) async fn ask_supervised(
        &mut self,
        unit: &Unit,
        case: &str,
        text: &str,
        cursor: usize,
    ) -> Result<Ask> {
        let mut again = false;
        loop {
            let outcome = self.ask(unit, text, cursor).await;
            let failure = match &outcome {
                Ask::Failed(e) => Some(e),
                Ask::Got(_) => None,
            };
            match self.judge(unit, case, failure, again)? {
                Next::Keep => return Ok(outcome),
                Next::Restart(_) => {
                    self.start_session(unit, text).await?;
                    again = true;
                }
            }
        }
    }

    /// The restart policy's verdict on one ask's result, logged and counted.
    pub(super) fn judge(
        &mut self,
        unit: &Unit,
        case: &str,
        failure: Option<&SessionError>,
        again: bool,
    ) -> Result<Next> {
        let profile = &self.shared.profiles[unit.assistant];
        let next = self.restarts.judge(profile, failure, again)?;
        let name = &profile.name;
        match (next, failure) {
            (Next::Restart(Why::Exited), Some(e)) => {
                tracing::warn!(worker = self.id, server = %name, case = %case, "server exited: {e}; restarting");
                self.shared
                    .restarts_after_exit
                    .fetch_add(1, Ordering::SeqCst);
            }
            (Next::Restart(Why::TimedOut(n)), _) => {
                tracing::warn!(worker = self.id, server = %name, case = %case, "{n} timeouts in a row: restarting the server and asking once more");
                self.shared
                    .restarts_after_timeouts
                    .fetch_add(1, Ordering::SeqCst);
            }
            _ => {}
        }
        Ok(next)
    }

    /// Asks as the restart policy says, and sends the case's record.
    async fn ask_and_record(
        &mut self,
        unit: &Unit,
        case: &Case,
        text: &str,
        cursor: usize,
    ) -> Result<()> {
        let outcome = self.ask_supervised(unit, &case.case, text, cursor).await?;
        let request_hash = self
            .live
            .as_ref()
            .and_then(|l| l.session.last_request_hash())
            .map(str::to_string);
        let name = &self.profile(unit.assistant).name;
        let mut record = outcome::record(
            case,
            name,
            unit.pass,
            &self.shared.cond,
            text,
            cursor,
            outcome,
        );
        record.request_hash = request_hash;
        self.mark_editor(&mut record);
        // A real editor that failed in itself (a Lua error) serves no other case: the
        // next case gets a fresh one, holding what this one held.
        if let Some(why) = self.live.as_ref().and_then(|l| l.session.broken()) {
            tracing::warn!(worker = self.id, case = %case.case, "editor replaced: {why}");
            self.start_session(unit, text).await?;
            if let Some(live) = self.live.as_mut() {
                let line = Document::position_of(text, cursor, live.session.encoding()).line;
                live.show(text, line as usize);
            }
        }
        self.send(record).await
    }

    /// A real editor's kind and version on the record (none with typist's own client,
    /// whose records keep their bytes).
    fn mark_editor(&self, record: &mut Record) {
        let app = &self.shared.cond.app;
        if app.kind != crate::editor::EditorKind::Typist {
            record.editor = Some(app.kind.as_str().to_string());
            record.editor_version = self.shared.editor_version();
        }
    }

    /// Sends a finished record to the sink.
    async fn send(&mut self, record: Record) -> Result<()> {
        let n = self.shared.recorded.fetch_add(1, Ordering::SeqCst) + 1;
        if self.shared.panic_at == Some(n) {
            panic!(
                "drill: worker {} panics at record {n} (--drill-panic-at)",
                self.id
            );
        }
        self.tx
            .send(record)
            .await
            .map_err(|_| anyhow::anyhow!("record writer stopped"))
    }
}
