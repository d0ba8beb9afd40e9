//! Replaying edit sessions (an edits plan, methodology §13): each (assistant, pass,
//! session) is one unit, replayed in an editor session of its own whose workspace holds
//! the session's starting files. Every event is applied as the person made it (an
//! insertion or a deletion is one change the editor sends), so the assistant builds its
//! own edit history from `didChange`; at each moment the editor asks for the next edit
//! at the cursor, and one `next_edit` record is written.
//!
//! The record carries the texts it is scored on (`score::edit_records::Window`); this
//! file applies the proposed edits and cuts the window, and computes no figure.
//! Records are appended and flushed as they come and rewritten sorted at the end
//! (by session, moment, assistant, pass; one per key), so the file does not depend on
//! the number of workers; a resumed run replays the units (sessions) with a moment not
//! yet recorded, whose moments replace those recorded before. One worker's failure (an
//! assistant not signed in, not installed) stops the others after their unit.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail};
use serde::Serialize;
use tokio::sync::mpsc;

use super::RunConditions;
use super::options::{RunReport, RunStatus};
use crate::dataset::Language;
use crate::dataset::edits::{EventKind, Moment, Pos, Session, offset};
use crate::editor::{
    Document, EditorSession, Editors, NextEdits, Position, Profile, SessionError, SessionOptions,
};
use crate::score::Outcome;
use crate::score::edit_records::{EditRecord, InlineAsk, Window, read_edit_records, window};

/// How an edits run goes.
#[derive(Debug, Clone)]
pub struct EditsOptions {
    pub out: PathBuf,
    pub jobs: usize,
    pub passes: u32,
    pub resume: bool,
    /// With `resume`: a session with a moment recorded as an error or a timeout is
    /// replayed again (its new records replace the old).
    pub retry_errors: bool,
    /// The part of the plan this process runs (the sessions are already chosen).
    pub shard: Option<super::Shard>,
    pub quiet: bool,
    /// The reversal's reference: the buffer this many events before the moment.
    pub reversal_events: usize,
    /// The plan file (absolute: a resumed run reads it again) and its sha256, for the
    /// manifest.
    pub plan: PathBuf,
    pub plan_hash: String,
}

/// The manifest of an edits run (`manifest.json`).
#[derive(Debug, Serialize)]
struct EditsManifest<'a> {
    kind: &'static str,
    typist_version: &'static str,
    plan: &'a Path,
    plan_hash: &'a str,
    sessions: usize,
    moments: usize,
    passes: u32,
    jobs: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    shard: Option<super::Shard>,
    reversal_events: usize,
    conditions: &'a RunConditions,
    assistants: Vec<serde_json::Value>,
    status: RunStatus,
    records: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

/// One unit: an assistant, a pass, a session.
#[derive(Debug, Clone, Copy)]
struct Unit {
    assistant: usize,
    pass: u32,
    session: usize,
}

struct Shared {
    editors: Editors,
    sessions: Vec<Session>,
    profiles: Vec<Profile>,
    cond: RunConditions,
    reversal_events: usize,
    queue: Mutex<VecDeque<Unit>>,
    cancel: Arc<AtomicBool>,
}

/// Runs every session of the plan against every assistant, writing `OUT/records.jsonl`
/// and `OUT/manifest.json`.
pub async fn run_edits(
    sessions: Vec<Session>,
    profiles: Vec<Profile>,
    cond: RunConditions,
    opts: &EditsOptions,
    cancel: Arc<AtomicBool>,
) -> Result<RunReport> {
    std::fs::create_dir_all(&opts.out)
        .with_context(|| format!("cannot create {}", opts.out.display()))?;
    let records_path = opts.out.join("records.jsonl");
    let manifest_path = opts.out.join("manifest.json");
    if records_path.exists() && !opts.resume {
        bail!(
            "{} already holds records: pass --resume to go on with them, or another --out",
            records_path.display()
        );
    }
    if records_path.exists() {
        cut_to_last_line(&records_path)?;
    }
    let done: BTreeSet<(String, String, u32)> = if records_path.exists() {
        read_edit_records(&records_path)?
            .into_iter()
            .filter(|r| !(opts.retry_errors && r.failed()))
            .map(|r| (r.case, r.assistant, r.pass))
            .collect()
    } else {
        BTreeSet::new()
    };
    let mut queue = VecDeque::new();
    for pass in 1..=opts.passes {
        for (a, p) in profiles.iter().enumerate() {
            for (i, s) in sessions.iter().enumerate() {
                let all_done = (0..s.moments.len())
                    .all(|m| done.contains(&(format!("{}#{m}", s.session), p.name.clone(), pass)));
                if !all_done {
                    queue.push_back(Unit {
                        assistant: a,
                        pass,
                        session: i,
                    });
                }
            }
        }
    }
    let moments: usize = sessions.iter().map(|s| s.moments.len()).sum();
    let todo = queue
        .iter()
        .map(|u| sessions[u.session].moments.len())
        .sum::<usize>();
    let manifest = |status, records, message| EditsManifest {
        kind: "edits",
        typist_version: env!("CARGO_PKG_VERSION"),
        plan: &opts.plan,
        plan_hash: &opts.plan_hash,
        sessions: sessions.len(),
        moments,
        passes: opts.passes,
        jobs: opts.jobs,
        shard: opts.shard,
        reversal_events: opts.reversal_events,
        conditions: &cond,
        assistants: profiles
            .iter()
            .map(|p| serde_json::json!({"name": p.name, "command": p.command, "args": p.args}))
            .collect(),
        status,
        records,
        message,
    };
    write_json(
        &manifest_path,
        &manifest(RunStatus::Running, done.len(), None),
    )?;

    let shared = Arc::new(Shared {
        editors: Editors::new(),
        sessions: sessions.clone(),
        profiles: profiles.clone(),
        cond: cond.clone(),
        reversal_events: opts.reversal_events,
        queue: Mutex::new(queue),
        cancel: cancel.clone(),
    });
    let (tx, mut rx) = mpsc::channel::<EditRecord>(256);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&records_path)
        .with_context(|| format!("cannot write {}", records_path.display()))?;
    let progress = super::progress::progress_bar(todo as u64, opts.quiet);
    let bar = progress.clone();
    let writer = tokio::task::spawn_blocking(move || -> Result<usize> {
        let mut w = file;
        let mut n = 0;
        while let Some(r) = rx.blocking_recv() {
            let mut line = serde_json::to_vec(&r)?;
            line.push(b'\n');
            w.write_all(&line)?;
            w.flush()?;
            n += 1;
            bar.inc(1);
        }
        Ok(n)
    });
    let mut tasks = Vec::new();
    for _ in 0..opts.jobs.max(1) {
        let shared = shared.clone();
        let tx = tx.clone();
        tasks.push(tokio::spawn(async move { worker(shared, tx).await }));
    }
    drop(tx);
    let mut failure = None;
    for t in tasks {
        match t.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => failure = failure.or(Some(format!("{e:#}"))),
            Err(e) => failure = failure.or(Some(format!("a worker panicked: {e}"))),
        }
    }
    shared.editors.close().await;
    let new_records = writer
        .await
        .map_err(|e| anyhow::anyhow!("record writer panicked: {e}"))??;
    progress.finish_and_clear();
    let total = finalize(&records_path)?;
    let status = match (&failure, cancel.load(Ordering::SeqCst)) {
        (Some(_), _) => RunStatus::Failed,
        (None, true) => RunStatus::Interrupted,
        (None, false) => RunStatus::Complete,
    };
    write_json(&manifest_path, &manifest(status, total, failure.clone()))?;
    Ok(RunReport {
        status,
        records: total,
        new_records,
        message: failure,
        server_start_seconds: 0.0,
    })
}

/// A records file cut short by a kill mid-write loses its unfinished last line before
/// anything is appended to it.
fn cut_to_last_line(path: &Path) -> Result<()> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        return Ok(());
    }
    let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    tracing::warn!(
        "{}: its last line was cut short ({} bytes); left out",
        path.display(),
        bytes.len() - keep
    );
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    f.set_len(keep as u64)
        .with_context(|| format!("cannot write {}", path.display()))
}

pub(super) fn write_json(path: &Path, v: &impl Serialize) -> Result<()> {
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(v)?)
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// Rewrites the records sorted by (session, moment, assistant, pass), one per key (the
/// last written wins), through a temporary file and a rename. Returns how many there are.
fn finalize(path: &Path) -> Result<usize> {
    write_sorted(path, read_edit_records(path)?)
}

/// Writes `records` to `path` sorted by (session, moment, assistant, pass), one per key
/// (the last given wins), through a temporary file and a rename. Returns how many.
pub(super) fn write_sorted(path: &Path, records: Vec<EditRecord>) -> Result<usize> {
    let mut by_key = BTreeMap::new();
    for r in records {
        by_key.insert(
            (r.session.clone(), r.moment, r.assistant.clone(), r.pass),
            r,
        );
    }
    let tmp = path.with_extension("jsonl.tmp");
    let mut w = std::io::BufWriter::new(
        std::fs::File::create(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?,
    );
    for r in by_key.values() {
        serde_json::to_writer(&mut w, r)?;
        w.write_all(b"\n")?;
    }
    w.flush()?;
    drop(w);
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(by_key.len())
}

async fn worker(shared: Arc<Shared>, tx: mpsc::Sender<EditRecord>) -> Result<()> {
    loop {
        if shared.cancel.load(Ordering::SeqCst) {
            return Ok(());
        }
        let Some(unit) = shared.queue.lock().ok().and_then(|mut q| q.pop_front()) else {
            return Ok(());
        };
        if let Err(e) = replay_session(&shared, unit, &tx).await {
            // The run stops: the other workers finish their unit and take no other.
            shared.cancel.store(true, Ordering::SeqCst);
            return Err(e);
        }
    }
}

/// The position of byte offset `at` of `text` in the session's encoding.
fn lsp_position(text: &str, pos: Pos, enc: crate::editor::PositionEncoding) -> Position {
    let at = offset(text, pos).unwrap_or(text.len());
    Document::position_of(text, at, enc)
}

/// Replays one session for one assistant and pass: every event, and at each moment the
/// next edit asked and recorded. A session that cannot start, or whose server is gone,
/// records its remaining moments as errors with the reason.
async fn replay_session(shared: &Shared, unit: Unit, tx: &mpsc::Sender<EditRecord>) -> Result<()> {
    let s = &shared.sessions[unit.session];
    let profile = &shared.profiles[unit.assistant];
    let opts = SessionOptions {
        contents: s
            .files
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        ..Default::default()
    };
    let mut editor = match EditorSession::start(
        &shared.editors,
        &shared.cond.app,
        profile,
        &shared.cond.editor,
        opts,
    )
    .await
    {
        Ok(e) => e,
        Err(e @ (SessionError::NotSignedIn { .. } | SessionError::Missing { .. })) => {
            // The assistant cannot run at all: the run stops with the reason, as a line
            // run does, rather than writing an error per moment.
            return Err(anyhow::anyhow!("{}: {e}", profile.name));
        }
        Err(e) => {
            for (m, moment) in s.moments.iter().enumerate() {
                let r = record(s, m, moment, profile, unit.pass, &shared.cond);
                send(tx, failed(r, &e)).await?;
            }
            return Ok(());
        }
    };
    let mut buffers = crate::dataset::edits::Buffers::new(&s.files);
    let mut opened = BTreeSet::new();
    let mut gone: Option<String> = None;
    // Each moment's truth: the buffers after `events[..until]`, once per distinct end.
    let truths = s.buffers_at(s.moments.iter().map(|m| m.until))?;
    let mut by_after: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (m, moment) in s.moments.iter().enumerate() {
        by_after.entry(moment.after).or_default().push(m);
    }
    // The buffers some events back, for the reversal's reference.
    let mut history: VecDeque<BTreeMap<String, String>> = VecDeque::new();
    // The last event made in the editor: its time in the session, and when it was made.
    let mut last_made: Option<(u64, tokio::time::Instant)> = None;
    for i in 0..=s.events.len() {
        for &m in by_after.get(&i).into_iter().flatten() {
            let moment = &s.moments[m];
            let mut r = record(s, m, moment, profile, unit.pass, &shared.cond);
            if let Some(why) = &gone {
                send(tx, failed_with(r, why.clone())).await?;
                continue;
            }
            if shared.cancel.load(Ordering::SeqCst) {
                editor.shutdown(crate::editor::options::SHUTDOWN_WAIT).await;
                return Ok(());
            }
            let now = buffers.files.get(&moment.file).cloned().unwrap_or_default();
            if opened.insert(moment.file.clone())
                && let Err(e) = editor.open(&moment.file, &now).await
            {
                gone = Some(format!("{e}"));
                send(tx, failed(r, &e)).await?;
                continue;
            }
            let enc = editor.encoding();
            let cursor = lsp_position(&now, moment.cursor, enc);
            let asked = editor.next_edit(&moment.file, cursor).await;
            r.request_hash = editor.last_request_hash().map(str::to_string);
            let earlier = history
                .front()
                .and_then(|b| b.get(&moment.file).cloned())
                .unwrap_or_else(|| s.files.get(&moment.file).cloned().unwrap_or_default());
            let truth = truths[&moment.until]
                .files
                .get(&moment.file)
                .cloned()
                .unwrap_or_default();
            let mut r = match asked {
                Ok(t) => {
                    r.latency_ms = shared.cond.latency.then_some(t.latency_ms);
                    answered(r, &now, &earlier, &truth, &t.value)
                }
                // Not signed in: the run stops, with no record (as for inline cases):
                // the assistant did not answer, and no answer of it can be scored.
                Err(e @ SessionError::NotSignedIn { .. }) => {
                    editor.shutdown(crate::editor::options::SHUTDOWN_WAIT).await;
                    return Err(anyhow::anyhow!("{}: {e}", profile.name));
                }
                Err(e) => {
                    if e.is_exit() {
                        gone = Some(format!("{e}"));
                    }
                    failed(r, &e)
                }
            };
            if gone.is_none()
                && let Some((typed, expected)) = inline_case(&now, moment.cursor, &truth)
            {
                let asked = editor.suggest_here(&moment.file, cursor).await;
                if let Err(e) = &asked
                    && e.is_exit()
                {
                    gone = Some(format!("{e}"));
                }
                r.inline = Some(inline_ask(
                    &now,
                    moment.cursor,
                    typed,
                    expected,
                    asked,
                    &shared.cond,
                ));
            }
            send(tx, r).await?;
        }
        let Some(event) = s.events.get(i) else { break };
        // The pace: a change or an opening waits its gap after the one made before
        // (the asks of a moment between them count in it).
        let made_in_editor = !matches!(
            event.what,
            EventKind::Cursor { .. } | EventKind::Save { .. }
        );
        if made_in_editor && gone.is_none() {
            if let Some((before, at)) = last_made
                && let Some(gap) = shared.cond.pace.gap(before, event.t)
                && !shared.cancel.load(Ordering::SeqCst)
            {
                tokio::time::sleep_until(at + gap).await;
            }
            last_made = Some((event.t, tokio::time::Instant::now()));
        }
        history.push_back(buffers.files.clone());
        if history.len() > shared.reversal_events.max(1) {
            history.pop_front();
        }
        match &event.what {
            EventKind::Insert { file, .. } | EventKind::Delete { file, .. } => {
                let was = buffers.files.get(file).cloned().unwrap_or_default();
                // The change exactly as the person made it: its range and its text.
                let (start, end, inserted) = match &event.what {
                    EventKind::Insert { at, text, .. } => {
                        let o = offset(&was, *at)?;
                        (o, o, text.as_str())
                    }
                    EventKind::Delete { from, to, .. } => {
                        (offset(&was, *from)?, offset(&was, *to)?, "")
                    }
                    _ => unreachable!("an insertion or a deletion"),
                };
                buffers.apply(&event.what)?;
                if gone.is_some() {
                    continue;
                }
                let text = buffers.files.get(file).cloned().unwrap_or_default();
                let done = if opened.insert(file.clone()) {
                    // First opened now, before this change: the text before it is
                    // opened, then changed, so the server sees the change as a change.
                    match editor.open(file, &was).await {
                        Ok(()) => editor.edit(file, start, end, inserted, &text).await,
                        Err(e) => Err(e),
                    }
                } else {
                    editor.edit(file, start, end, inserted, &text).await
                };
                if let Err(e) = done {
                    gone = Some(format!("{e}"));
                }
            }
            EventKind::Open { file, .. } => {
                buffers.apply(&event.what)?;
                if gone.is_none() && opened.insert(file.clone()) {
                    let text = buffers.files.get(file).cloned().unwrap_or_default();
                    if let Err(e) = editor.open(file, &text).await {
                        gone = Some(format!("{e}"));
                    }
                }
            }
            EventKind::Cursor { .. } | EventKind::Save { .. } => {}
        }
    }
    editor.shutdown(crate::editor::options::SHUTDOWN_WAIT).await;
    Ok(())
}

async fn send(tx: &mpsc::Sender<EditRecord>, r: EditRecord) -> Result<()> {
    tx.send(r)
        .await
        .map_err(|_| anyhow::anyhow!("the record writer stopped"))
}

/// A moment's record before it is asked.
fn record(
    s: &Session,
    m: usize,
    moment: &Moment,
    profile: &Profile,
    pass: u32,
    cond: &RunConditions,
) -> EditRecord {
    let cursor_line = moment.cursor[0];
    let jump = moment.next_file != moment.file
        || cursor_line + 1 < moment.next_lines[0]
        || cursor_line > moment.next_lines[1] + 1;
    EditRecord {
        case: format!("{}#{m}", s.session),
        session: s.session.clone(),
        moment: m as u32,
        repo: s.repo.clone(),
        file: moment.file.clone(),
        language: Language::of_path(Path::new(&moment.file))
            .map_or("", |l| l.name())
            .to_string(),
        assistant: profile.name.clone(),
        pass,
        kind: "next_edit".to_string(),
        outcome: Outcome::Empty,
        silence: moment.silence,
        jump,
        cursor: moment.cursor,
        next_file: moment.next_file.clone(),
        next_lines: moment.next_lines,
        edits: 0,
        elsewhere: 0,
        applies: None,
        window: None,
        inline: None,
        latency_ms: None.filter(|_: &f64| cond.latency),
        error: None,
        request_hash: None,
    }
}

fn failed(r: EditRecord, e: &SessionError) -> EditRecord {
    let mut r = failed_with(r, format!("{e}"));
    if e.is_timeout() {
        r.outcome = Outcome::Timeout;
    }
    r
}

fn failed_with(mut r: EditRecord, why: String) -> EditRecord {
    r.outcome = Outcome::Error;
    r.error = Some(crate::secrets::scrub(&why).into_owned());
    r
}

/// Where an inline suggestion is asked at a moment: the cursor at the end of its line's
/// text (only blanks after it), the lines above unchanged by the person's next edit,
/// and the cursor's line then going on from what is typed. Returns what is typed of the
/// line and the line as the person leaves it.
fn inline_case(now: &str, cursor: Pos, truth: &str) -> Option<(String, String)> {
    let c = offset(now, cursor).ok()?;
    let start = now[..c].rfind('\n').map_or(0, |i| i + 1);
    let end = now[c..].find('\n').map_or(now.len(), |i| c + i);
    if !now[c..end].trim().is_empty()
        || !truth.is_char_boundary(start)
        || truth.get(..start) != Some(&now[..start])
    {
        return None;
    }
    let t_end = truth[start..].find('\n').map_or(truth.len(), |i| start + i);
    let (typed, expected) = (&now[start..c], &truth[start..t_end]);
    (expected.starts_with(typed) && expected.trim_end().len() > typed.trim_end().len())
        .then(|| (typed.to_string(), expected.to_string()))
}

/// The inline ask of a moment from what the editor showed (as a line case's: the first
/// suggestion's line; the line unchanged or nothing shown is `empty`; a failure is an
/// `error` or `timeout`, never `empty`).
fn inline_ask(
    now: &str,
    cursor: Pos,
    typed: String,
    expected: String,
    asked: Result<crate::editor::Timed<crate::editor::Suggestions>, SessionError>,
    cond: &RunConditions,
) -> InlineAsk {
    let c = offset(now, cursor).unwrap_or(now.len());
    let start = now[..c].rfind('\n').map_or(0, |i| i + 1);
    let end = now[c..].find('\n').map_or(now.len(), |i| c + i);
    let current = &now[start..end];
    let mut a = InlineAsk {
        outcome: Outcome::Empty,
        typed,
        expected,
        predicted: None,
        latency_ms: None,
        error: None,
    };
    match asked {
        Ok(t) => {
            a.latency_ms = cond.latency.then_some(t.latency_ms);
            match &t.value {
                crate::editor::Suggestions::Inline(items) => {
                    if let Some(first) = items.first().filter(|f| f.text != current) {
                        a.outcome = Outcome::Suggestion;
                        a.predicted = Some(first.line.clone());
                    }
                }
                crate::editor::Suggestions::Completion(_) => {
                    a.outcome = Outcome::Error;
                    a.error =
                        Some("completion list where an inline suggestion was expected".into());
                }
            }
        }
        Err(e) if e.nothing_shown().is_some() => {}
        Err(e) => {
            a.outcome = if e.is_timeout() {
                Outcome::Timeout
            } else {
                Outcome::Error
            };
            a.error = Some(crate::secrets::scrub(&e.to_string()).into_owned());
        }
    }
    a
}

/// The buffer after `edits`, or `None` when they do not apply (a range beyond the text
/// or inside a character, or two edits overlapping).
pub fn apply_proposed(text: &str, edits: &[crate::editor::ProposedEdit]) -> Option<String> {
    let mut sorted: Vec<_> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.start, e.end));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for e in sorted {
        if e.start < at
            || e.start > e.end
            || e.end > text.len()
            || !text.is_char_boundary(e.start)
            || !text.is_char_boundary(e.end)
        {
            return None;
        }
        out.push_str(&text[at..e.start]);
        out.push_str(&e.text);
        at = e.end;
    }
    out.push_str(&text[at..]);
    Some(out)
}

/// A moment's record from the answer: the outcome, whether the edits apply, and the
/// window of the texts it is scored on.
fn answered(
    mut r: EditRecord,
    now: &str,
    earlier: &str,
    truth: &str,
    answer: &NextEdits,
) -> EditRecord {
    if answer.stale {
        return failed_with(
            r,
            "stale: the answer is for another version of the document".to_string(),
        );
    }
    r.edits = answer.edits.len();
    r.elsewhere = answer.elsewhere;
    let predicted = if answer.edits.is_empty() {
        None
    } else {
        let p = apply_proposed(now, &answer.edits);
        r.applies = Some(p.is_some());
        p
    };
    r.outcome = match &predicted {
        Some(p) if p == now => Outcome::Empty,
        None if answer.edits.is_empty() => Outcome::Empty,
        _ => Outcome::Suggestion,
    };
    let p = predicted.clone().unwrap_or_else(|| now.to_string());
    let (line, before, cut) = window(now, &[truth, earlier, &p]);
    let mut cut = cut.into_iter();
    let (truth_w, earlier_w, pred_w) = (
        cut.next().unwrap_or_default(),
        cut.next().unwrap_or_default(),
        cut.next().unwrap_or_default(),
    );
    r.window = Some(Window {
        line,
        earlier: earlier_w,
        before,
        truth: truth_w,
        predicted: predicted.map(|_| pred_w),
    });
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::editor::ProposedEdit;

    fn e(start: usize, end: usize, text: &str) -> ProposedEdit {
        ProposedEdit {
            start,
            end,
            text: text.into(),
        }
    }

    #[test]
    fn proposed_edits_apply_in_any_order_or_not_at_all() {
        let t = "def f(x):\n    return x\n";
        let a = apply_proposed(t, &[e(21, 22, "value"), e(6, 7, "value")]);
        assert_eq!(a.as_deref(), Some("def f(value):\n    return value\n"));
        assert_eq!(
            apply_proposed(t, &[e(6, 8, "a"), e(7, 9, "b")]),
            None,
            "overlap"
        );
        assert_eq!(apply_proposed(t, &[e(6, usize::MAX, "a")]), None, "beyond");
        assert_eq!(
            apply_proposed("é", &[e(1, 1, "a")]),
            None,
            "inside a character"
        );
        assert_eq!(apply_proposed(t, &[]).as_deref(), Some(t));
    }
}
