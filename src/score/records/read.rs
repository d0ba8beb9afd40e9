//! The reading pipeline: one thread reads files in chunks cut at newlines, parsing
//! threads turn chunks into blocks, and the calling thread merges blocks into the table
//! (names interned globally, problems numbered by file and line).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::{Scope, ScopedJoinHandle};

use rustc_hash::FxHashMap;

use super::names::{CaseTable, NameTable, PlaceTable};
use super::parse::{Block, CHUNK, Chunk, NAMES, parse_chunk};
use super::{MAX_PROBLEMS, Place, Table};
use crate::score::pairs::{self, Pair};

/// Reads every file; `threads` parse in parallel (0 = every core).
pub fn read_records(paths: &[PathBuf], strict: bool, threads: usize) -> anyhow::Result<Table> {
    read(paths, strict, threads, false, &[]).map(|(table, _)| table)
}

/// [`read_records`] with each file's assistants as arms of their own: assistant `a` of
/// file `i` is read as `labels[i]/a` (two runs of the same assistants, compared).
pub fn read_records_labelled(
    paths: &[PathBuf],
    labels: &[String],
    strict: bool,
    threads: usize,
) -> anyhow::Result<Table> {
    anyhow::ensure!(paths.len() == labels.len(), "one label per records file");
    read(paths, strict, threads, false, labels).map(|(table, _)| table)
}

/// [`read_records`], and from the same parse the line-level records as pairs (malformed
/// lines skipped), sorted by assistant, pass, repository, file, line and case. A file
/// that is not all UTF-8 gives no pairs: an error.
pub fn read_records_and_pairs(
    paths: &[PathBuf],
    strict: bool,
    threads: usize,
) -> anyhow::Result<(Table, Vec<Pair>)> {
    read(paths, strict, threads, true, &[])
}

/// [`read_records_labelled`] and [`read_records_and_pairs`] in one parse: the pairs'
/// assistants are `label/name` too.
pub fn read_records_labelled_and_pairs(
    paths: &[PathBuf],
    labels: &[String],
    threads: usize,
) -> anyhow::Result<(Table, Vec<Pair>)> {
    anyhow::ensure!(paths.len() == labels.len(), "one label per records file");
    read(paths, false, threads, true, labels)
}

/// `labels`: empty, or one per file (assistant names read as `label/name`).
fn read(
    paths: &[PathBuf],
    strict: bool,
    threads: usize,
    want_pairs: bool,
    labels: &[String],
) -> anyhow::Result<(Table, Vec<Pair>)> {
    let threads = if threads == 0 {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    } else {
        threads
    };
    let mut merged = Merged::new(paths, want_pairs);
    merged.labels = labels.to_vec();
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let (blocks, reader) = spawn(scope, paths, threads, want_pairs)?;
        for block in blocks {
            merged.add(block);
        }
        reader
            .join()
            .map_err(|_| anyhow::anyhow!("records reader panicked"))?
    })?;
    let (mut table, pairs) = merged.finish(paths, strict)?;
    if labels.is_empty() {
        table.checks = crate::score::checks_file::read_beside(paths)?;
        table.tests = crate::score::tests_file::read_beside(paths)?;
    } else {
        for (path, label) in paths.iter().zip(labels) {
            let one = std::slice::from_ref(path);
            let checks = crate::score::checks_file::read_beside(one)?;
            table.checks.extend(checks.into_iter().map(|mut c| {
                c.assistant = format!("{label}/{}", c.assistant);
                c
            }));
            let tests = crate::score::tests_file::read_beside(one)?;
            table.tests.extend(tests.into_iter().map(|mut t| {
                t.assistant = format!("{label}/{}", t.assistant);
                t
            }));
        }
    }
    Ok((table, pairs))
}

/// The assistant names' index among a block's names.
const ASSISTANT: usize = 2;

/// The pipeline's ends: blocks out, the reader's result.
type Pipeline<'scope> = (
    mpsc::Receiver<Block>,
    ScopedJoinHandle<'scope, anyhow::Result<()>>,
);

/// Starts the reader and the parsing threads; blocks arrive in any order on the
/// receiver. A parsing thread hands each chunk's buffer back to the reader as soon as
/// it has parsed it (no 4 MB allocation per chunk, and no buffer held while its block
/// waits to be merged: each one held is 4 MB more to fault in).
fn spawn<'scope>(
    scope: &'scope Scope<'scope, '_>,
    paths: &'scope [PathBuf],
    threads: usize,
    want_pairs: bool,
) -> anyhow::Result<Pipeline<'scope>> {
    let (chunk_tx, chunk_rx) = mpsc::sync_channel::<Chunk>(threads * 2);
    let chunk_rx = Arc::new(Mutex::new(chunk_rx));
    let (block_tx, block_rx) = mpsc::sync_channel::<Block>(threads * 2);
    let (free_tx, free_rx) = mpsc::channel::<Vec<u8>>();
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
        let (tx, free) = (block_tx.clone(), free_tx.clone());
        std::thread::Builder::new()
            .name("typist-parse".into())
            .spawn_scoped(scope, move || {
                loop {
                    let next = rx.lock().ok().and_then(|r| r.recv().ok());
                    let Some(c) = next else { return };
                    let block = parse_chunk(&c, want_pairs);
                    let mut buffer = c.data;
                    buffer.clear();
                    let _ = free.send(buffer);
                    if tx.send(block).is_err() {
                        return;
                    }
                }
            })?;
    }
    Ok((block_rx, reader))
}

/// The blocks merged so far. Names are interned as blocks come (ids do not reach the
/// output, which is keyed by name); problems and pairs are put in order at the end.
struct Merged {
    cases: CaseTable,
    interners: [NameTable; NAMES],
    places: PlaceTable,
    /// A global assistant id beyond `u16`: the table cannot hold it.
    too_many_assistants: bool,
    table: Table,
    /// (seq, file, lines) of every chunk.
    chunk_lines: Vec<(u64, usize, u64)>,
    /// Problems as (seq, local line, message).
    local_problems: Vec<(u64, u64, String)>,
    /// Pairs by chunk.
    pairs: Vec<(u64, Vec<Pair>)>,
    /// Files with a chunk that is not UTF-8.
    not_utf8: Vec<usize>,
    want_pairs: bool,
    /// Empty, or each file's label: its assistants are read as `label/name`.
    labels: Vec<String>,
}

impl Merged {
    fn new(paths: &[PathBuf], want_pairs: bool) -> Merged {
        let mut table = Table::default();
        // Reserve for ~1 row per 128 bytes: capacity that is never written costs no
        // memory, and the table does not move while it grows.
        let bytes: u64 = paths
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum();
        table.rows.reserve((bytes / 128).min(1 << 28) as usize);
        Merged {
            cases: CaseTable::default(),
            interners: Default::default(),
            places: PlaceTable::default(),
            too_many_assistants: false,
            table,
            chunk_lines: Vec::new(),
            local_problems: Vec::new(),
            pairs: Vec::new(),
            not_utf8: Vec::new(),
            want_pairs,
            labels: Vec::new(),
        }
    }

    fn add(&mut self, block: Block) {
        self.chunk_lines.push((block.seq, block.file, block.lines));
        self.local_problems
            .extend(block.problems.into_iter().map(|(l, m)| (block.seq, l, m)));
        let label = self.labels.get(block.file).cloned();
        let global: Vec<Vec<u32>> = block
            .names
            .iter()
            .zip(self.interners.iter_mut())
            .enumerate()
            .map(|(n, (local, global))| {
                (0..local.len() as u32)
                    .map(|i| match &label {
                        Some(l) if n == ASSISTANT => global.id(&format!("{l}/{}", local.get(i))),
                        _ => global.id_hashed(local.get(i), local.hash(i)),
                    })
                    .collect()
            })
            .collect();
        let case = self.cases.merge(&block.cases);
        for (local, &n) in block.case_lines.iter().enumerate() {
            if n != u32::MAX {
                let c = case[local] as usize;
                if self.table.lines.len() <= c {
                    self.table.lines.resize(c + 1, u32::MAX);
                }
                self.table.lines[c] = n;
            }
        }
        let [repo, language, assistant, file, error] = [0, 1, ASSISTANT, 3, 4].map(|i| &global[i]);
        let places: Vec<u32> = block
            .places
            .places()
            .iter()
            .map(|p| {
                self.places.id(Place {
                    repo: repo[p.repo as usize],
                    file: file[p.file as usize],
                    language: language[p.language as usize],
                })
            })
            .collect();
        let assistants: Vec<u16> = assistant
            .iter()
            .map(|&a| {
                u16::try_from(a).unwrap_or_else(|_| {
                    self.too_many_assistants = true;
                    u16::MAX
                })
            })
            .collect();
        let base = self.table.rows.len();
        self.table
            .blocks
            .extend(block.blocks.into_iter().map(|(i, t)| (base + i, t)));
        self.table
            .golf
            .extend(block.golf.into_iter().map(|(i, t)| (base + i, t)));
        self.table.rows.extend(
            block
                .rows
                .into_iter()
                .map(|row| row.renamed(&case, &places, &assistants, error)),
        );
        if !block.pairs.is_empty() {
            let mut pairs = block.pairs;
            if let Some(l) = &label {
                for p in &mut pairs {
                    p.assistant = format!("{l}/{}", p.assistant);
                }
            }
            self.pairs.push((block.seq, pairs));
        }
        if block.invalid_utf8 {
            self.not_utf8.push(block.file);
        }
    }

    fn finish(mut self, paths: &[PathBuf], strict: bool) -> anyhow::Result<(Table, Vec<Pair>)> {
        if self.too_many_assistants {
            anyhow::bail!(
                "more than 65,535 assistant names in the records: scoring cannot tell them apart"
            );
        }
        let problems = self.problems();
        self.table.skipped = problems.len() as u64;
        if strict && let Some((f, line, msg)) = problems.first() {
            let f = format!("{}:{}: {}", paths[*f].display(), line, msg);
            anyhow::bail!("malformed record at {f}");
        }
        self.table.problems = problems
            .iter()
            .take(MAX_PROBLEMS)
            .map(|(f, line, msg)| format!("{}:{}: {}", paths[*f].display(), line, msg))
            .collect();
        if self.cases.overflowed() {
            anyhow::bail!(
                "more than 2^31 case names before a trailing number: scoring cannot tell them apart"
            );
        }
        let [repos, languages, assistants, files, errors] = self.interners;
        // Case names need not be kept: only their count is used.
        let cases = self.cases.len();
        let [repos, languages, assistants, files, errors] =
            [repos, languages, assistants, files, errors].map(NameTable::into_strings);
        let table = Table {
            cases,
            places: self.places.into_places(),
            repos,
            languages,
            assistants,
            files,
            errors,
            ..self.table
        };
        if !self.want_pairs {
            return Ok((table, Vec::new()));
        }
        if let Some(&f) = self.not_utf8.iter().min() {
            let e = std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            );
            return Err(
                anyhow::Error::new(e).context(format!("cannot read {}", paths[f].display()))
            );
        }
        self.pairs.sort_unstable_by_key(|(seq, _)| *seq);
        let mut pairs: Vec<Pair> = self.pairs.into_iter().flat_map(|(_, p)| p).collect();
        pairs::sort(&mut pairs);
        Ok((table, pairs))
    }

    /// Problems as (file, line, message) in order: each chunk's first line number is 1
    /// + the lines of the file's earlier chunks.
    fn problems(&mut self) -> Vec<(usize, u64, String)> {
        self.chunk_lines.sort_unstable();
        let mut start_of: FxHashMap<u64, (usize, u64)> = FxHashMap::default();
        let mut next_line: FxHashMap<usize, u64> = FxHashMap::default();
        for &(seq, file, lines) in &self.chunk_lines {
            let start = next_line.entry(file).or_insert(1);
            start_of.insert(seq, (file, *start));
            *start += lines;
        }
        let mut problems: Vec<(usize, u64, String)> = std::mem::take(&mut self.local_problems)
            .into_iter()
            .map(|(seq, l, m)| {
                let (file, start) = start_of.get(&seq).copied().unwrap_or((0, 1));
                (file, start + l, m)
            })
            .collect();
        problems.sort();
        problems
    }
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
