//! Benchmarks: named, fixed plans on pinned datasets, defined in the data folder's
//! `benchmarks.toml`. A submission is measured on exactly its benchmark's plan, so every
//! two submissions on a benchmark share their cases. A benchmark names a plan file, or a
//! dataset with a sampling rate and seed (and the kind of cases) from which the service
//! samples the plan once, at its first start, into `benchmarks/NAME/plan.jsonl`. Each
//! plan is pinned by its sha256 (`plan.sha256` beside it) at the first start: a plan
//! changed since is refused at start, naming the file.
//!
//! With no `benchmarks.toml`, the service writes one with the default run's benchmark
//! when it is given one (`typist serve` gives `./config.toml`'s dataset, rate and seed:
//! the README's main job, as lines).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// `benchmarks.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BenchmarksFile {
    #[serde(default)]
    benchmark: Vec<BenchmarkSpec>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct BenchmarkSpec {
    name: String,
    #[serde(default)]
    description: String,
    /// A plan file (relative to the data folder).
    plan: Option<PathBuf>,
    /// Or a dataset to sample the plan from (relative to the data folder).
    dataset: Option<PathBuf>,
    rate: Option<f64>,
    seed: Option<u64>,
    /// `lines` (the default) or `tokens`.
    cases: Option<String>,
}

/// A benchmark ready to measure on.
#[derive(Debug, Clone, Serialize)]
pub struct Benchmark {
    pub name: String,
    pub description: String,
    #[serde(skip)]
    pub plan: PathBuf,
    pub plan_sha256: String,
    /// Cases in the plan.
    pub cases: u64,
}

/// The default run's sampling, for a data folder with no `benchmarks.toml`.
#[derive(Debug, Clone)]
pub struct DefaultBenchmark {
    pub dataset: PathBuf,
    pub rate: f64,
    pub seed: u64,
}

/// The benchmarks of `data`, their plans sampled and pinned (`typist` is the program
/// that samples them).
pub fn load(
    data: &Path,
    typist: &Path,
    default: Option<&DefaultBenchmark>,
) -> Result<Vec<Benchmark>> {
    let file = data.join("benchmarks.toml");
    if !file.is_file() {
        write_default(&file, default)?;
    }
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("cannot read {}", file.display()))?;
    let specs: BenchmarksFile =
        toml::from_str(&text).with_context(|| format!("{} is not valid", file.display()))?;
    if specs.benchmark.is_empty() {
        bail!(
            "{} defines no benchmark: add a [[benchmark]] with a name and a plan or a dataset",
            file.display()
        );
    }
    let mut out: Vec<Benchmark> = Vec::new();
    for s in specs.benchmark {
        if !valid_name(&s.name) {
            bail!(
                "{}: benchmark name {:?}: use letters, digits, '-', '_' and '.'",
                file.display(),
                s.name
            );
        }
        if out.iter().any(|b| b.name == s.name) {
            bail!("{}: two benchmarks named {:?}", file.display(), s.name);
        }
        let b = ready(data, typist, &s)
            .with_context(|| format!("{}: benchmark {:?}", file.display(), s.name))?;
        out.push(b);
    }
    Ok(out)
}

/// A name fit for a folder and a URL path.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The default run's benchmark written into `file`.
fn write_default(file: &Path, default: Option<&DefaultBenchmark>) -> Result<()> {
    let Some(d) = default else {
        bail!(
            "{} does not exist and there is no ./config.toml naming a dataset: write it, e.g.\n\
             [[benchmark]]\nname = \"default\"\ndataset = \"/path/to/dataset\"\nrate = 0.05\nseed = 1",
            file.display()
        );
    };
    let dataset = std::fs::canonicalize(&d.dataset)
        .with_context(|| format!("the default run's dataset {}", d.dataset.display()))?;
    let text = format!(
        "# The service's benchmarks (typist serve): each a fixed plan every submission is\n\
         # measured on. Written at the first start from ./config.toml's default run.\n\n\
         [[benchmark]]\nname = \"default\"\n\
         description = \"The default run's plan (config.toml): lines of real code\"\n\
         dataset = {}\nrate = {}\nseed = {}\n",
        toml::Value::String(dataset.to_string_lossy().into_owned()),
        d.rate,
        d.seed,
    );
    std::fs::write(file, text).with_context(|| format!("cannot write {}", file.display()))
}

fn ready(data: &Path, typist: &Path, s: &BenchmarkSpec) -> Result<Benchmark> {
    let dir = data.join("benchmarks").join(&s.name);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot make {}", dir.display()))?;
    let plan = match (&s.plan, &s.dataset) {
        (Some(p), None) => data.join(p),
        (None, Some(d)) => {
            let plan = dir.join("plan.jsonl");
            if !plan.is_file() {
                sample(typist, &data.join(d), s, &plan)?;
            }
            plan
        }
        _ => bail!("give either `plan` or `dataset` (with `rate` and `seed`)"),
    };
    let bytes = std::fs::read(&plan).with_context(|| format!("cannot read {}", plan.display()))?;
    let sha = crate::digest::sha256_hex(&bytes);
    let pin = dir.join("plan.sha256");
    match std::fs::read_to_string(&pin) {
        Ok(p) if p.trim() != sha => bail!(
            "{} changed since the benchmark was pinned (sha256 {} then, {sha} now): \
             its submissions would not share their cases; restore it or name a new benchmark",
            plan.display(),
            p.trim()
        ),
        Ok(_) => {}
        Err(_) => std::fs::write(&pin, format!("{sha}\n"))
            .with_context(|| format!("cannot write {}", pin.display()))?,
    }
    let cases = bytes
        .split(|&b| b == b'\n')
        .filter(|l| l.starts_with(b"{\"case\""))
        .count() as u64;
    if cases == 0 {
        bail!("{} holds no case", plan.display());
    }
    Ok(Benchmark {
        name: s.name.clone(),
        description: s.description.clone(),
        plan,
        plan_sha256: sha,
        cases,
    })
}

/// `typist sample` of the benchmark's dataset into `plan`.
fn sample(typist: &Path, dataset: &Path, s: &BenchmarkSpec, plan: &Path) -> Result<()> {
    let part = plan.with_extension("jsonl.part");
    let mut cmd = Command::new(typist);
    cmd.arg("sample")
        .arg("--dataset")
        .arg(dataset)
        .args(["--cases", s.cases.as_deref().unwrap_or("lines")])
        .args(["--rate", &s.rate.unwrap_or(0.05).to_string()])
        .args(["--seed", &s.seed.unwrap_or(1).to_string()])
        .arg("--out")
        .arg(&part);
    let o = cmd
        .output()
        .with_context(|| format!("cannot start {}", typist.display()))?;
    if !o.status.success() {
        bail!(
            "sampling {} failed: {}",
            dataset.display(),
            String::from_utf8_lossy(&o.stderr).trim()
        );
    }
    std::fs::rename(&part, plan).with_context(|| format!("cannot write {}", plan.display()))
}

/// The dataset folder a plan was sampled from (its header's), when it names one that
/// exists.
pub fn plan_dataset(plan: &Path) -> Option<PathBuf> {
    let (_, source) = crate::dataset::read_plan(plan).ok()?;
    let d = source?.resolve(plan);
    d.is_dir().then_some(d)
}
