//! The records file of a run: one JSON line per case × assistant × pass, appended and
//! flushed as each is finished, then rewritten sorted when the run ends, so that its
//! bytes do not depend on the number of workers, the shard split or interruptions.
//!
//! On `--resume` the file is read back and a cut last line is dropped.

use std::collections::BTreeSet;
use std::io::{BufRead, Seek, Write};
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::dataset::token::TokenKind;
use crate::score::records::{Outcome, RecordKind};

/// A case's place in a run: (assistant, pass, case id); a resume skips the recorded ones.
pub type DoneKey = (String, u32, String);

/// One case's outcome for one assistant in one pass (the records format of
/// docs/records.md).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub case: String,
    pub repo: String,
    pub file: String,
    pub line: u32,
    pub language: String,
    pub assistant: String,
    pub pass: u32,
    pub outcome: Outcome,
    /// Characters of `expected` the user typed before asking (the typed prefix, k):
    /// they are the user's, never the assistant's help.
    #[serde(default)]
    pub typed: u32,
    pub expected: String,
    pub predicted: Option<String>,
    pub latency_ms: Option<f64>,
    /// The whole suggestion when it spans several lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_text: Option<String>,
    /// Why the case failed (outcome `error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How many suggestions the assistant offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<usize>,
    /// sha256 of the canonical request (method, parameters without ids, versions or the
    /// temporary folder, and the document's text): equal hashes, equal questions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_hash: Option<String>,
    /// sha256 of the normalized answer (outcomes `suggestion` and `empty`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_hash: Option<String>,
    /// Block cases (methodology §9): the expected block, its lines joined by `\n` (the
    /// first is `expected`); the suggestion's whole text is `predicted_text` (or
    /// `predicted` when it is one line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_block: Option<String>,
    /// `completion` for a completion-list record (a token case); absent for lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<RecordKind>,
    /// Completion records: what the token is (`member`, `call`, `name`, `import`, `type`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_kind: Option<TokenKind>,
    /// Completion records: characters of the token typed before the list was ranked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_len: Option<u32>,
    /// Completion records: the expected token's 1-based place in the list as an editor
    /// shows it, `null` when absent from it (`Some(None)`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub rank: Option<Option<u32>>,
    /// Completion records: items in the server's answer before filtering (`items` is
    /// the list after filtering by the typed prefix).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listed: Option<usize>,
    /// Completion records: the inserted texts of every item shown, in the order shown
    /// (records written before the whole list was kept hold the first 20; with `typist
    /// run --list-cap N`, the first N).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top: Option<Vec<String>>,
    /// Completion records cut by `typist run --list-cap N`: N, when the list shown had
    /// more items than `top` keeps (`items` is the whole list's count, `rank` the whole
    /// list's place); absent when `top` is the whole list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_cap: Option<u32>,
    /// The real editor the case was typed into (`neovim`); absent for typist's own
    /// client, so its records keep their bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editor: Option<String>,
    /// Why an `empty` is empty when no answer said so: a plugin showed nothing within
    /// the display deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// That editor's version (`0.12.0-dev-fbb1caf`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editor_version: Option<String>,
    /// Golf runs (methodology §10, `--golf`): the line played key by key; the record's
    /// other fields are the first request's (nothing of the line typed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub golf: Option<super::golf::GolfTally>,
    /// Fields this version does not know (written by another kind of run or a later
    /// version): kept as they are by resume, merge and the final sort.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Record {
    /// The sort order of a records file: the case id last, for the several token
    /// cases of a line (a line case is alone on its line).
    pub fn key(&self) -> (String, u32, String, String, u32, String) {
        (
            self.assistant.clone(),
            self.pass,
            self.repo.clone(),
            self.file.clone(),
            self.line,
            self.case.clone(),
        )
    }
    /// Identity for resuming: (assistant, pass, case).
    pub fn done_key(&self) -> DoneKey {
        (self.assistant.clone(), self.pass, self.case.clone())
    }
}

/// A field that is there (`Some`, possibly null) or not (`None`, by `default`).
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// Reads a records file written by a run, tolerating a cut last line (a killed run):
/// the cut line is dropped and the file truncated to its last complete record.
/// Returns the records and how many bytes were dropped.
pub fn read_for_resume(path: &Path) -> Result<(Vec<Record>, u64)> {
    if !path.exists() {
        return Ok((Vec::new(), 0));
    }
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let mut records = Vec::new();
    let mut good_len = 0u64;
    let mut reader = std::io::BufReader::new(&mut f);
    let mut line = Vec::new();
    let mut n = 0;
    loop {
        line.clear();
        let read = reader
            .read_until(b'\n', &mut line)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if read == 0 {
            break;
        }
        n += 1;
        if line.last() != Some(&b'\n') {
            break; // cut by a kill: dropped
        }
        match serde_json::from_slice::<Record>(line.trim_ascii_end()) {
            Ok(r) => {
                records.push(r);
                good_len += read as u64;
            }
            Err(e) => {
                anyhow::bail!("{}:{n}: malformed record: {e}", path.display());
            }
        }
    }
    let total = f
        .seek(std::io::SeekFrom::End(0))
        .with_context(|| format!("cannot read {}", path.display()))?;
    if total > good_len {
        f.set_len(good_len)
            .with_context(|| format!("cannot drop the cut last line of {}", path.display()))?;
    }
    Ok((records, total - good_len))
}

/// Every complete record of a file, read-only (a cut last line is left out).
pub fn read_all(path: &Path) -> Result<Vec<Record>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if !line.ends_with('\n') {
            break;
        }
        out.push(
            serde_json::from_str(line.trim_end())
                .with_context(|| format!("{}:{}: malformed record", path.display(), i + 1))?,
        );
    }
    Ok(out)
}

/// Rewrites the records file sorted by (assistant, pass, repo, file, line), keeping one
/// record per (assistant, pass, case), the one written last (a retried case's new
/// record replaces the failed one), atomically.
pub fn finalize(path: &Path) -> Result<usize> {
    let (mut records, _) = read_for_resume(path)?;
    records.reverse();
    records.sort_by_key(|a| a.key());
    let mut seen = BTreeSet::new();
    records.retain(|r| seen.insert(r.done_key()));
    write_sorted(path, &records)?;
    Ok(records.len())
}

pub fn write_sorted(path: &Path, records: &[Record]) -> Result<()> {
    let tmp = path.with_extension("jsonl.tmp");
    {
        let mut w = std::io::BufWriter::new(
            std::fs::File::create(&tmp)
                .with_context(|| format!("cannot write {}", tmp.display()))?,
        );
        let written = (|| -> std::io::Result<()> {
            for r in records {
                serde_json::to_writer(&mut w, r)?;
                w.write_all(b"\n")?;
            }
            w.flush()?;
            w.get_ref().sync_all()
        })();
        written.with_context(|| format!("cannot write {}", tmp.display()))?;
    }
    std::fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}

/// Held while a record is appended; [`freeze_appends`] takes it for good.
static APPENDING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// No record is appended from now on by this process (a second Ctrl-C, before the
/// process exits): waits for a record being written to be whole.
pub fn freeze_appends() {
    let guard = APPENDING.lock().unwrap_or_else(|e| e.into_inner());
    std::mem::forget(guard);
}

/// Appends records one by one, flushing each: a crash loses at most the line being
/// written, which resume drops.
pub struct Sink {
    file: std::fs::File,
    path: std::path::PathBuf,
}

impl Sink {
    pub fn open(path: &Path) -> Result<Sink> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot append to {}", path.display()))?;
        Ok(Sink {
            file,
            path: path.to_path_buf(),
        })
    }
    pub fn write(&mut self, r: &Record) -> Result<()> {
        let mut line = serde_json::to_vec(r)?;
        line.push(b'\n');
        let _appending = APPENDING.lock().unwrap_or_else(|e| e.into_inner());
        self.file
            .write_all(&line)
            .and_then(|_| self.file.flush())
            .with_context(|| format!("cannot append a record to {}", self.path.display()))
    }
}
