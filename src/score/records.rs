//! Reading records files (JSON Lines, one object per case × assistant × pass) into a
//! compact table, fast: files are read in chunks cut at line ends, chunks are parsed on
//! every core with borrowed strings, distances are computed where the line is parsed,
//! and only small fixed-size rows plus interned names are kept. Malformed lines are
//! reported with file and line number; `strict` makes the first one fatal.

use std::borrow::Cow;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};

use rustc_hash::FxHashMap;
use serde::Deserialize;

use super::distance::{ld1, ld2};

/// What a case yielded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Outcome {
    Suggestion = 0,
    Empty = 1,
    Error = 2,
    Timeout = 3,
}

impl Outcome {
    pub fn parse(s: &str) -> Option<Outcome> {
        Some(match s {
            "suggestion" => Outcome::Suggestion,
            "empty" => Outcome::Empty,
            "error" => Outcome::Error,
            "timeout" => Outcome::Timeout,
            _ => return None,
        })
    }
    /// Suggestion or empty: the assistant answered.
    pub fn answered(self) -> bool {
        matches!(self, Outcome::Suggestion | Outcome::Empty)
    }
}

/// One record reduced to what scoring needs. Names are indices into [`Table`]'s lists.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    pub case: u32,
    pub repo: u32,
    pub language: u32,
    pub assistant: u32,
    pub pass: u32,
    pub outcome: Outcome,
    /// Length of the expected line in characters.
    pub len: u32,
    /// `ld2(expected, predicted)`; for an empty suggestion, `len` (nothing typed).
    pub ld2: u32,
    pub ld1: u32,
    /// NaN when absent.
    pub latency_ms: f64,
    /// A completion-list record.
    pub completion: bool,
    /// Completion records: typed prefix length, `u32::MAX` when absent.
    pub prefix_len: u32,
    /// Completion records: 1-based rank of the expected item, 0 when absent.
    pub rank: u32,
}

/// Every record read, with interned names.
#[derive(Debug, Default)]
pub struct Table {
    pub rows: Vec<Row>,
    pub cases: Vec<String>,
    pub repos: Vec<String>,
    pub languages: Vec<String>,
    pub assistants: Vec<String>,
    /// Lines skipped as malformed (non-strict mode).
    pub skipped: u64,
    /// The first few problems, `file:line: message`.
    pub problems: Vec<String>,
}

/// Keep at most this many problem messages.
pub const MAX_PROBLEMS: usize = 20;

#[derive(Deserialize)]
struct Raw<'a> {
    #[serde(borrow)]
    case: Cow<'a, str>,
    #[serde(borrow)]
    repo: Cow<'a, str>,
    #[serde(borrow, default)]
    language: Option<Cow<'a, str>>,
    #[serde(borrow)]
    assistant: Cow<'a, str>,
    #[serde(default)]
    pass: Option<u32>,
    #[serde(borrow)]
    outcome: Cow<'a, str>,
    #[serde(borrow)]
    expected: Cow<'a, str>,
    #[serde(borrow, default)]
    predicted: Option<Cow<'a, str>>,
    #[serde(default)]
    latency_ms: Option<f64>,
    #[serde(borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(default)]
    prefix_len: Option<u32>,
    #[serde(default)]
    rank: Option<u32>,
}

/// A parsed row whose names are still spans into the block's string arena.
struct RawRow {
    names: [(u32, u32); 4], // case, repo, language, assistant
    row: Row,
}

struct Block {
    seq: u64,
    arena: String,
    rows: Vec<RawRow>,
    problems: Vec<(u64, String)>,
    file: usize,
}

struct Chunk {
    seq: u64,
    file: usize,
    first_line: u64,
    data: Vec<u8>,
    /// The file's last chunk, which may end without a newline.
    last: bool,
}

const CHUNK: usize = 4 << 20;

fn parse_chunk(c: Chunk) -> Block {
    let mut arena = String::new();
    let mut rows = Vec::new();
    let mut problems = Vec::new();
    let mut line_no = c.first_line;
    let data = &c.data[..];
    let mut start = 0;
    while start < data.len() {
        let end = memchr(b'\n', &data[start..]).map_or(data.len(), |i| start + i);
        let line = &data[start..end];
        let truncated = end == data.len() && c.last && !data.ends_with(b"\n");
        start = end + 1;
        let this_line = line_no;
        line_no += 1;
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        match parse_line(line, &mut arena) {
            Ok(r) => rows.push(r),
            Err(msg) => {
                let msg = if truncated {
                    format!("truncated last line ({msg})")
                } else {
                    msg
                };
                problems.push((this_line, msg));
            }
        }
    }
    Block {
        seq: c.seq,
        arena,
        rows,
        problems,
        file: c.file,
    }
}

fn memchr(n: u8, h: &[u8]) -> Option<usize> {
    h.iter().position(|&b| b == n)
}

fn span(arena: &mut String, s: &str) -> (u32, u32) {
    let a = arena.len() as u32;
    arena.push_str(s);
    (a, s.len() as u32)
}

fn parse_line(line: &[u8], arena: &mut String) -> Result<RawRow, String> {
    let raw: Raw = serde_json::from_slice(line).map_err(|e| e.to_string())?;
    let outcome =
        Outcome::parse(&raw.outcome).ok_or_else(|| format!("unknown outcome {:?}", raw.outcome))?;
    let completion = raw.kind.as_deref() == Some("completion");
    let expected = &*raw.expected;
    let len = expected.chars().count();
    let (d2, d1) = match (outcome, raw.predicted.as_deref()) {
        (Outcome::Suggestion, Some(p)) if !completion => (ld2(expected, p), ld1(expected, p)),
        (Outcome::Suggestion, None) if !completion => (len, len),
        _ => (len, len),
    };
    let names = [
        span(arena, &raw.case),
        span(arena, &raw.repo),
        span(arena, raw.language.as_deref().unwrap_or("unknown")),
        span(arena, &raw.assistant),
    ];
    Ok(RawRow {
        names,
        row: Row {
            case: 0,
            repo: 0,
            language: 0,
            assistant: 0,
            pass: raw.pass.unwrap_or(1),
            outcome,
            len: len as u32,
            ld2: d2 as u32,
            ld1: d1 as u32,
            latency_ms: raw.latency_ms.unwrap_or(f64::NAN),
            completion,
            prefix_len: raw.prefix_len.unwrap_or(u32::MAX),
            rank: raw.rank.unwrap_or(0),
        },
    })
}

#[derive(Default)]
struct Interner {
    map: FxHashMap<String, u32>,
    names: Vec<String>,
}

impl Interner {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.map.get(s) {
            return i;
        }
        let i = self.names.len() as u32;
        self.map.insert(s.to_string(), i);
        self.names.push(s.to_string());
        i
    }
}

/// Reads every file; `threads` parse in parallel (0 = every core).
pub fn read_records(paths: &[PathBuf], strict: bool, threads: usize) -> anyhow::Result<Table> {
    let threads = if threads == 0 {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    } else {
        threads
    };
    let (chunk_tx, chunk_rx) = mpsc::sync_channel::<Chunk>(threads * 2);
    let chunk_rx = Arc::new(Mutex::new(chunk_rx));
    let (block_tx, block_rx) = mpsc::sync_channel::<Block>(threads * 2);
    let mut interners: [Interner; 4] = Default::default();
    let mut table = Table::default();
    let mut fatal: Option<String> = None;

    std::thread::scope(|scope| -> anyhow::Result<()> {
        let reader = scope.spawn(move || -> anyhow::Result<()> {
            let mut seq = 0;
            for (fi, path) in paths.iter().enumerate() {
                read_file(path, fi, &mut seq, &chunk_tx)?;
            }
            Ok(())
        });
        for _ in 0..threads {
            let rx = chunk_rx.clone();
            let tx = block_tx.clone();
            scope.spawn(move || {
                loop {
                    let next = rx.lock().ok().and_then(|r| r.recv().ok());
                    let Some(c) = next else { return };
                    if tx.send(parse_chunk(c)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(block_tx);
        // Blocks arrive in any order; names are interned as they come (ids do not
        // reach the output, which is keyed by name), problems are sorted at the end.
        let mut problems: Vec<(usize, u64, String)> = Vec::new();
        for block in block_rx {
            for (line, msg) in &block.problems {
                problems.push((block.file, *line, msg.clone()));
            }
            let _ = block.seq;
            for rr in block.rows {
                let mut row = rr.row;
                let name = |i: usize| {
                    let (a, n) = rr.names[i];
                    &block.arena[a as usize..(a + n) as usize]
                };
                row.case = interners[0].id(name(0));
                row.repo = interners[1].id(name(1));
                row.language = interners[2].id(name(2));
                row.assistant = interners[3].id(name(3));
                table.rows.push(row);
            }
        }
        reader
            .join()
            .map_err(|_| anyhow::anyhow!("records reader panicked"))??;
        problems.sort();
        table.skipped = problems.len() as u64;
        if strict && let Some((f, line, msg)) = problems.first() {
            fatal = Some(format!("{}:{}: {}", paths[*f].display(), line, msg));
        }
        table.problems = problems
            .iter()
            .take(MAX_PROBLEMS)
            .map(|(f, line, msg)| format!("{}:{}: {}", paths[*f].display(), line, msg))
            .collect();
        Ok(())
    })?;
    if let Some(f) = fatal {
        anyhow::bail!("malformed record at {f}");
    }
    let [cases, repos, languages, assistants] = interners.map(|i| i.names);
    table.cases = cases;
    table.repos = repos;
    table.languages = languages;
    table.assistants = assistants;
    Ok(table)
}

fn read_file(
    path: &Path,
    file: usize,
    seq: &mut u64,
    tx: &mpsc::SyncSender<Chunk>,
) -> anyhow::Result<()> {
    use anyhow::Context;
    let mut f = std::fs::File::open(path)
        .with_context(|| format!("cannot open records file {}", path.display()))?;
    let mut carry: Vec<u8> = Vec::new();
    let mut line = 1u64;
    loop {
        let mut buf = std::mem::take(&mut carry);
        let have = buf.len();
        buf.resize(have + CHUNK, 0);
        let mut filled = have;
        // Fill the buffer (short reads are normal).
        while filled < buf.len() {
            let n = f
                .read(&mut buf[filled..])
                .with_context(|| format!("cannot read {}", path.display()))?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        buf.truncate(filled);
        let eof = filled < have + CHUNK;
        if !eof {
            // Cut at the last newline; the rest starts the next chunk.
            match buf.iter().rposition(|&b| b == b'\n') {
                Some(i) => carry = buf.split_off(i + 1),
                None => {
                    // One line longer than a chunk: keep reading it whole.
                    carry = buf;
                    continue;
                }
            }
        }
        let lines = buf.iter().filter(|&&b| b == b'\n').count() as u64;
        let chunk = Chunk {
            seq: *seq,
            file,
            first_line: line,
            data: buf,
            last: eof,
        };
        *seq += 1;
        line += lines;
        if tx.send(chunk).is_err() || eof {
            return Ok(());
        }
    }
}
