//! The run's units of scheduling: one file of the plan for one assistant and pass, in a
//! fixed order, minus what is recorded already and what an assistant is not asked.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::RunConditions;
use super::checks::skip_reason;
use super::shard::Shard;
use crate::dataset::{Case, SourceFile};
use crate::editor::Profile;

/// One file of the plan for one assistant and pass: the unit of scheduling.
#[derive(Debug, Clone)]
pub(super) struct Unit {
    pub assistant: usize,
    pub pass: u32,
    pub repo: String,
    pub file: String,
    pub cases: Vec<Case>,
}

/// The n files of the same repository nearest to `rel` in path order (the open tabs).
pub(super) fn neighbours<'a>(files: &'a [SourceFile], rel: &str, n: usize) -> Vec<&'a SourceFile> {
    let Some(at) = files.iter().position(|f| f.rel == rel) else {
        return vec![];
    };
    let mut idx: Vec<usize> = (0..files.len()).filter(|&i| i != at).collect();
    idx.sort_by_key(|&i| (i.abs_diff(at), i));
    idx.into_iter().take(n).map(|i| &files[i]).collect()
}

/// The queue of a run and what it leaves out.
pub(super) struct Units {
    pub queue: VecDeque<Unit>,
    /// Cases to ask.
    pub todo: u64,
    /// Cases an assistant is not asked, by assistant and reason (counted per pass).
    pub skipped: BTreeMap<String, BTreeMap<String, u64>>,
}

impl Units {
    /// Says in the log which cases an assistant is not asked, and why.
    pub fn warn_skipped(&self) {
        for (name, reasons) in &self.skipped {
            for (reason, n) in reasons {
                tracing::warn!(assistant = %name, "{n} case(s) not asked: {reason}");
            }
        }
    }
}

/// Units: files × assistants × passes of `plan` in `shard`, minus the `done` cases
/// (assistant, pass, case), largest repositories and files first.
pub(super) fn plan_units(
    plan: &[Case],
    shard: Option<Shard>,
    profiles: &[Profile],
    passes: u32,
    cond: &RunConditions,
    done: &BTreeSet<super::records::DoneKey>,
) -> Units {
    let files = files_in_order(plan, shard);
    let mut units = Units {
        queue: VecDeque::new(),
        todo: 0,
        skipped: BTreeMap::new(),
    };
    for (ai, p) in profiles.iter().enumerate() {
        for pass in 1..=passes {
            for ((repo, file), cases) in &files {
                let mut kept: Vec<Case> = Vec::new();
                for c in cases.iter() {
                    if let Some(reason) = skip_reason(c, p, cond) {
                        *units
                            .skipped
                            .entry(p.name.clone())
                            .or_default()
                            .entry(reason.to_string())
                            .or_default() += 1;
                    } else if !done.contains(&(p.name.clone(), pass, c.case.clone())) {
                        kept.push(c.clone());
                    }
                }
                if kept.is_empty() {
                    continue;
                }
                // A file is typed from the top: its cases in line order.
                kept.sort_by_key(|c| c.line);
                units.todo += kept.len() as u64;
                units.queue.push_back(Unit {
                    assistant: ai,
                    pass,
                    repo: repo.clone(),
                    file: file.clone(),
                    cases: kept,
                });
            }
        }
    }
    units
}

/// The plan's files in `shard`, with their cases. Largest work first (the last unit does
/// not leave one worker alone at the end). The order changes no record: every unit gets
/// its own server, and records are sorted when the run ends.
fn files_in_order(plan: &[Case], shard: Option<Shard>) -> Vec<((String, String), Vec<Case>)> {
    let mut by_file: BTreeMap<(String, String), Vec<Case>> = BTreeMap::new();
    for c in plan {
        if shard.is_none_or(|s| s.contains(&c.repo, &c.file)) {
            by_file
                .entry((c.repo.clone(), c.file.clone()))
                .or_default()
                .push(c.clone());
        }
    }
    let mut repo_size: BTreeMap<String, usize> = BTreeMap::new();
    for ((repo, _), cases) in &by_file {
        *repo_size.entry(repo.clone()).or_default() += cases.len();
    }
    let mut files: Vec<((String, String), Vec<Case>)> = by_file.into_iter().collect();
    let order = |((repo, file), cases): &((String, String), Vec<Case>)| {
        (
            std::cmp::Reverse(repo_size[repo]),
            repo.clone(),
            std::cmp::Reverse(cases.len()),
            file.clone(),
        )
    };
    files.sort_by_cached_key(order);
    files
}
