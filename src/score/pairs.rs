//! The (expected, predicted) pairs of records files, with their per-pair scores: the
//! rows of the report's CSV and the material of its examples. Read in the same pass as
//! the scoring table ([`super::read_records_and_pairs`]).

use serde::{Deserialize, Serialize};

use super::distance::{c_help_from, distances};
use super::records::{Outcome, RecordKind};

/// One record with its per-pair scores (the columns of `--csv`).
#[derive(Debug, Clone, Serialize)]
pub struct Pair {
    pub case: String,
    pub repo: String,
    pub file: String,
    pub line: u32,
    pub language: String,
    pub assistant: String,
    pub pass: u32,
    pub outcome: String,
    /// Characters the user typed before asking (k).
    pub typed: u32,
    pub expected: String,
    pub predicted: Option<String>,
    /// `c_help` with ld2 over the `len − k` characters the assistant could type (empty
    /// suggestions: 0; errors, timeouts and lines no longer than k: none).
    pub c_help: Option<f64>,
    pub ld2: Option<usize>,
    pub ld1: Option<usize>,
    pub latency_ms: Option<f64>,
}

/// The fields of a line-level record a pair is made of, as read.
pub(crate) struct PairSource<'a> {
    pub case: &'a str,
    pub repo: &'a str,
    pub file: &'a str,
    pub line: u32,
    pub language: Option<&'a str>,
    pub assistant: &'a str,
    pub pass: u32,
    pub outcome: &'a str,
    pub expected: &'a str,
    pub predicted: Option<&'a str>,
    pub latency_ms: Option<f64>,
    pub typed: u32,
}

/// A record as the pairs read it on their own (a line the scoring table refuses may
/// still be a pair, with an unknown outcome for instance).
#[derive(Debug, Clone, Deserialize)]
struct RawPair {
    case: String,
    repo: String,
    #[serde(default)]
    file: String,
    #[serde(default)]
    line: u32,
    #[serde(default)]
    language: Option<String>,
    assistant: String,
    #[serde(default = "one")]
    pass: u32,
    outcome: String,
    expected: String,
    #[serde(default)]
    predicted: Option<String>,
    #[serde(default)]
    latency_ms: Option<f64>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    typed: u32,
}

fn one() -> u32 {
    1
}

impl Pair {
    /// The pair of a record; `dist` is `(ld2, ld1)` of a suggestion when already known.
    pub(crate) fn new(r: PairSource, dist: Option<(usize, usize)>) -> Pair {
        let len = r.expected.chars().count().saturating_sub(r.typed as usize);
        let (c, ld2, ld1) = match (Outcome::parse(r.outcome), r.predicted) {
            _ if len == 0 && r.typed > 0 => (None, None, None),
            (Some(Outcome::Suggestion), Some(p)) => {
                let (d2, d1) = dist.unwrap_or_else(|| distances(r.expected, p));
                (Some(c_help_from(len, d2)), Some(d2), Some(d1))
            }
            (Some(Outcome::Suggestion), None) | (Some(Outcome::Empty), _) => {
                (Some(0.0), None, None)
            }
            _ => (None, None, None),
        };
        Pair {
            case: r.case.to_string(),
            repo: r.repo.to_string(),
            file: r.file.to_string(),
            line: r.line,
            language: r.language.unwrap_or("unknown").to_string(),
            assistant: r.assistant.to_string(),
            pass: r.pass,
            outcome: r.outcome.to_string(),
            typed: r.typed,
            expected: r.expected.to_string(),
            predicted: r.predicted.map(str::to_string),
            c_help: c,
            ld2,
            ld1,
            latency_ms: r.latency_ms,
        }
    }

    /// One line read as a pair on its own; none when malformed or a completion record.
    pub(crate) fn parse(line: &str) -> Option<Pair> {
        let r: RawPair = serde_json::from_str(line).ok()?;
        if RecordKind::is_completion(r.kind.as_deref()) {
            return None;
        }
        Some(Pair::new(
            PairSource {
                case: &r.case,
                repo: &r.repo,
                file: &r.file,
                line: r.line,
                language: r.language.as_deref(),
                assistant: &r.assistant,
                pass: r.pass,
                outcome: &r.outcome,
                expected: &r.expected,
                predicted: r.predicted.as_deref(),
                latency_ms: r.latency_ms,
                typed: r.typed,
            },
            None,
        ))
    }
}

/// Pairs in (assistant, pass, repository, file, line, case) order; ties keep the order
/// of the files and lines.
pub(crate) fn sort(pairs: &mut [Pair]) {
    pairs.sort_by(|a, b| {
        (&a.assistant, a.pass, &a.repo, &a.file, a.line, &a.case).cmp(&(
            &b.assistant,
            b.pass,
            &b.repo,
            &b.file,
            b.line,
            &b.case,
        ))
    });
}
