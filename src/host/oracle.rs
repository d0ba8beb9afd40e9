//! `--backend oracle`, a fake assistant for tests: it knows the true text because it is
//! given the plan file on its command line (`--truth PLAN`, a path outside the
//! workspace, which no other assistant is given), and answers at the cursor with the
//! case's expected block (or line) less what is typed on the cursor's line. It never
//! reads the workspace. Measures what a perfect assistant scores (block help 100%, no
//! syntax error added), so tests can tell a metric's ceiling from its bugs.
//!
//! Token cases (rows with a `token`) are answered as completion lists (`list`): the
//! true token at the rank given with `--list-rank R`, after `R − 1` decoys (the token
//! with a digit appended, which every prefix of the token keeps and none of which is a
//! prefix of it), so golf on completion lists has a known answer at every rank.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::Value;

/// The true texts of a plan, by (file within its repository, 0-based line).
#[derive(Debug, Default)]
pub struct Oracle {
    truths: HashMap<(String, u32), Vec<String>>,
    /// Token cases: (column in characters, token) by (file, 0-based line).
    tokens: HashMap<(String, u32), Vec<(usize, String)>>,
}

impl Oracle {
    /// Reads the plan's cases (its header line has no `case`).
    pub fn read(plan: &Path) -> Result<Oracle> {
        let text = std::fs::read_to_string(plan)
            .with_context(|| format!("cannot read the oracle's truth {}", plan.display()))?;
        let mut truths: HashMap<(String, u32), Vec<String>> = HashMap::new();
        let mut tokens: HashMap<(String, u32), Vec<(usize, String)>> = HashMap::new();
        for l in text.lines() {
            let Ok(v) = serde_json::from_str::<Value>(l) else {
                continue;
            };
            let (Some(file), Some(line), Some(expected)) = (
                v.get("file").and_then(Value::as_str),
                v.get("line").and_then(Value::as_u64),
                v.get("expected").and_then(Value::as_str),
            ) else {
                continue;
            };
            let place = (file.to_string(), (line as u32).saturating_sub(1));
            if let Some(column) = v.pointer("/token/column").and_then(Value::as_u64) {
                tokens
                    .entry(place)
                    .or_default()
                    .push((column as usize, expected.to_string()));
                continue;
            }
            let truth = v
                .get("block")
                .and_then(Value::as_str)
                .unwrap_or(expected)
                .to_string();
            truths
                .entry((file.to_string(), (line as u32).saturating_sub(1)))
                .or_default()
                .push(truth);
        }
        Ok(Oracle { truths, tokens })
    }

    /// The text to insert at the cursor: line `line` (0-based) of `rel` (the document's
    /// path in the workspace, `/`-separated), where `typed` is already on the line. Of
    /// several cases at that place (the same path in two repositories), the first that
    /// continues what is typed.
    pub fn answer(&self, rel: &str, line: u32, typed: &str) -> Option<String> {
        let rel = rel.replace('\\', "/");
        self.truths
            .iter()
            .filter(|((f, l), _)| *l == line && (rel == *f || rel.ends_with(&format!("/{f}"))))
            .flat_map(|(_, ts)| ts)
            .find_map(|t| t.strip_prefix(typed))
            .filter(|rest| !rest.is_empty())
            .map(str::to_string)
    }

    /// The token being written at the cursor, on line `line` (0-based) of `rel` with
    /// `typed` on the line before the cursor: a token case's token at a column where the
    /// characters typed since are a proper prefix of it.
    pub fn token(&self, rel: &str, line: u32, typed: &str) -> Option<&str> {
        let rel = rel.replace('\\', "/");
        let chars: Vec<char> = typed.chars().collect();
        self.tokens
            .iter()
            .filter(|((f, l), _)| *l == line && (rel == *f || rel.ends_with(&format!("/{f}"))))
            .flat_map(|(_, ts)| ts)
            .find(|(column, token)| {
                chars.len() >= *column && {
                    let since: String = chars[*column..].iter().collect();
                    token.len() > since.len() && token.starts_with(&since)
                }
            })
            .map(|(_, t)| t.as_str())
    }
}

/// The oracle's completion list for `token`: `rank − 1` decoys, then the token, as
/// (label, sortText) in the order the list sorts.
pub fn list(token: &str, rank: u32) -> Vec<(String, String)> {
    let rank = rank.max(1);
    (1..rank)
        .map(|i| format!("{token}{i}"))
        .chain(std::iter::once(token.to_string()))
        .enumerate()
        .map(|(i, label)| (label, format!("{i:05}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_truths_and_their_lists() {
        let dir = tempfile::tempdir().unwrap();
        let plan = dir.path().join("plan.jsonl");
        std::fs::write(
            &plan,
            concat!(
                "{\"plan\":1}\n",
                "{\"case\":\"r/a.py:2:5+0\",\"file\":\"a.py\",\"line\":2,\"expected\":\"path\",\"token\":{\"column\":3}}\n",
                "{\"case\":\"r/a.py:1\",\"file\":\"a.py\",\"line\":1,\"expected\":\"x = 1\"}\n",
            ),
        )
        .unwrap();
        let o = Oracle::read(&plan).unwrap();
        assert_eq!(o.token("r/a.py", 1, "os"), None, "before the token");
        assert_eq!(o.token("r/a.py", 1, "os."), Some("path"));
        assert_eq!(o.token("r/a.py", 1, "os.p"), Some("path"));
        assert_eq!(o.token("r/a.py", 1, "os.pat"), Some("path"));
        assert_eq!(o.token("r/a.py", 1, "os.path"), None, "written");
        assert_eq!(o.token("r/a.py", 1, "os.px"), None);
        assert_eq!(o.answer("r/a.py", 0, "x"), Some(" = 1".into()));
        assert_eq!(
            list("path", 3),
            [
                ("path1".to_string(), "00000".to_string()),
                ("path2".into(), "00001".into()),
                ("path".into(), "00002".into())
            ]
        );
        assert_eq!(list("path", 0), [("path".to_string(), "00000".to_string())]);
    }
}
