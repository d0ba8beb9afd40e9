//! The scoring benchmark's records: real code lines (the code lines of a dataset,
//! `fixtures/dataset` by default) spread over many repositories and assistants, with
//! predictions of the kinds assistants give: about a third exact, the rest truncated,
//! extended, with identifiers substituted or with random edits; 10% empty, 1% errors;
//! 5% of lines with non-ASCII characters and 3% long ones (up to [`MAX_CHARS`]).
//! Seeded and deterministic; written in the order `typist run` leaves a records file
//! (assistant, pass, repository, file, line) with the fields it writes.
//!
//! Long lines are code lines joined up to [`MAX_CHARS`] (400) characters. The generator
//! is SplitMix64: the same seed gives the same bytes (`generate/tests.rs` checks that and
//! the mix).

use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::dataset::{WalkOptions, classify, walk};
use crate::replay::records::Record;

/// The longest expected line, in characters.
pub const MAX_CHARS: usize = 400;

/// Words with non-ASCII characters, put into 5% of the lines (identifiers, string
/// contents and comments in the languages people write code in).
const NON_ASCII: &[&str] = &[
    "données",
    "größe",
    "café",
    "niño",
    "名前",
    "设置默认值",
    "Привет",
    "значение",
    "→",
    "≤",
    "µs",
    "°C",
    "🚀",
    "✓",
    "naïve",
    "Ærø",
    "ключ",
    "日本語",
    "πr²",
    "€",
];

/// What assistants answer when they fail.
const ERRORS: &[&str] = &[
    "server exited with code 1",
    "request failed: connection reset by peer",
    "rate limited (HTTP 429)",
    "internal error: model returned no choices",
];

/// Characters random edits insert.
const EDIT_CHARS: &[char] = &[
    'a', 'e', 'i', 'n', 's', 't', 'x', '_', '(', ')', '.', ',', ' ', '=', ':', '1', '"',
];

/// SplitMix64: the same stream on every machine.
pub(crate) struct SplitMix(pub u64);

impl SplitMix {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
    /// `0..n` (n > 0); the modulo bias is irrelevant here.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn hex(&mut self) -> String {
        format!(
            "{:016x}{:016x}{:016x}{:016x}",
            self.next(),
            self.next(),
            self.next(),
            self.next()
        )
    }
}

/// One code line of the dataset.
struct PoolLine {
    file: String,
    line: u32,
    language: &'static str,
    text: String,
}

/// The dataset's code lines and identifiers.
pub struct Pool {
    lines: Vec<PoolLine>,
    idents: Vec<String>,
}

/// The first `n` characters of `s`.
fn prefix_chars(s: &str, n: usize) -> &str {
    s.char_indices().nth(n).map_or(s, |(i, _)| &s[..i])
}

/// Identifier spans (ASCII letters, digits and `_`, not starting with a digit).
fn ident_spans(s: &str) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_alphabetic() || b[i] == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((start, i));
        } else {
            i += 1;
        }
    }
    out
}

impl Pool {
    /// The code lines of every file of `dataset` (blank lines and comments left out).
    pub fn load(dataset: &Path) -> Result<Pool> {
        let ds = walk(dataset, &WalkOptions::default())?;
        let mut lines = Vec::new();
        for repo in &ds.repos {
            for f in &repo.files {
                let code = classify::code_lines(&f.text, f.language);
                for (i, (text, is_code)) in f.text.split('\n').zip(code).enumerate() {
                    if is_code && !text.trim().is_empty() {
                        lines.push(PoolLine {
                            file: format!("{}/{}", repo.name, f.rel),
                            line: i as u32 + 1,
                            language: f.language.name(),
                            text: prefix_chars(text, MAX_CHARS).to_string(),
                        });
                    }
                }
            }
        }
        if lines.is_empty() {
            bail!("no code lines in {}", dataset.display());
        }
        let mut idents: Vec<String> = lines
            .iter()
            .flat_map(|l| ident_spans(&l.text).into_iter().map(|(a, b)| &l.text[a..b]))
            .filter(|w| w.len() > 1)
            .map(str::to_string)
            .collect();
        idents.sort();
        idents.dedup();
        Ok(Pool { lines, idents })
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

/// What the generator made, counted as it wrote.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    pub records: u64,
    pub exact: u64,
    pub truncated: u64,
    pub extended: u64,
    pub substituted: u64,
    pub edited: u64,
    pub empty: u64,
    pub errors: u64,
    pub non_ascii: u64,
    pub longer_than_120: u64,
    pub max_chars: usize,
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pct = |n: u64| 100.0 * n as f64 / self.records.max(1) as f64;
        write!(
            f,
            "{} records: {:.1}% exact, {:.1}% truncated, {:.1}% extended, {:.1}% identifiers \
             substituted, {:.1}% random edits, {:.1}% empty, {:.1}% error; {:.1}% of expected \
             lines with non-ASCII characters, {:.1}% longer than 120 characters, the longest {}",
            self.records,
            pct(self.exact),
            pct(self.truncated),
            pct(self.extended),
            pct(self.substituted),
            pct(self.edited),
            pct(self.empty),
            pct(self.errors),
            pct(self.non_ascii),
            pct(self.longer_than_120),
            self.max_chars
        )
    }
}

/// The shape of the generated file.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub records: usize,
    pub repos: usize,
    pub assistants: usize,
    pub seed: u64,
}

/// A case: where its line is in the pool, and how many times the repository has
/// already gone round the pool (a repository with more cases than the pool has lines
/// gets copies of the files under `v1/`, `v2/`, …).
#[derive(Clone, Copy)]
struct Slot {
    /// Global case number: seeds the case's line.
    case: u64,
    pos: usize,
    lap: usize,
}

/// The cases of repository `r`, in (file, line) order as a finished run sorts them.
fn repo_slots(pool: &Pool, shape: &Shape, cases: usize, r: usize) -> Vec<Slot> {
    let (start, end) = (r * cases / shape.repos, (r + 1) * cases / shape.repos);
    let n = pool.len();
    // Each repository starts at its own place in the pool.
    let offset = (r * 7919) % n;
    let mut slots: Vec<Slot> = (start..end)
        .map(|k| {
            let j = k - start;
            Slot {
                case: k as u64,
                pos: (offset + j) % n,
                lap: j / n,
            }
        })
        .collect();
    slots.sort_by(|a, b| {
        let (la, lb) = (&pool.lines[a.pos], &pool.lines[b.pos]);
        (a.lap, &la.file, la.line).cmp(&(b.lap, &lb.file, lb.line))
    });
    slots
}

/// The case's expected line: its pool line, or for 3% several consecutive lines joined
/// (a long call or literal), with 5% given a non-ASCII word.
fn expected_line(pool: &Pool, seed: u64, slot: &Slot) -> String {
    let mut rng = SplitMix(seed ^ slot.case.wrapping_mul(0xA24BAED4963EE407));
    let mut text = pool.lines[slot.pos].text.clone();
    if rng.below(100) < 3 {
        let target = 150 + rng.below(MAX_CHARS - 150 + 1);
        let mut p = slot.pos;
        while text.chars().count() < target {
            p = (p + 1) % pool.len();
            text.push(' ');
            text.push_str(pool.lines[p].text.trim());
        }
        text = prefix_chars(&text, target).trim_end().to_string();
    }
    if rng.below(100) < 5 {
        let word = NON_ASCII[rng.below(NON_ASCII.len())];
        let chars = text.chars().count();
        let at = rng.below(chars + 1);
        let (head, tail) = text.split_at(prefix_chars(&text, at).len());
        text = match rng.below(3) {
            0 => format!("{head}{word}{tail}"),
            1 => format!("{text}  # {word}"),
            _ => format!("{head}\"{word}\"{tail}"),
        };
        text = prefix_chars(&text, MAX_CHARS).to_string();
    }
    text
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Exact,
    Truncated,
    Extended,
    Substituted,
    Edited,
}

/// Per mille of suggestions: exact 405, truncated 200, extended 150, identifiers
/// substituted 150, random edits 95; each later assistant trades 20 exact ones for
/// random edits, so assistants differ (over 4 assistants a third of all records exact).
fn kind(rng: &mut SplitMix, assistant: usize) -> Kind {
    let exact = 405 - 20 * assistant.min(5);
    let roll = rng.below(1000);
    match roll {
        _ if roll < exact => Kind::Exact,
        _ if roll < exact + 200 => Kind::Truncated,
        _ if roll < exact + 350 => Kind::Extended,
        _ if roll < exact + 500 => Kind::Substituted,
        _ => Kind::Edited,
    }
}

fn predict(pool: &Pool, rng: &mut SplitMix, kind: Kind, expected: &str) -> String {
    let chars: Vec<char> = expected.chars().collect();
    match kind {
        Kind::Exact => expected.to_string(),
        Kind::Truncated if chars.len() > 1 => {
            chars[..1 + rng.below(chars.len() - 1)].iter().collect()
        }
        Kind::Truncated => expected.to_string(),
        Kind::Extended => {
            const TAILS: &[&str] = &[")", ":", ",", " = None", "()", ";", " {", ")]"];
            let tail = if rng.below(2) == 0 {
                TAILS[rng.below(TAILS.len())].to_string()
            } else {
                let other = pool.lines[rng.below(pool.len())].text.trim();
                format!(" {}", prefix_chars(other, 1 + rng.below(40)))
            };
            prefix_chars(&format!("{expected}{tail}"), MAX_CHARS).to_string()
        }
        Kind::Substituted => substitute(pool, rng, expected),
        Kind::Edited => edit(rng, chars),
    }
}

/// One to three identifiers replaced by other identifiers of the dataset.
fn substitute(pool: &Pool, rng: &mut SplitMix, expected: &str) -> String {
    let spans = ident_spans(expected);
    if spans.is_empty() || pool.idents.is_empty() {
        return expected.to_string();
    }
    let mut chosen: Vec<(usize, usize)> = (0..1 + rng.below(3))
        .map(|_| spans[rng.below(spans.len())])
        .collect();
    chosen.sort();
    chosen.dedup();
    let mut out = String::with_capacity(expected.len() + 16);
    let mut at = 0;
    for (a, b) in chosen {
        out.push_str(&expected[at..a]);
        out.push_str(&pool.idents[rng.below(pool.idents.len())]);
        at = b;
    }
    out.push_str(&expected[at..]);
    out
}

/// One random edit per ten characters or so (at least one): insertions, deletions and
/// substitutions of characters.
fn edit(rng: &mut SplitMix, mut chars: Vec<char>) -> String {
    let edits = 1 + rng.below(chars.len() / 10 + 1);
    for _ in 0..edits {
        let c = EDIT_CHARS[rng.below(EDIT_CHARS.len())];
        let at = rng.below(chars.len() + 1);
        match rng.below(3) {
            0 => chars.insert(at, c),
            1 if at < chars.len() => {
                chars.remove(at);
            }
            _ if at < chars.len() => chars[at] = c,
            _ => chars.push(c),
        }
    }
    chars.into_iter().take(MAX_CHARS).collect()
}

/// Assistant `a`'s record of a case: 10% empty, 1% error, the rest suggestions.
fn record(pool: &Pool, seed: u64, base: Record, a: usize, stats: &mut Stats) -> Record {
    let mut rng =
        SplitMix(seed ^ hash_str(&base.case) ^ (a as u64 + 1).wrapping_mul(0x9FB21C651E98DF25));
    let mut r = base;
    r.request_hash = Some(rng.hex());
    let roll = rng.below(1000);
    if roll < 10 {
        stats.errors += 1;
        r.outcome = crate::score::Outcome::Error;
        r.error = Some(ERRORS[rng.below(ERRORS.len())].into());
        return r;
    }
    r.latency_ms = Some((20_000 + rng.below(2_000_000)) as f64 / 1000.0);
    r.response_hash = Some(rng.hex());
    if roll < 110 {
        stats.empty += 1;
        r.outcome = crate::score::Outcome::Empty;
        r.items = Some(rng.below(2));
        return r;
    }
    let k = kind(&mut rng, a);
    *match k {
        Kind::Exact => &mut stats.exact,
        Kind::Truncated => &mut stats.truncated,
        Kind::Extended => &mut stats.extended,
        Kind::Substituted => &mut stats.substituted,
        Kind::Edited => &mut stats.edited,
    } += 1;
    let predicted = predict(pool, &mut rng, k, &r.expected);
    if k == Kind::Extended && rng.below(4) == 0 {
        let next = &pool.lines[rng.below(pool.len())].text;
        r.predicted_text = Some(format!("{predicted}\n{next}"));
    }
    r.outcome = crate::score::Outcome::Suggestion;
    r.items = Some(1 + rng.below(3));
    r.predicted = Some(predicted);
    r
}

/// FNV-1a: a record's stream depends on its case's name, not on its place.
fn hash_str(s: &str) -> u64 {
    s.bytes().fold(0xcbf29ce484222325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

/// The case's record before the assistant answers.
fn base_record(pool: &Pool, repo: &str, slot: &Slot, expected: &str) -> Record {
    let l = &pool.lines[slot.pos];
    let file = if slot.lap == 0 {
        l.file.clone()
    } else {
        format!("v{}/{}", slot.lap, l.file)
    };
    Record {
        case: format!("{repo}/{file}:{}", l.line),
        repo: repo.to_string(),
        file,
        line: l.line,
        language: l.language.to_string(),
        assistant: String::new(),
        pass: 1,
        expected: expected.to_string(),
        ..Record::default()
    }
}

/// Writes `shape.records` records (rounded down to whole cases) to `path`, through a
/// temporary file renamed at the end; returns what was written.
pub fn generate(pool: &Pool, shape: &Shape, path: &Path) -> Result<Stats> {
    if shape.assistants == 0 || shape.repos == 0 {
        bail!("--assistants and --repos must be at least 1");
    }
    let tmp = path.with_extension("partial");
    let file =
        std::fs::File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let cases = shape.records / shape.assistants;
    let mut stats = Stats::default();
    for a in 0..shape.assistants {
        let assistant = format!("assistant-{a}");
        for r in 0..shape.repos {
            let repo = format!("repo-{r:04}");
            for slot in repo_slots(pool, shape, cases, r) {
                let expected = expected_line(pool, shape.seed, &slot);
                if a == 0 {
                    let n = expected.chars().count();
                    stats.non_ascii += u64::from(!expected.is_ascii());
                    stats.longer_than_120 += u64::from(n > 120);
                    stats.max_chars = stats.max_chars.max(n);
                }
                let mut base = base_record(pool, &repo, &slot, &expected);
                base.assistant.clone_from(&assistant);
                let rec = record(pool, shape.seed, base, a, &mut stats);
                serde_json::to_writer(&mut w, &rec)?;
                w.write_all(b"\n")?;
                stats.records += 1;
            }
        }
    }
    // The per-line shares were counted once per case.
    stats.non_ascii *= shape.assistants as u64;
    stats.longer_than_120 *= shape.assistants as u64;
    w.flush()?;
    drop(w);
    std::fs::rename(&tmp, path)?;
    Ok(stats)
}

#[cfg(test)]
mod tests;
