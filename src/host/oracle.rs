//! `--backend oracle`, a fake assistant for tests: it knows the true text because it is
//! given the plan file on its command line (`--truth PLAN`, a path outside the
//! workspace, which no other assistant is given), and answers at the cursor with the
//! case's expected block (or line) less what is typed on the cursor's line. It never
//! reads the workspace. Measures what a perfect assistant scores (block help 100%, no
//! syntax error added), so tests can tell a metric's ceiling from its bugs.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::Value;

/// The true texts of a plan, by (file within its repository, 0-based line).
#[derive(Debug, Default)]
pub struct Oracle {
    truths: HashMap<(String, u32), Vec<String>>,
}

impl Oracle {
    /// Reads the plan's cases (its header line has no `case`).
    pub fn read(plan: &Path) -> Result<Oracle> {
        let text = std::fs::read_to_string(plan)
            .with_context(|| format!("cannot read the oracle's truth {}", plan.display()))?;
        let mut truths: HashMap<(String, u32), Vec<String>> = HashMap::new();
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
        Ok(Oracle { truths })
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
}
