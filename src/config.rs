//! The run's settings in layers: `config.toml` (the default run) under the command
//! line's flags. Each layer has the same shape with every value optional; [`apply`]
//! lays one over another in one step, and the result says what the run is. Paths in
//! `config.toml` are relative to the file's folder. Between the two, `typist run` lays the
//! dataset a plan says it was sampled from (`cli/run.rs`).
//!
//! [`apply`]: ConfigFile::apply

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::dataset::SampleOptions;
use crate::editor::{EditorKind, TriggerKind};
use crate::replay::RunConditions;
use crate::replay::typing::{ContextMode, Granularity, TypingMode};

/// `config.toml`: a `[run]` layer and the editor conditions.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    #[serde(default)]
    pub run: RunSection,
    #[serde(default)]
    pub conditions: RunConditions,
}

/// One layer of the run's settings (`[run]` of `config.toml`, or the flags).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSection {
    pub dataset: Option<PathBuf>,
    pub plan: Option<PathBuf>,
    /// Empty: not set in this layer.
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

/// The flags' layer over `[conditions]`: each set value replaces the file's.
#[derive(Debug, Clone, Default)]
pub struct ConditionsLayer {
    pub context: Option<ContextMode>,
    pub suffix_lines: Option<u32>,
    pub typing: Option<TypingMode>,
    pub granularity: Option<Granularity>,
    pub typed_prefix: Option<u32>,
    pub trigger: Option<TriggerKind>,
    pub settle_ms: Option<u64>,
    pub open_tabs: Option<u32>,
    pub latency: Option<bool>,
    pub editor: Option<EditorKind>,
    pub key_interval_ms: Option<u64>,
    /// Read and hashed when the layer is applied.
    pub editor_config: Option<PathBuf>,
    /// Empty: not set in this layer.
    pub editor_namespaces: Vec<String>,
    /// Empty: not set in this layer.
    pub editor_highlights: Vec<String>,
    pub display_deadline_ms: Option<u64>,
    pub list_rule: Option<crate::editor::ranking::ListRule>,
    /// VS Code extensions (`--extension`, repeatable); empty: not set in this layer.
    pub editor_extensions: Vec<String>,
}

/// A layer of settings laid over a [`ConfigFile`].
#[derive(Debug, Clone, Default)]
pub struct Layer {
    pub run: RunSection,
    pub conditions: ConditionsLayer,
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

    /// `path` if given, else `./config.toml` when there is one, else nothing set.
    pub fn load_or_default(path: Option<&Path>) -> Result<ConfigFile> {
        let default = Path::new("config.toml");
        match path {
            Some(p) => ConfigFile::load(p),
            None if default.is_file() => ConfigFile::load(default),
            None => Ok(ConfigFile::default()),
        }
    }

    /// `top` laid over this file: every value `top` sets wins.
    pub fn apply(self, top: Layer) -> ConfigFile {
        ConfigFile {
            run: self.run.apply(top.run),
            conditions: top.conditions.apply(self.conditions),
        }
    }
}

impl RunSection {
    /// `top` laid over this layer.
    pub fn apply(self, top: RunSection) -> RunSection {
        RunSection {
            dataset: top.dataset.or(self.dataset),
            plan: top.plan.or(self.plan),
            assistants: if top.assistants.is_empty() {
                self.assistants
            } else {
                top.assistants
            },
            out: top.out.or(self.out),
            rate: top.rate.or(self.rate),
            seed: top.seed.or(self.seed),
            jobs: top.jobs.or(self.jobs),
            passes: top.passes.or(self.passes),
            lines: top.lines.or(self.lines),
            max_per_file: top.max_per_file.or(self.max_per_file),
            max_per_repo: top.max_per_repo.or(self.max_per_repo),
            single_repo: top.single_repo.or(self.single_repo),
            editors: top.editors.or(self.editors),
        }
    }

    /// How a dataset is sampled into a plan, defaults where nothing is set; a rate that
    /// is no probability is refused (it was taken as "every line" or "none").
    pub fn sample_options(&self) -> anyhow::Result<SampleOptions> {
        let d = SampleOptions::default();
        if let Some(r) = self.rate
            && !(r > 0.0 && r <= 1.0)
        {
            anyhow::bail!(
                "--rate {r}: the share of code lines that are cases, above 0 and at most 1 (the study used 0.01; --lines all takes every line)"
            );
        }
        if let Some(l) = self.lines.as_deref()
            && l != "all"
        {
            anyhow::bail!(
                "lines = {l:?}: the one value is \"all\" (every code line a case); leave it out to sample at the rate"
            );
        }
        Ok(SampleOptions {
            rate: self.rate.unwrap_or(d.rate),
            seed: self.seed.unwrap_or(d.seed),
            all_lines: self.lines.as_deref() == Some("all"),
            max_per_file: self.max_per_file,
            max_per_repo: self.max_per_repo,
        })
    }

    /// Refuses counts that were silently read as 1: `--jobs 0`, `--passes 0`.
    pub fn check_counts(&self) -> anyhow::Result<()> {
        if self.jobs == Some(0) {
            anyhow::bail!("--jobs 0: a run needs at least one worker (--jobs 1 or more)");
        }
        if self.passes == Some(0) {
            anyhow::bail!("--passes 0: a run replays its plan at least once (--passes 1 or more)");
        }
        Ok(())
    }
}

impl ConditionsLayer {
    /// This layer over `base`.
    pub fn apply(self, base: RunConditions) -> RunConditions {
        let mut c = base;
        c.context = self.context.unwrap_or(c.context);
        c.suffix_lines = self.suffix_lines.unwrap_or(c.suffix_lines);
        c.typing = self.typing.unwrap_or(c.typing);
        c.granularity = self.granularity.unwrap_or(c.granularity);
        c.typed_prefix = self.typed_prefix.unwrap_or(c.typed_prefix);
        c.editor.trigger = self.trigger.unwrap_or(c.editor.trigger);
        c.settle_ms = self.settle_ms.unwrap_or(c.settle_ms);
        c.open_tabs = self.open_tabs.unwrap_or(c.open_tabs);
        c.latency = self.latency.unwrap_or(c.latency);
        c.app.kind = self.editor.unwrap_or(c.app.kind);
        c.list_rule = self.list_rule.unwrap_or(c.list_rule);
        c.app.key_interval_ms = self.key_interval_ms.unwrap_or(c.app.key_interval_ms);
        if let Some(p) = self.editor_config {
            c.app.config = Some(p.display().to_string());
        }
        if !self.editor_namespaces.is_empty() {
            c.app.namespaces = self.editor_namespaces;
        }
        if !self.editor_highlights.is_empty() {
            c.app.highlights = self.editor_highlights;
        }
        if !self.editor_extensions.is_empty() {
            // A file as an absolute path; a bad entry is kept as given and refused,
            // named, by the run's editor check.
            c.app.extensions = self
                .editor_extensions
                .iter()
                .map(|e| {
                    crate::editor::profile::resolve_extension(e, None).unwrap_or_else(|_| e.clone())
                })
                .collect();
        }
        c.app.display_deadline_ms = self
            .display_deadline_ms
            .unwrap_or(c.app.display_deadline_ms);
        c.app.settings = crate::editor::editors::user_settings(c.app.kind);
        c.app.arrival =
            (c.app.kind != EditorKind::Typist).then_some(crate::editor::Arrival::EnterAbove);
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_win_over_the_file_and_unset_flags_keep_it() {
        let file = ConfigFile {
            run: RunSection {
                assistants: vec!["a".into()],
                rate: Some(0.05),
                seed: Some(1),
                ..Default::default()
            },
            conditions: RunConditions {
                settle_ms: 7,
                ..Default::default()
            },
        };
        let flags = Layer {
            run: RunSection {
                seed: Some(9),
                ..Default::default()
            },
            conditions: ConditionsLayer {
                typed_prefix: Some(4),
                latency: Some(false),
                ..Default::default()
            },
        };
        let s = file.apply(flags);
        assert_eq!(s.run.assistants, ["a"]);
        assert_eq!((s.run.rate, s.run.seed), (Some(0.05), Some(9)));
        assert_eq!(s.conditions.settle_ms, 7);
        assert_eq!(s.conditions.typed_prefix, 4);
        assert!(!s.conditions.latency);
        let o = s.run.sample_options().unwrap();
        assert_eq!((o.rate, o.seed, o.all_lines), (0.05, 9, false));
    }
}
