//! The plan file: its header (where it was sampled from), its cases as JSON Lines, its
//! hash, and the files changed since it was made.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{Case, Dataset};

/// Where a plan was sampled from, kept in its first line (`{"plan": {...}}`) so that
/// `typist run --plan` finds the dataset by itself and names it when they disagree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanSource {
    /// The dataset folder, absolute.
    pub dataset: PathBuf,
    /// The same, relative to the plan's folder (when both share a root): tried first,
    /// so a plan and its dataset can move together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset_relative: Option<PathBuf>,
    #[serde(default)]
    pub single_repo: bool,
}

impl PlanSource {
    pub fn new(dataset: &Path, single_repo: bool, plan: &Path) -> PlanSource {
        let abs = |p: &Path| {
            std::fs::canonicalize(p).unwrap_or_else(|_| {
                std::env::current_dir()
                    .map(|d| d.join(p))
                    .unwrap_or_else(|_| p.to_path_buf())
            })
        };
        let dataset = abs(dataset);
        let plan_dir = abs(plan
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new(".")));
        PlanSource {
            dataset_relative: relative_to(&dataset, &plan_dir),
            dataset,
            single_repo,
        }
    }

    /// The dataset folder, as seen from a plan at `plan`.
    pub fn resolve(&self, plan: &Path) -> PathBuf {
        let plan_dir = plan
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        match &self.dataset_relative {
            Some(r) if plan_dir.join(r).is_dir() => plan_dir.join(r),
            _ => self.dataset.clone(),
        }
    }
}

/// `path` relative to `base` (both absolute), through `..` where needed.
fn relative_to(path: &Path, base: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let p: Vec<Component> = path.components().collect();
    let b: Vec<Component> = base.components().collect();
    if p.first() != b.first() {
        return None;
    }
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &p[common..] {
        out.push(c);
    }
    Some(if out.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        out
    })
}

#[derive(Serialize, Deserialize)]
struct PlanHeader {
    plan: PlanSource,
}

pub fn write_plan(path: &Path, cases: &[Case], source: Option<&PlanSource>) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut w = std::io::BufWriter::new(
        std::fs::File::create(path)
            .with_context(|| format!("cannot write plan {}", path.display()))?,
    );
    if let Some(s) = source {
        serde_json::to_writer(&mut w, &PlanHeader { plan: s.clone() })?;
        w.write_all(b"\n")?;
    }
    for c in cases {
        serde_json::to_writer(&mut w, c)?;
        w.write_all(b"\n")?;
    }
    w.flush()?;
    Ok(())
}

/// The cases of a plan file, and where it was sampled from when it says so (plans
/// written before the header existed have none).
pub fn read_plan(path: &Path) -> Result<(Vec<Case>, Option<PlanSource>)> {
    let f = std::fs::File::open(path)
        .with_context(|| format!("cannot open plan {}", path.display()))?;
    let mut out = Vec::new();
    let mut source = None;
    for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
        let line = line.with_context(|| format!("cannot read plan {}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        if i == 0 && line.starts_with("{\"plan\"") {
            let h: PlanHeader = serde_json::from_str(&line)
                .with_context(|| format!("{}:1: malformed plan header", path.display()))?;
            source = Some(h.plan);
            continue;
        }
        let c: Case = serde_json::from_str(&line)
            .with_context(|| format!("{}:{}: malformed case", path.display(), i + 1))?;
        out.push(c);
    }
    Ok((out, source))
}

/// `sha256:` of the plan's canonical JSON Lines.
pub fn plan_hash(cases: &[Case]) -> String {
    let mut h = Sha256::new();
    for c in cases {
        h.update(serde_json::to_vec(c).unwrap_or_default());
        h.update(b"\n");
    }
    let d = h.finalize();
    format!("sha256:{}", crate::digest::hex(&d))
}

/// Files whose content changed (or vanished) since the plan was made.
pub fn changed_files(ds: &Dataset, cases: &[Case]) -> Vec<String> {
    let mut want: BTreeMap<(&str, &str), &str> = BTreeMap::new();
    for c in cases {
        want.insert((&c.repo, &c.file), &c.file_hash);
    }
    want.into_iter()
        .filter(|((repo, file), hash)| ds.file(repo, file).map(|f| f.hash.as_str()) != Some(*hash))
        .map(|((repo, file), _)| format!("{repo}/{file}"))
        .collect()
}
