//! `typist compare A B`: two runs scored as labelled arms. Each assistant of run A is
//! read as `LABEL_A/assistant` (and B's as `LABEL_B/…`), so the score's pairwise
//! figures pair the two runs on their shared cases; what differs between the runs (the
//! plan, the case set, the conditions in their manifests) is said before the table, and
//! runs that share no case are refused.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Result, bail};
use serde_json::Value;

use super::args::CompareArgs;
use typist::replay::Manifest;

pub fn compare(a: CompareArgs) -> Result<ExitCode> {
    let files = super::records_files(a.runs.clone())?;
    let labels = labels(&a.runs, &a.labels)?;
    let table = typist::score::read_records_labelled(&files, &labels, false, a.threads)?;
    super::records_read(&table, &files)?;
    let cases = cases_by_run(&table, &labels, a.pass);
    for (i, c) in cases.iter().enumerate() {
        if c.is_empty() {
            bail!(
                "{} holds no record of pass {}: nothing to compare",
                files[i].display(),
                a.pass
            );
        }
    }
    let shared = cases[0].intersection(&cases[1]).count();
    let (only_a, only_b) = (cases[0].len() - shared, cases[1].len() - shared);
    let [la, lb] = [&labels[0], &labels[1]];
    if shared == 0 {
        bail!(
            "{la} ({}) and {lb} ({}) share no case ({} and {} cases): compare pairs two runs of the same plan",
            a.runs[0].display(),
            a.runs[1].display(),
            cases[0].len(),
            cases[1].len()
        );
    }
    let manifests: Vec<Option<Manifest>> = files.iter().map(|f| Manifest::beside(f)).collect();
    let notes = differences(&manifests, &labels, &files, (shared, only_a, only_b));
    let summary = typist::score::summarize(
        &table,
        &typist::score::Options {
            bootstrap: a.bootstrap,
            seed: a.seed,
            pass: a.pass,
            curve_bands: false,
        },
    );
    super::warn_duplicates("compare", summary.duplicates, &files);
    if a.json {
        // The notes are in the JSON; a person reading the terminal sees them too.
        for n in &notes {
            eprintln!("typist compare: {n}");
        }
        let mut v = serde_json::to_value(&summary)?;
        v["compare"] = serde_json::json!({
            "runs": labels.iter().zip(&files).map(|(l, f)| serde_json::json!({
                "label": l,
                "records": f.display().to_string(),
            })).collect::<Vec<_>>(),
            "shared_cases": shared,
            "only_a": only_a,
            "only_b": only_b,
            "notes": notes,
        });
        out!("{}", serde_json::to_string(&v)?);
    } else {
        out!(
            "{la} = {}, {lb} = {}: {shared} shared cases ({only_a} only in {la}, {only_b} only in {lb}); paired p-values on the shared cases",
            files[0].display(),
            files[1].display()
        );
        for n in &notes {
            out!("note: {n}");
        }
        out!("{}", typist::score::score_table(&summary));
    }
    let silent = super::silent_assistants(&summary);
    if !silent.is_empty() {
        eprintln!(
            "typist compare: no answered case from {}",
            silent.join(", ")
        );
        return Ok(ExitCode::from(super::EXIT_NO_ANSWERS));
    }
    Ok(ExitCode::SUCCESS)
}

/// The runs' labels: as given (two), else each run folder's name (a records file's
/// folder); they must differ and hold no `/`.
fn labels(runs: &[PathBuf], given: &[String]) -> Result<Vec<String>> {
    let labels: Vec<String> = match given.len() {
        0 => runs.iter().map(|r| folder_name(r)).collect(),
        2 => given.to_vec(),
        n => {
            bail!("--label: {n} given; give two (--label A --label B, in the runs' order), or none")
        }
    };
    if let Some(l) = labels.iter().find(|l| l.is_empty() || l.contains('/')) {
        bail!("--label {l:?}: a label is a non-empty name without '/'");
    }
    if labels[0] == labels[1] {
        bail!(
            "both runs would be labelled {:?}: name them with --label A --label B",
            labels[0]
        );
    }
    Ok(labels)
}

fn folder_name(run: &Path) -> String {
    let abs = run.canonicalize().unwrap_or_else(|_| run.to_path_buf());
    let dir = if abs.is_dir() {
        abs.as_path()
    } else {
        abs.parent().unwrap_or(&abs)
    };
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Each run's cases of pass `pass` (by the table's case ids).
fn cases_by_run(table: &typist::score::Table, labels: &[String], pass: u32) -> [BTreeSet<u32>; 2] {
    let run_of: Vec<Option<usize>> = table
        .assistants
        .iter()
        .map(|name| {
            labels.iter().position(|l| {
                name.strip_prefix(l.as_str())
                    .is_some_and(|r| r.starts_with('/'))
            })
        })
        .collect();
    let mut cases: [BTreeSet<u32>; 2] = Default::default();
    for row in table.rows.iter().filter(|r| r.pass == pass) {
        if let Some(Some(i)) = run_of.get(row.assistant() as usize) {
            cases[*i].insert(row.case);
        }
    }
    cases
}

/// What differs between the two runs, one line each: the plan and the case set, and
/// the conditions their manifests record.
fn differences(
    manifests: &[Option<Manifest>],
    labels: &[String],
    files: &[PathBuf],
    (shared, only_a, only_b): (usize, usize, usize),
) -> Vec<String> {
    let mut notes = Vec::new();
    let [la, lb] = [&labels[0], &labels[1]];
    for (m, f) in manifests.iter().zip(files) {
        if m.is_none() {
            notes.push(format!(
                "no manifest beside {}: its plan and conditions are unknown",
                f.display()
            ));
        }
    }
    let (Some(ma), Some(mb)) = (&manifests[0], &manifests[1]) else {
        if only_a + only_b > 0 {
            notes.push(format!(
                "the case sets differ: {only_a} only in {la}, {only_b} only in {lb}; the paired figures are on the {shared} shared cases"
            ));
        }
        return notes;
    };
    if ma.plan.hash != mb.plan.hash {
        notes.push(format!(
            "the plans differ ({la}: {} cases, {}; {lb}: {} cases, {}): {shared} shared cases, {only_a} only in {la}, {only_b} only in {lb}; the paired figures are on the shared cases",
            ma.plan.cases, ma.plan.hash, mb.plan.cases, mb.plan.hash
        ));
    } else if only_a + only_b > 0 {
        notes.push(format!(
            "one plan, but the recorded cases differ (a run not finished, or cases its conditions skip): {only_a} only in {la}, {only_b} only in {lb}; the paired figures are on the {shared} shared cases"
        ));
    }
    let (ca, cb) = (
        leaves(&serde_json::to_value(&ma.conditions).unwrap_or_default()),
        leaves(&serde_json::to_value(&mb.conditions).unwrap_or_default()),
    );
    let keys: BTreeSet<&String> = ca.keys().chain(cb.keys()).collect();
    let none = Value::Null;
    let differ: Vec<String> = keys
        .into_iter()
        .filter_map(|k| {
            let (x, y) = (ca.get(k).unwrap_or(&none), cb.get(k).unwrap_or(&none));
            (x != y).then(|| format!("{k} {la} {x}, {lb} {y}"))
        })
        .collect();
    if !differ.is_empty() {
        notes.push(format!("the conditions differ: {}", differ.join("; ")));
    }
    if ma.passes != mb.passes {
        notes.push(format!(
            "the passes differ: {la} {}, {lb} {}",
            ma.passes, mb.passes
        ));
    }
    notes
}

/// A JSON value's leaves by dotted path.
fn leaves(v: &Value) -> BTreeMap<String, Value> {
    fn walk(prefix: &str, v: &Value, out: &mut BTreeMap<String, Value>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let p = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&p, x, out);
                }
            }
            v => {
                out.insert(prefix.to_string(), v.clone());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk("", v, &mut out);
    out
}
