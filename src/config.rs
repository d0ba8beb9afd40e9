//! `config.toml`: the default run (`typist run` with no flags). Flags on the command
//! line override it; paths in it are relative to the file's folder.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::replay::RunConditions;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    #[serde(default)]
    pub run: RunSection,
    #[serde(default)]
    pub conditions: RunConditions,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSection {
    pub dataset: Option<PathBuf>,
    pub plan: Option<PathBuf>,
    pub assistants: Vec<String>,
    pub out: Option<PathBuf>,
    pub rate: Option<f64>,
    pub seed: Option<u64>,
    pub jobs: Option<usize>,
    pub passes: Option<u32>,
    /// `"all"` replays every code line.
    pub lines: Option<String>,
    pub max_per_file: Option<usize>,
    pub max_per_repo: Option<usize>,
    pub single_repo: Option<bool>,
    pub editors: Option<PathBuf>,
}

impl ConfigFile {
    /// Reads `path`, making its relative paths relative to its folder.
    pub fn load(path: &Path) -> Result<ConfigFile> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let mut c: ConfigFile =
            toml::from_str(&text).with_context(|| format!("invalid config {}", path.display()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        for p in [
            &mut c.run.dataset,
            &mut c.run.plan,
            &mut c.run.out,
            &mut c.run.editors,
        ]
        .into_iter()
        .flatten()
        {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        }
        Ok(c)
    }
}
