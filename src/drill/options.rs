//! What `typist drill` is run with: the dataset, the share of lines, the fault mix, the
//! kills, and the quick and long presets.

use std::path::PathBuf;

/// A real editor's typing speed in the drill: fast, since what is drilled is the
/// processes and records, not the plugins' debounce.
pub const DRILL_KEY_INTERVAL_MS: u64 = 5;

/// What `typist drill` is run with.
#[derive(Debug, Clone)]
pub struct DrillOptions {
    /// The dataset replayed (the bundled one by default).
    pub dataset: PathBuf,
    /// Share of the dataset's code lines that are cases.
    pub rate: f64,
    /// Probability that a request meets a fault.
    pub fault_mix: f64,
    /// How many times typist is killed in the kill drill.
    pub kills: u32,
    pub jobs: u32,
    pub seed: u64,
    /// Keep the drill's folder (records, fault log) here instead of a removed temporary one.
    pub keep: Option<PathBuf>,
    /// The editor typed into: typist's own client, or a real Neovim (whose processes
    /// and the servers it starts then count as the drill's too).
    pub editor: crate::editor::EditorKind,
    /// A real editor's milliseconds between two keys.
    pub key_interval_ms: u64,
}

impl DrillOptions {
    /// About a minute on two cores: over 1,000 faults on the bundled dataset, 3 kills.
    pub fn quick(dataset: PathBuf) -> Self {
        DrillOptions {
            dataset,
            rate: 0.8,
            fault_mix: 0.45,
            kills: 3,
            jobs: 2,
            seed: 1,
            keep: None,
            editor: crate::editor::EditorKind::Typist,
            key_interval_ms: DRILL_KEY_INTERVAL_MS,
        }
    }

    /// The long drill: every code line, a heavier mix, 20 kills.
    pub fn long(dataset: PathBuf) -> Self {
        DrillOptions {
            rate: 1.0,
            fault_mix: 0.6,
            kills: 20,
            ..DrillOptions::quick(dataset)
        }
    }
}
