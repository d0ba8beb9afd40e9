//! The scoring benchmark's limit: what `typist score` cannot go below with its JSON
//! parser. The same file is read the way `score::read_records` reads it (4 MB chunks
//! cut at line ends, UTF-8 checked once per chunk, the chunks parsed on every core with
//! scoring's own record type, `score::records::parse_line_only`), and nothing else is done: no distances,
//! no interning, no table, no summary.

use std::io::Read;
use std::path::Path;
use std::sync::{Arc, Mutex, mpsc};
use std::time::Instant;

use anyhow::{Context, Result};

use crate::score::records;

const CHUNK: usize = 4 << 20;

#[derive(Debug, Clone, Copy)]
pub struct Limit {
    pub seconds: f64,
    /// User + system CPU seconds of this process during the pass.
    pub cpu: f64,
    pub records: u64,
    pub malformed: u64,
}

/// (records, malformed lines, bytes of the expected lines: kept so nothing is elided).
fn parse_chunk(data: &[u8]) -> (u64, u64, u64) {
    let (mut ok, mut bad, mut bytes) = (0, 0, 0);
    let Ok(text) = std::str::from_utf8(data) else {
        return (0, data.split(|&b| b == b'\n').count() as u64, 0);
    };
    for line in text.split('\n') {
        if line.bytes().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        match records::parse_line_only(line) {
            Some(n) => {
                ok += 1;
                bytes += n as u64;
            }
            None => bad += 1,
        }
    }
    (ok, bad, std::hint::black_box(bytes))
}

/// Reads `path` in chunks cut at the last newline, handing each to `tx`; emptied
/// buffers come back through `free`.
fn read_chunks(
    path: &Path,
    tx: mpsc::SyncSender<Vec<u8>>,
    free: mpsc::Receiver<Vec<u8>>,
) -> Result<()> {
    let mut f =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let mut buf = free.try_recv().unwrap_or_default();
        buf.clear();
        buf.append(&mut carry);
        buf.reserve(CHUNK);
        let n = (&mut f).take(CHUNK as u64).read_to_end(&mut buf)?;
        let eof = n < CHUNK;
        if !eof {
            match memchr::memrchr(b'\n', &buf) {
                Some(i) => carry.extend_from_slice(&buf[i + 1..]),
                None => {
                    carry = buf;
                    continue;
                }
            }
            buf.truncate(buf.len() - carry.len());
        }
        if tx.send(buf).is_err() || eof {
            return Ok(());
        }
    }
}

fn cpu_seconds() -> f64 {
    crate::os::usage(crate::os::Who::This).map_or(0.0, |u| u.cpu_seconds)
}

/// Parses every line of `path` on `threads` threads (0 = every core).
pub fn parse_only(path: &Path, threads: usize) -> Result<Limit> {
    let threads = if threads == 0 {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    } else {
        threads
    };
    let (cpu0, start) = (cpu_seconds(), Instant::now());
    let (tx, rx) = mpsc::sync_channel::<Vec<u8>>(threads * 2);
    let rx = Arc::new(Mutex::new(rx));
    let (free_tx, free_rx) = mpsc::channel::<Vec<u8>>();
    let totals = std::thread::scope(|scope| -> Result<(u64, u64)> {
        let reader = scope.spawn(move || read_chunks(path, tx, free_rx));
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let (rx, free) = (rx.clone(), free_tx.clone());
                scope.spawn(move || {
                    let (mut ok, mut bad) = (0, 0);
                    while let Some(chunk) = rx.lock().ok().and_then(|r| r.recv().ok()) {
                        let (o, b, _) = parse_chunk(&chunk);
                        (ok, bad) = (ok + o, bad + b);
                        let _ = free.send(chunk);
                    }
                    (ok, bad)
                })
            })
            .collect();
        let mut totals = (0, 0);
        for w in workers {
            let (o, b) = w.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            totals = (totals.0 + o, totals.1 + b);
        }
        reader
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e))?;
        Ok(totals)
    })?;
    Ok(Limit {
        seconds: start.elapsed().as_secs_f64(),
        cpu: cpu_seconds() - cpu0,
        records: totals.0,
        malformed: totals.1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_record_is_parsed_and_nothing_else_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/records/small.jsonl");
        let text = std::fs::read_to_string(fixture).unwrap();
        let lines = text.lines().filter(|l| !l.trim().is_empty()).count() as u64;
        std::fs::write(&path, format!("{text}\n{{not json\n")).unwrap();
        let l = parse_only(&path, 2).unwrap();
        assert_eq!((l.records, l.malformed), (lines, 1));
    }
}
