//! Neovim plugins that sign in (issue 41): `typist login --editor neovim` runs the
//! plugin's sign-in command in a Neovim started as a run's are, types the answer into
//! its prompt, and keeps the plugin's key file in the vault (`$TYPIST_CONFIG_DIR`, a
//! temporary folder here); runs start signed in from it, write back what the plugin
//! rotated, and stop, naming `typist login`, when the plugin is not signed in. The
//! plugin is `fixtures/neovim/keyfile.lua` (in the manner of codeium.nvim), through the
//! profiles of `fixtures/neovim/editors/`. Neovim must be installed: a missing one fails
//! these tests, never skips them.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use super::neovim::require_neovim;
use crate::common::{DATASET, ok, typist};

const EDITORS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/neovim/editors");
const KEY_FILE: &str = "home/.cache/nvim/typist-keyfile/config.json";

/// typist with its config folder (and vault) in `cfg`.
fn typist_in(cfg: &Path) -> Command {
    require_neovim();
    let mut c = typist();
    c.env("TYPIST_CONFIG_DIR", cfg);
    c
}

fn login(cfg: &Path, assistant: &str, answer: &str) -> Output {
    typist_in(cfg)
        .args(["login", "--editor", "neovim", "--assistant", assistant])
        .args(["--editors", EDITORS, "--command", "TypistKeyfile Auth"])
        .args(["--answer", answer, "--timeout", "20"])
        .output()
        .unwrap()
}

/// `typist run` of `assistant` through Neovim on the 23 cases of the fixture dataset.
fn run(cfg: &Path, assistant: &str, out: &Path, jobs: &str) -> Command {
    let mut c = typist_in(cfg);
    c.args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
        .args(["--dataset", DATASET, "--editors", EDITORS])
        .args(["--assistant", assistant, "--editor", "neovim"])
        .args(["--typed-prefix", "2", "--key-interval-ms", "20"])
        .args(["--rate", "0.01", "--seed", "1", "--jobs", jobs, "--out"])
        .arg(out);
    c
}

fn records(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("records.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn every_path(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    if dir.is_dir() {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            out.extend(every_path(&e.path()));
        }
    }
    out
}

/// The key the vault keeps for `assistant`.
fn vault_key(cfg: &Path, assistant: &str) -> String {
    let p = cfg
        .join("vault")
        .join(assistant)
        .join("neovim")
        .join(KEY_FILE);
    let v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap())
        .unwrap_or_else(|e| panic!("{} is not whole JSON: {e}", p.display()));
    v["api_key"].as_str().unwrap().to_string()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Signed in once by script (the answer typed into the plugin's `inputsecret` prompt),
/// the key file is kept in a private vault and listed; a run of two jobs starts every
/// session signed in (every case a suggestion), its manifest names the entry, and the
/// key is in none of its files, transcripts, stdout or stderr (at debug). A key of the
/// wrong form is refused in the plugin's words and nothing is kept. Signed out, the run
/// is refused naming the assistant and the `typist login` to run, with no record.
#[test]
fn a_plugin_signed_in_once_runs_signed_in_and_is_refused_once_signed_out() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("config");
    let key = "tk-login-secret-7f3a9c";

    let bad = login(&cfg, "keyfile-plugin", "tk-x");
    assert!(!bad.status.success());
    let said = text(&bad);
    assert!(said.contains("that is not an API key"), "{said}");
    assert!(said.contains("not signed in"), "{said}");
    assert!(!cfg.join("vault/keyfile-plugin/neovim").exists());

    let o = login(&cfg, "keyfile-plugin", key);
    ok(&o);
    assert!(!text(&o).contains(key), "{}", text(&o));
    let vault = cfg.join("vault");
    for p in every_path(&vault) {
        let want = if p.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(mode(&p), want, "{}", p.display());
    }
    assert_eq!(vault_key(&cfg, "keyfile-plugin"), key);
    let entry: Value = serde_json::from_slice(
        &std::fs::read(vault.join("keyfile-plugin/neovim/entry.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(entry["how"], serde_json::json!(["TypistKeyfile Auth"]));
    let list = typist_in(&cfg)
        .args(["login", "--list", "--json"])
        .output()
        .unwrap();
    ok(&list);
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(listed.contains("keyfile-plugin"), "{listed}");
    assert!(!listed.contains(key));

    let out = tmp.path().join("run");
    let transcripts = tmp.path().join("transcripts");
    let o = run(&cfg, "keyfile-plugin", &out, "2")
        .arg("--transcripts")
        .arg(&transcripts)
        .env("RUST_LOG", "debug")
        .output()
        .unwrap();
    ok(&o);
    let recs = records(&out);
    assert_eq!(recs.len(), 23);
    for r in &recs {
        assert_eq!(r["outcome"], "suggestion", "{r}");
    }
    let m: Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        m["vault"],
        serde_json::json!([{"assistant": "keyfile-plugin", "entry": "keyfile-plugin/neovim", "saved_at": entry["saved_at"]}])
    );
    assert!(text(&o).contains("DEBUG"), "the run logged at debug");
    assert!(!text(&o).contains(key));
    for p in every_path(&out).into_iter().chain(every_path(&transcripts)) {
        if p.is_file() {
            let bytes = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
            assert!(!bytes.contains(key), "{} holds the key", p.display());
        }
    }

    let o = typist_in(&cfg)
        .args([
            "logout",
            "--editor",
            "neovim",
            "--assistant",
            "keyfile-plugin",
        ])
        .output()
        .unwrap();
    ok(&o);
    let out = tmp.path().join("signed-out");
    let o = run(&cfg, "keyfile-plugin", &out, "2").output().unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("keyfile-plugin is not signed in"), "{err}");
    assert!(
        err.contains("typist login --editor neovim --assistant keyfile-plugin"),
        "{err}"
    );
    assert!(records(&out).is_empty());
}

/// The rotating plugin rewrites its key every two suggestions: after a run the vault
/// holds a newer key than the login's; two runs side by side (two jobs each) lose no
/// update: the vault ends with the newest key any session wrote, whole (or one written
/// within the same file-time tick). The order rule itself (a session that rotated later but
/// ended first keeps its key) is `vault::tests`' `an_entry_is_saved_private_seeded_and_…`.
#[test]
fn a_rotated_key_is_written_back_and_runs_side_by_side_lose_no_update() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("config");
    let log = tmp.path().join("keys.log");
    let key = "tk-rotate-login-0042";
    ok(&login(&cfg, "rotating-plugin", key));
    assert_eq!(vault_key(&cfg, "rotating-plugin"), key);

    let o = run(&cfg, "rotating-plugin", &tmp.path().join("one"), "2")
        .env("TYPIST_KEYFILE_LOG", &log)
        .output()
        .unwrap();
    ok(&o);
    let after_one = vault_key(&cfg, "rotating-plugin");
    assert_ne!(after_one, key);
    assert!(after_one.starts_with("tk-") && after_one.ends_with("-0042"));
    let written = |log: &Path| -> Vec<String> {
        let mut k: Vec<String> = std::fs::read_to_string(log)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        k.sort();
        k
    };
    assert_eq!(written(&log).last(), Some(&after_one));

    std::fs::remove_file(&log).unwrap();
    let mut a = run(&cfg, "rotating-plugin", &tmp.path().join("a"), "2")
        .env("TYPIST_KEYFILE_LOG", &log)
        .spawn()
        .unwrap();
    let b = run(&cfg, "rotating-plugin", &tmp.path().join("b"), "2")
        .env("TYPIST_KEYFILE_LOG", &log)
        .output()
        .unwrap();
    assert!(a.wait().unwrap().success());
    ok(&b);
    let keys = written(&log);
    assert!(keys.len() >= 4, "{} rotations", keys.len());
    // Zero-padded monotonic stamps (ns): the newest sorts last. The vault orders the
    // sessions' changes by the key file's modification time, which Linux takes from
    // its coarse clock (one tick: 10 ms at the coarsest HZ): two keys written within
    // one tick by two sessions tie, and the later write-back keeps its own. So the
    // vault holds a key some session wrote, whole, and none was written more than a
    // tick after it.
    let kept = vault_key(&cfg, "rotating-plugin");
    assert!(keys.contains(&kept), "{kept} is not a key a session wrote");
    let stamp = |k: &str| -> u128 { k.split('-').nth(1).unwrap().parse().unwrap() };
    let newest = keys.last().unwrap();
    assert!(
        stamp(newest) - stamp(&kept) <= 10_000_000,
        "the vault kept {kept}; {newest} was written {} ms after it",
        (stamp(newest) - stamp(&kept)) / 1_000_000
    );
    assert!(*newest > after_one);
    for d in ["a", "b"] {
        let recs = records(&tmp.path().join(d));
        assert_eq!(recs.len(), 23);
        assert!(recs.iter().all(|r| r["outcome"] == "suggestion"));
    }
}

/// The expiring plugin deletes its key after three suggestions: the next case shows
/// nothing, the plugin says it is not signed in, and the run stops with the line naming
/// `typist login`, keeping the three records finished before. The vault keeps the key
/// file: a session that kept no file of its entry never empties it (Copilot's server
/// deletes the file it moved into memory); an expired credential is the assistant's to
/// refuse when the next run starts.
#[test]
fn a_key_expired_mid_run_stops_the_run_and_keeps_the_records_before() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("config");
    ok(&login(&cfg, "expiring-plugin", "tk-expire-login-0003"));
    let out = tmp.path().join("run");
    let o = run(&cfg, "expiring-plugin", &out, "1").output().unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("expiring-plugin is not signed in: not signed in: run :TypistKeyfile Auth; run `typist login --editor neovim --assistant expiring-plugin`"),
        "{err}"
    );
    let recs = records(&out);
    assert_eq!(recs.len(), 3, "{recs:?}");
    assert!(recs.iter().all(|r| r["outcome"] == "suggestion"));
    assert!(
        cfg.join("vault/expiring-plugin/neovim")
            .join(KEY_FILE)
            .is_file(),
        "a session that kept no file does not empty the entry"
    );
}
