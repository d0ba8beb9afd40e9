//! Token plans for the completion-list tests: a case with the plan rule's actions, a
//! plan replayed by `typist run` into records by case id, a shipped profile with a
//! patient deadline, and the check that a server is installed.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use typist::dataset::Case;
use typist::dataset::token::{Action, TokenCase, TokenContext, TokenKind};
use typist::digest::sha256_hex;

use super::{ok, typist};

/// A token case at 1-based `line`, character `column`, with the action list of the
/// plan rule: p = 0 → Open, Complete(tc); p > 0 after a trigger character → Open,
/// Complete(tc), Type each; otherwise Open, Type c1, Complete, Type the rest.
#[allow(clippy::too_many_arguments)]
pub fn case(
    repo: &str,
    file: &str,
    text: &str,
    line: u32,
    column: u32,
    kind: TokenKind,
    p: u32,
    context: TokenContext,
) -> Case {
    let l = text.split('\n').nth(line as usize - 1).unwrap();
    let chars: Vec<char> = l.chars().collect();
    let token: String = chars[column as usize..]
        .iter()
        .take_while(|c| c.is_alphanumeric() || **c == '_')
        .collect();
    let before = column
        .checked_sub(1)
        .map(|i| chars[i as usize])
        .filter(|c| matches!(c, '.' | ':' | '>'));
    let tc = before.map(String::from);
    let typed: Vec<Action> = token
        .chars()
        .take(p as usize)
        .map(|c| Action::Type { text: c.into() })
        .collect();
    let mut actions = vec![Action::Open];
    if p == 0 || tc.is_some() {
        actions.push(Action::Complete {
            trigger_character: tc,
        });
        actions.extend(typed);
    } else {
        actions.push(typed[0].clone());
        actions.push(Action::Complete {
            trigger_character: None,
        });
        actions.extend(typed[1..].iter().cloned());
    }
    Case {
        case: format!("{repo}/{file}:{line}:{}+{p}", column + 1),
        repo: repo.into(),
        file: file.into(),
        line,
        language: match file.rsplit('.').next() {
            Some("py") => "python",
            Some("c" | "h") => "c",
            Some("cc" | "cpp") => "cpp",
            Some("js") => "javascript",
            _ => "typescript",
        }
        .into(),
        expected: token,
        file_hash: format!("sha256:{}", sha256_hex(text.as_bytes())),
        token: Some(TokenCase {
            column,
            kind,
            prefix_len: p,
            context,
            actions,
        }),
        block: None,
    }
}

/// Writes the repository's files under `dir/ds/REPO` and the plan, runs it, and returns
/// the records by case id.
pub fn run_plan(
    dir: &Path,
    repo: &str,
    files: &[(&str, &str)],
    plan: &[Case],
    assistant: &str,
    editors: Option<&Path>,
) -> BTreeMap<String, Value> {
    let ds = dir.join("ds");
    for (name, text) in files {
        let p = ds.join(repo).join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    run_plan_on(dir, &ds, plan, assistant, editors)
}

/// Writes the plan under `dir`, runs it on the dataset `ds` (every case answered with
/// a list, empty or not) and returns the records by case id.
pub fn run_plan_on(
    dir: &Path,
    ds: &Path,
    plan: &[Case],
    assistant: &str,
    editors: Option<&Path>,
) -> BTreeMap<String, Value> {
    run_plan_on_with(dir, ds, plan, assistant, editors, &[])
}

/// [`run_plan_on`] with more `typist run` arguments (`--editor neovim`, …); the output
/// folder is named after them.
pub fn run_plan_on_with(
    dir: &Path,
    ds: &Path,
    plan: &[Case],
    assistant: &str,
    editors: Option<&Path>,
    extra: &[&str],
) -> BTreeMap<String, Value> {
    let plan_path = dir.join("plan.jsonl");
    typist::dataset::write_plan(&plan_path, plan, None).unwrap();
    let out = dir.join(format!("out-{assistant}{}", extra.join("")));
    let mut cmd = typist();
    cmd.arg("run")
        .arg("--dataset")
        .arg(ds)
        .arg("--plan")
        .arg(&plan_path)
        .args([
            "--assistant",
            assistant,
            "--jobs",
            "1",
            "--no-latency",
            "--quiet",
        ])
        .args(extra)
        .arg("--out")
        .arg(&out);
    if let Some(e) = editors {
        cmd.arg("--editors").arg(e);
    }
    let o = cmd.output().unwrap();
    ok(&o);
    let text = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
    let records: BTreeMap<String, Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|r| (r["case"].as_str().unwrap().to_string(), r))
        .collect();
    assert_eq!(records.len(), plan.len(), "one record per case");
    for r in records.values() {
        assert_eq!(r["kind"], "completion", "{r}");
        assert!(
            matches!(r["outcome"].as_str(), Some("suggestion" | "empty")),
            "{assistant} failed a case: {r}"
        );
    }
    records
}

/// A folder holding `name`'s shipped profile with a 60 s request deadline: on a loaded
/// machine a server's first answer may take longer than the shipped 10 s, and this test
/// is about ranks, not speed.
pub fn patient_profile(dir: &Path, name: &str) -> std::path::PathBuf {
    let editors = dir.join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("editors")
        .join(format!("{name}.toml"));
    let text: Vec<String> = std::fs::read_to_string(shipped)
        .unwrap()
        .lines()
        .map(|l| {
            if l.starts_with("request_timeout_ms") {
                "request_timeout_ms = 60000".to_string()
            } else {
                l.to_string()
            }
        })
        .collect();
    std::fs::write(editors.join(format!("{name}.toml")), text.join("\n") + "\n").unwrap();
    editors
}

/// The first `n` Python cases of the bundled dataset's token plan (`--rate 0.01 --seed 1
/// --context prefix`), written to `dir/plan.jsonl` with the plan's header line.
pub fn python_token_plan(dir: &Path, n: usize) -> std::path::PathBuf {
    let all = dir.join("all.jsonl");
    ok(&typist()
        .args(["sample", "--dataset", super::DATASET, "--cases", "tokens"])
        .args([
            "--rate",
            "0.01",
            "--seed",
            "1",
            "--context",
            "prefix",
            "--out",
        ])
        .arg(&all)
        .output()
        .unwrap());
    let text = std::fs::read_to_string(&all).unwrap();
    let mut lines = text.lines();
    let mut plan = vec![lines.next().unwrap().to_string()];
    plan.extend(
        lines
            .filter(|l| serde_json::from_str::<Value>(l).unwrap()["language"] == "python")
            .take(n)
            .map(str::to_string),
    );
    let path = dir.join("plan.jsonl");
    std::fs::write(&path, plan.join("\n") + "\n").unwrap();
    path
}

/// `plan` replayed with `assistant` (its profile in `editors`) through `editor`, two
/// jobs, keys 20 ms apart, into `dir/EDITOR`; returns that folder.
pub fn run_in_editor(
    dir: &Path,
    plan: &Path,
    editors: &Path,
    assistant: &str,
    editor: &str,
) -> std::path::PathBuf {
    let out = dir.join(editor);
    ok(&typist()
        .args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
        .args([
            "--dataset",
            super::DATASET,
            "--assistant",
            assistant,
            "--jobs",
            "2",
        ])
        .arg("--plan")
        .arg(plan)
        .arg("--editors")
        .arg(editors)
        .args(["--editor", editor, "--key-interval-ms", "20", "--out"])
        .arg(&out)
        .output()
        .unwrap());
    out
}

/// Fails the test when the profile's server is not installed, naming the install step:
/// every server these tests use is one `scripts/install-servers.sh` installs, so a
/// missing one is a broken set-up, never a reason to pass.
pub fn require_installed(name: &str) {
    let p = typist::editor::profile::find_profile(name, None).unwrap();
    assert!(
        p.resolve_command().is_some(),
        "{name} is not installed ({}): run scripts/install-servers.sh",
        p.install_hint
    );
}

pub fn ranks(records: &BTreeMap<String, Value>) -> BTreeMap<&str, Option<u64>> {
    records
        .iter()
        .map(|(k, r)| (k.as_str(), r["rank"].as_u64()))
        .collect()
}
