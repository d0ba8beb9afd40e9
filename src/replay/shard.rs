//! Sharding: which part of a plan this process runs (`--shard i/n|auto|auto/n`).

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// Which part of the plan this process runs: files whose hash falls in `index` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// `i/n` (0-based index); `auto`: from a Slurm job array (`SLURM_ARRAY_TASK_ID`,
    /// `SLURM_ARRAY_TASK_MIN`, `SLURM_ARRAY_TASK_STEP`, `SLURM_ARRAY_TASK_COUNT`, all set by
    /// Slurm); `auto/n`: the index from the environment (a Kubernetes Indexed Job sets
    /// `JOB_COMPLETION_INDEX` and nothing that says how many completions there are, so the
    /// count is given), or from Slurm, whose count must then agree.
    pub fn parse(s: &str) -> Result<Shard> {
        if let Some(rest) = s.strip_prefix("auto") {
            let count = match rest.strip_prefix('/') {
                Some(n) => Some(
                    n.trim()
                        .parse::<u32>()
                        .context("--shard auto/n: the count")?,
                ),
                None if rest.is_empty() => None,
                None => bail!("--shard takes i/n (0-based), auto or auto/n"),
            };
            return Shard::from_env(|k| std::env::var(k).ok(), count);
        }
        let (i, n) = s
            .split_once('/')
            .context("--shard takes i/n (0-based), auto or auto/n")?;
        let shard = Shard {
            index: i.trim().parse().context("--shard index")?,
            count: n.trim().parse().context("--shard count")?,
        };
        shard.check()
    }

    /// The shard named by a scheduler's environment (`get` reads a variable), with the
    /// count given on the command line if any.
    pub fn from_env(get: impl Fn(&str) -> Option<String>, count: Option<u32>) -> Result<Shard> {
        let num = |k: &str| -> Result<Option<u32>> {
            match get(k) {
                None => Ok(None),
                Some(v) => v
                    .trim()
                    .parse::<u32>()
                    .map(Some)
                    .with_context(|| format!("--shard auto: {k}={v:?} is not a number")),
            }
        };
        if let Some(id) = num("SLURM_ARRAY_TASK_ID")? {
            let min = num("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
            let step = num("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
            let slurm_count = num("SLURM_ARRAY_TASK_COUNT")?;
            let off = id.checked_sub(min).with_context(|| {
                format!(
                    "--shard auto: SLURM_ARRAY_TASK_ID {id} is below SLURM_ARRAY_TASK_MIN {min}"
                )
            })?;
            if off % step != 0 {
                bail!(
                    "--shard auto: Slurm array task {id} is not on the array's step {step} from {min}; give --shard i/n"
                );
            }
            let n = match (count, slurm_count) {
                (Some(c), Some(s)) if c != s => bail!(
                    "--shard auto/{c}: the Slurm array has {s} tasks (SLURM_ARRAY_TASK_COUNT)"
                ),
                (Some(c), _) | (None, Some(c)) => c,
                (None, None) => {
                    bail!("--shard auto: SLURM_ARRAY_TASK_COUNT is not set; give --shard auto/n")
                }
            };
            return Shard { index: off / step, count: n }
                .check()
                .context("--shard auto: an array given as a list (--array=1,4,9) has no arithmetic index; give --shard i/n");
        }
        if let Some(i) = num("JOB_COMPLETION_INDEX")? {
            let Some(n) = count else {
                bail!(
                    "--shard auto: a Kubernetes Indexed Job sets JOB_COMPLETION_INDEX but not the number of completions; give it as --shard auto/n (the Job's .spec.completions)"
                );
            };
            return Shard { index: i, count: n }.check();
        }
        bail!(
            "--shard auto: neither JOB_COMPLETION_INDEX (Kubernetes Indexed Job) nor SLURM_ARRAY_TASK_ID (Slurm job array) is set"
        )
    }

    fn check(self) -> Result<Shard> {
        if self.count == 0 || self.index >= self.count {
            bail!(
                "shard {}/{} is out of range (index is 0-based, below the count)",
                self.index,
                self.count
            );
        }
        Ok(self)
    }

    /// Whether this shard runs `repo/file` (a stable hash of the path).
    pub fn contains(&self, repo: &str, file: &str) -> bool {
        let d = crate::dataset::draw(0x5eed_5a4d, repo, file, 0);
        ((d * self.count as f64) as u32).min(self.count - 1) == self.index
    }
}
