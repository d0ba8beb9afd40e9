//! From what a server did to the record of a case: `suggestion` (the first line of the
//! first item, when it changes the cursor's line), `empty`, `error` or `timeout`, with
//! the hashes that tell repeated questions and answers apart.

use super::RunConditions;
use super::records::Record;
use super::typing;

use crate::dataset::Case;
use crate::dataset::token::TokenCase;
use crate::editor::options::Timed;
use crate::editor::{SessionError, Suggestions, ranking};
use crate::score::records::{Outcome, RecordKind};

/// What came of asking a server once.
pub(super) enum Ask {
    Got(crate::editor::options::Timed<Suggestions>),
    Failed(SessionError),
}

/// The record of `case` for `assistant` in `pass`, from what the editor held (`text`,
/// the cursor at byte `cursor`) and what the server did.
pub(super) fn record(
    case: &Case,
    assistant: &str,
    pass: u32,
    cond: &RunConditions,
    text: &str,
    cursor: usize,
    outcome: Ask,
) -> Record {
    let mut r = base(case, assistant, pass);
    r.typed = typing::typed_prefix(&case.expected, cond.typed_prefix as usize)
        .chars()
        .count() as u32;
    line_outcome(r, cond, text, cursor, outcome)
}

/// The fields every record of `case` has, before its outcome.
fn base(case: &Case, assistant: &str, pass: u32) -> Record {
    Record {
        case: case.case.clone(),
        repo: case.repo.clone(),
        file: case.file.clone(),
        line: case.line,
        language: case.language.clone(),
        assistant: assistant.to_string(),
        pass,
        expected: case.expected.clone(),
        expected_block: case.block.clone(),
        ..Record::default()
    }
}

fn line_outcome(
    mut r: Record,
    cond: &RunConditions,
    text: &str,
    cursor: usize,
    outcome: Ask,
) -> Record {
    // The cursor's line as it stands before accepting anything.
    let line_start = text[..cursor].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[cursor..].find('\n').map_or(text.len(), |i| cursor + i);
    let current = &text[line_start..line_end];
    match outcome {
        Ask::Got(t) => {
            if cond.latency {
                r.latency_ms = Some((t.latency_ms * 1000.0).round() / 1000.0);
            }
            r.items = Some(t.value.len());
            r.response_hash = Some(crate::digest::sha256_hex(
                serde_json::to_string(&t.value)
                    .unwrap_or_default()
                    .as_bytes(),
            ));
            match &t.value {
                Suggestions::Inline(items) => match items.first() {
                    Some(first) if first.text != current => {
                        r.outcome = Outcome::Suggestion;
                        r.predicted = Some(first.line.clone());
                        if first.text.contains('\n') {
                            r.predicted_text = Some(first.text.clone());
                        }
                    }
                    _ => r.outcome = Outcome::Empty,
                },
                Suggestions::Completion(_) => {
                    r.outcome = Outcome::Error;
                    r.error =
                        Some("completion list where an inline suggestion was expected".into());
                }
            }
        }
        Ask::Failed(e) => match e.nothing_shown() {
            Some(why) => {
                r.outcome = Outcome::Empty;
                r.items = Some(0);
                r.reason = Some(why.to_string());
            }
            None => failed(&mut r, &e),
        },
    }
    r
}

/// `timeout` or `error`, never `empty`, with the scrubbed message.
fn failed(r: &mut Record, e: &SessionError) {
    r.outcome = if e.is_timeout() {
        Outcome::Timeout
    } else {
        Outcome::Error
    };
    r.error = Some(crate::secrets::scrub(&e.to_string()).into_owned());
}

/// What came of a completion session (a token case's actions).
pub(super) enum TokenAsk {
    /// The last list the server gave (or the editor showed), and what the user had
    /// typed of the token then.
    Got {
        answer: Timed<ranking::ListAnswer>,
        typed: String,
        /// What the user had typed of the token when the answer was asked for.
        asked: String,
    },
    Failed(SessionError),
    /// The case cannot be replayed (its actions or its place do not fit the file).
    Invalid(String),
}

/// The completion record of token case `case`: the last list ranked as an editor shows
/// it after the typed prefix (`editor::ranking`).
pub(super) fn completion_record(
    case: &Case,
    token: &TokenCase,
    assistant: &str,
    pass: u32,
    cond: &RunConditions,
    outcome: TokenAsk,
) -> Record {
    let (latency, rule, list_cap) = (cond.latency, cond.list_rule, cond.list_cap);
    let mut r = base(case, assistant, pass);
    r.typed = token.prefix_len;
    r.kind = Some(RecordKind::Completion);
    r.token_kind = Some(token.kind);
    r.prefix_len = Some(token.prefix_len);
    match outcome {
        TokenAsk::Got {
            answer,
            typed,
            asked,
        } => {
            let ranked = answer.value.rank(rule, &typed, &asked, &case.expected);
            if latency {
                r.latency_ms = Some((answer.latency_ms * 1000.0).round() / 1000.0);
            }
            r.outcome = if ranked.items > 0 {
                Outcome::Suggestion
            } else {
                Outcome::Empty
            };
            r.predicted = ranked.top.first().cloned();
            r.items = Some(ranked.items);
            r.listed = Some(ranked.listed);
            r.rank = Some(ranked.rank);
            // The list as shown (not the raw answer: servers put temporary paths in
            // items' `data`), so equal lists hash equal across runs.
            let shown: Vec<[String; 3]> = answer
                .value
                .shown(rule, &typed, &asked)
                .into_iter()
                .map(|it| [it.label, it.sort, it.insert])
                .collect();
            r.response_hash = Some(crate::digest::sha256_hex(
                serde_json::to_string(&shown).unwrap_or_default().as_bytes(),
            ));
            let mut top = ranked.top;
            // `--list-cap N`: the first N texts kept, and the record says it was cut
            // (the rank is still the whole list's).
            if let Some(cap) = list_cap
                && top.len() > cap as usize
            {
                top.truncate(cap as usize);
                r.list_cap = Some(cap);
            }
            r.top = Some(top);
        }
        TokenAsk::Failed(e) => failed(&mut r, &e),
        TokenAsk::Invalid(why) => {
            r.outcome = Outcome::Error;
            r.error = Some(why);
        }
    }
    r
}
