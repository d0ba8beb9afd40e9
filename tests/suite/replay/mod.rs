//! The replay engine through the CLI, on the bundled dataset, against typist's own host
//! (the n-gram baseline) and Copilot's real server: determinism across jobs, shards and
//! a SIGKILL, bad inputs, faults (crash, hang), and refusal of completion-only servers.
//! One file per subject; this one holds the helpers they share.

mod faults;
mod inputs;
mod interrupts;
mod resume;
mod runs;
mod typing;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{DATASET, TYPIST, editors_with, ok, typist};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn dataset() -> PathBuf {
    PathBuf::from(DATASET)
}

fn run(args: &[&str]) -> Output {
    typist()
        .arg("run")
        .args(["--config", "/dev/null", "--quiet", "--no-latency"])
        .args(args)
        .output()
        .unwrap()
}

/// The run finished but `name` answered no case: exit 3, and stderr names it.
fn no_answers(o: &Output, name: &str) {
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(&format!("no answered case from {name}")),
        "{stderr}"
    );
}

fn records(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("records.jsonl")).unwrap()
}

fn parsed(dir: &Path) -> Vec<Value> {
    records(dir)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

const DS_ARGS: [&str; 4] = ["--rate", "0.05", "--seed", "3"];

/// The uninterrupted run a cut one is compared with: `common` and [`DS_ARGS`] into
/// `tmp/whole`.
fn whole_run(tmp: &std::path::Path, common: &[&str]) -> std::path::PathBuf {
    let whole = tmp.join("whole");
    ok(&run(&[
        common,
        &DS_ARGS[..],
        &["--out", whole.to_str().unwrap()],
    ]
    .concat()));
    whole
}
