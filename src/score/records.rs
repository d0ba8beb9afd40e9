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

use super::distance::distances;

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
    /// Characters of the expected line the user typed before asking (k): the case's
    /// weight is `len − typed`, and a line no longer than k is not a case.
    pub typed: u32,
    /// The file the case is in, within its repository (the record's `file`, else the case
    /// id up to its last ':'): with `repo`, the bootstrap's unit when there are too few
    /// repositories.
    pub file: u32,
    /// The error message of an `error` record, an index into [`Table::errors`];
    /// `u32::MAX` when none.
    pub error: u32,
    /// The first 64 bits of `request_hash` and `response_hash`; 0 when absent.
    pub request: u64,
    pub response: u64,
}

impl Row {
    /// The characters the assistant could type for the user: `len − typed`.
    pub fn weight(&self) -> u32 {
        self.len.saturating_sub(self.typed)
    }
    /// A line-level record whose line is longer than what the user typed (records of
    /// lines no longer than the typed prefix are not cases).
    pub fn is_case(&self) -> bool {
        self.completion || self.len > self.typed
    }
}

/// Every record read, with interned names.
#[derive(Debug, Default)]
pub struct Table {
    pub rows: Vec<Row>,
    pub cases: Vec<String>,
    pub repos: Vec<String>,
    pub languages: Vec<String>,
    pub assistants: Vec<String>,
    /// Files (see [`Row::file`]).
    pub files: Vec<String>,
    /// Distinct error messages.
    pub errors: Vec<String>,
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
    file: Option<Cow<'a, str>>,
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
    #[serde(default)]
    typed: Option<u32>,
    #[serde(borrow, default)]
    error: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    request_hash: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    response_hash: Option<Cow<'a, str>>,
}

/// The first 64 bits of a hex digest; 0 when absent or not hex.
fn hash_prefix(h: Option<&str>) -> u64 {
    h.and_then(|h| h.get(..16))
        .and_then(|p| u64::from_str_radix(p, 16).ok())
        .unwrap_or(0)
}

/// Names interned per block: case, repo, language, assistant, file, error.
const NAMES: usize = 6;

/// Interned names in one string arena: no allocation per name, each hash computed
/// once (and handed from a block's table to the global one).
#[derive(Default)]
pub(crate) struct NameTable {
    arena: String,
    /// (offset, length, hash) of each name, by id.
    spans: Vec<(u32, u32, u64)>,
    index: hashbrown::HashTable<u32>,
    /// The previous lookup's id: consecutive records mostly share a repository, a
    /// language and (one per assistant) a case.
    last: Option<u32>,
}

fn hash_name(s: &str) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault};
    BuildHasherDefault::<rustc_hash::FxHasher>::default().hash_one(s)
}

impl NameTable {
    fn get(&self, i: u32) -> &str {
        let (o, n, _) = self.spans[i as usize];
        &self.arena[o as usize..(o + n) as usize]
    }

    fn id(&mut self, s: &str) -> u32 {
        if let Some(l) = self.last
            && self.get(l) == s
        {
            return l;
        }
        let i = self.id_hashed(s, hash_name(s));
        self.last = Some(i);
        i
    }

    fn id_hashed(&mut self, s: &str, h: u64) -> u32 {
        let (arena, spans) = (&self.arena, &self.spans);
        let get = |i: u32| {
            let (o, n, _) = spans[i as usize];
            &arena[o as usize..(o + n) as usize]
        };
        if let Some(&i) = self.index.find(h, |&i| get(i) == s) {
            return i;
        }
        let i = self.spans.len() as u32;
        self.spans
            .push((self.arena.len() as u32, s.len() as u32, h));
        self.arena.push_str(s);
        let spans = &self.spans;
        self.index.insert_unique(h, i, |&j| spans[j as usize].2);
        i
    }

    fn len(&self) -> usize {
        self.spans.len()
    }

    fn into_strings(self) -> Vec<String> {
        (0..self.spans.len() as u32)
            .map(|i| self.get(i).to_string())
            .collect()
    }
}

struct Block {
    seq: u64,
    /// Lines in the chunk (problems' line numbers count from the chunk's start).
    lines: u64,
    /// case, repo, language, assistant, file, error
    names: [NameTable; NAMES],
    rows: Vec<Row>,
    problems: Vec<(u64, String)>,
    file: usize,
    /// The chunk's buffer, handed back to the reader for reuse.
    buffer: Vec<u8>,
}

struct Chunk {
    seq: u64,
    file: usize,
    data: Vec<u8>,
    /// The file's last chunk, which may end without a newline.
    last: bool,
}

const CHUNK: usize = 4 << 20;

fn parse_chunk(c: Chunk) -> Block {
    let mut names: [NameTable; NAMES] = Default::default();
    // Records are ~300 bytes.
    let mut rows = Vec::with_capacity(c.data.len() / 200);
    let mut problems = Vec::new();
    // Line numbers are local to the chunk here; the main thread adds the chunk's start.
    let mut line_no = 0u64;
    let data = &c.data[..];
    // Validate UTF-8 once for the chunk, so the JSON parser need not per string.
    let whole_utf8 = std::str::from_utf8(data).is_ok();
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
        let parsed = if whole_utf8 {
            // SAFETY: the whole chunk is valid UTF-8 and lines are cut at b'\n', which
            // is never inside a multi-byte sequence.
            parse_line(unsafe { std::str::from_utf8_unchecked(line) }, &mut names)
        } else {
            std::str::from_utf8(line)
                .map_err(|e| format!("invalid UTF-8: {e}"))
                .and_then(|l| parse_line(l, &mut names))
        };
        match parsed {
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
    let mut buffer = c.data;
    buffer.clear();
    Block {
        lines: line_no,
        seq: c.seq,
        names,
        rows,
        problems,
        file: c.file,
        buffer,
    }
}

use memchr::memchr;

fn parse_line(line: &str, names: &mut [NameTable; NAMES]) -> Result<Row, String> {
    let raw: Raw = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let outcome =
        Outcome::parse(&raw.outcome).ok_or_else(|| format!("unknown outcome {:?}", raw.outcome))?;
    let completion = raw.kind.as_deref() == Some("completion");
    let expected = &*raw.expected;
    let len = expected.chars().count();
    let (d2, d1) = match (outcome, raw.predicted.as_deref()) {
        (Outcome::Suggestion, Some(p)) if !completion => distances(expected, p),
        (Outcome::Suggestion, None) if !completion => (len, len),
        _ => (len, len),
    };
    let file = match raw.file.as_deref() {
        Some(f) => f,
        None => raw.case.rsplit_once(':').map_or(&*raw.case, |(f, _)| f),
    };
    let file = names[4].id(file);
    let error = match (outcome, raw.error.as_deref()) {
        (Outcome::Error, Some(m)) => names[5].id(m),
        (Outcome::Error, None) => names[5].id("(no message)"),
        _ => u32::MAX,
    };
    Ok(Row {
        case: names[0].id(&raw.case),
        repo: names[1].id(&raw.repo),
        language: names[2].id(raw.language.as_deref().unwrap_or("unknown")),
        assistant: names[3].id(&raw.assistant),
        pass: raw.pass.unwrap_or(1),
        outcome,
        len: len as u32,
        ld2: d2 as u32,
        ld1: d1 as u32,
        latency_ms: raw.latency_ms.unwrap_or(f64::NAN),
        completion,
        prefix_len: raw.prefix_len.unwrap_or(u32::MAX),
        rank: raw.rank.unwrap_or(0),
        typed: raw.typed.unwrap_or(0),
        file,
        error,
        request: hash_prefix(raw.request_hash.as_deref()),
        response: hash_prefix(raw.response_hash.as_deref()),
    })
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
    // Emptied chunk buffers go back to the reader: no 4 MB allocation per chunk.
    let (free_tx, free_rx) = mpsc::channel::<Vec<u8>>();
    let mut interners: [NameTable; NAMES] = Default::default();
    let mut table = Table::default();
    // Reserve for ~1 row per 128 bytes: capacity that is never written costs no memory,
    // and the table does not move while it grows.
    let bytes: u64 = paths
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    table.rows.reserve((bytes / 128).min(1 << 28) as usize);
    let mut fatal: Option<String> = None;

    std::thread::scope(|scope| -> anyhow::Result<()> {
        let reader = std::thread::Builder::new()
            .name("typist-read".into())
            .spawn_scoped(scope, move || -> anyhow::Result<()> {
                let mut seq = 0;
                for (fi, path) in paths.iter().enumerate() {
                    read_file(path, fi, &mut seq, &chunk_tx, &free_rx)?;
                }
                Ok(())
            })?;
        for _ in 0..threads {
            let rx = chunk_rx.clone();
            let tx = block_tx.clone();
            std::thread::Builder::new()
                .name("typist-parse".into())
                .spawn_scoped(scope, move || {
                    loop {
                        let next = rx.lock().ok().and_then(|r| r.recv().ok());
                        let Some(c) = next else { return };
                        if tx.send(parse_chunk(c)).is_err() {
                            return;
                        }
                    }
                })?;
        }
        drop(block_tx);
        // Blocks arrive in any order; names are interned as they come (ids do not
        // reach the output, which is keyed by name), problems are sorted at the end.
        // (seq, file, lines) of every chunk, and problems as (seq, local line, message).
        let mut chunk_lines: Vec<(u64, usize, u64)> = Vec::new();
        let mut local_problems: Vec<(u64, u64, String)> = Vec::new();
        for block in block_rx {
            chunk_lines.push((block.seq, block.file, block.lines));
            local_problems.extend(block.problems.into_iter().map(|(l, m)| (block.seq, l, m)));
            let _ = free_tx.send(block.buffer);
            let global: Vec<Vec<u32>> = block
                .names
                .iter()
                .zip(interners.iter_mut())
                .map(|(local, global)| {
                    (0..local.len() as u32)
                        .map(|i| global.id_hashed(local.get(i), local.spans[i as usize].2))
                        .collect()
                })
                .collect();
            table.rows.extend(block.rows.into_iter().map(|mut row| {
                row.case = global[0][row.case as usize];
                row.repo = global[1][row.repo as usize];
                row.language = global[2][row.language as usize];
                row.assistant = global[3][row.assistant as usize];
                row.file = global[4][row.file as usize];
                if row.error != u32::MAX {
                    row.error = global[5][row.error as usize];
                }
                row
            }));
        }
        reader
            .join()
            .map_err(|_| anyhow::anyhow!("records reader panicked"))??;
        // Each chunk's first line number: 1 + the lines of the file's earlier chunks.
        chunk_lines.sort_unstable();
        let mut start_of: FxHashMap<u64, (usize, u64)> = FxHashMap::default();
        let mut next_line: FxHashMap<usize, u64> = FxHashMap::default();
        for (seq, file, lines) in chunk_lines {
            let start = next_line.entry(file).or_insert(1);
            start_of.insert(seq, (file, *start));
            *start += lines;
        }
        let mut problems: Vec<(usize, u64, String)> = local_problems
            .into_iter()
            .map(|(seq, l, m)| {
                let (file, start) = start_of.get(&seq).copied().unwrap_or((0, 1));
                (file, start + l, m)
            })
            .collect();
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
    let [cases, repos, languages, assistants, files, errors] =
        interners.map(NameTable::into_strings);
    table.files = files;
    table.errors = errors;
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
    free: &mpsc::Receiver<Vec<u8>>,
) -> anyhow::Result<()> {
    use anyhow::Context;
    let mut f = std::fs::File::open(path)
        .with_context(|| format!("cannot open records file {}", path.display()))?;
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let mut buf = free.try_recv().unwrap_or_default();
        buf.extend_from_slice(&carry);
        carry.clear();
        buf.reserve(CHUNK);
        // read_to_end on a bounded reader appends without zeroing the buffer first.
        let n = (&mut f)
            .take(CHUNK as u64)
            .read_to_end(&mut buf)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let eof = n < CHUNK;
        if !eof {
            // Cut at the last newline; the rest starts the next chunk.
            match memchr::memrchr(b'\n', &buf) {
                Some(i) => carry.extend_from_slice(&buf[i + 1..]),
                None => {
                    // One line longer than a chunk: keep reading it whole.
                    carry = buf;
                    continue;
                }
            }
            let keep = buf.len() - carry.len();
            buf.truncate(keep);
        }
        let chunk = Chunk {
            seq: *seq,
            file,
            data: buf,
            last: eof,
        };
        *seq += 1;
        if tx.send(chunk).is_err() || eof {
            return Ok(());
        }
    }
}
