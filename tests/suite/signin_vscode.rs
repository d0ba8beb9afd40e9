//! VS Code starts signed in (issue 41): `typist login --editor vscode` signs an
//! extension in through its own "Provide Authentication Token" input box
//! (`fixtures/vscode/typist-secret`, its token in VS Code's secret storage, which
//! code-server keeps in the browser's localStorage) and saves the vault entry; every
//! session of a run then starts from it and every case is answered; the token is in no
//! output; a run whose extension rotates its token writes it back into the entry, and
//! the next run starts from it; after `typist logout` the run is refused, naming the
//! login to run. An
//! assistant that signs in with GitHub (`[signin] github`, `fixtures/vscode/typist-github`)
//! is refused naming `typist login copilot` while there is no GitHub sign-in, and after
//! `typist login copilot --token-stdin` typist's own `github` provider serves it a
//! session in every case (the built-in provider not loaded). Real code-server and
//! Chromium; four cases in two files, so that each run opens two windows at once.

use std::path::Path;

use serde_json::Value;

use crate::common::{DATASET, ok, typist};
use crate::vscode::require_vscode;

const TOKEN: &str = "tsk_Q7mZ2xK9pL4vN8rT3wY6";
/// A made-up GitHub OAuth token (nothing here asks GitHub).
const GITHUB_TOKEN: &str = "gho_typistVsCodeFixture0123456789abcd";

fn editors() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/vscode/editors")
        .display()
        .to_string()
}

/// Two cases in each of two files of semver's plan: each of the two sessions of a
/// `--jobs 2` run opens one file (a window each; a window's load is most of a run's time).
fn plan(dir: &Path) -> std::path::PathBuf {
    let all = dir.join("all.jsonl");
    ok(&typist()
        .args(["sample", "--dataset", &format!("{DATASET}/semver")])
        .args(["--single-repo", "--rate", "0.02", "--seed", "1", "--out"])
        .arg(&all)
        .output()
        .unwrap());
    let text = std::fs::read_to_string(&all).unwrap();
    let mut lines = text.lines();
    let mut kept = vec![lines.next().unwrap().to_string()];
    for file in ["classes/range.js", "classes/semver.js"] {
        let cases: Vec<&str> = text
            .lines()
            .filter(|l| serde_json::from_str::<Value>(l).unwrap()["file"].as_str() == Some(file))
            .take(2)
            .collect();
        assert_eq!(cases.len(), 2, "{text}");
        kept.extend(cases.into_iter().map(String::from));
    }
    let p = dir.join("plan.jsonl");
    std::fs::write(&p, kept.join("\n") + "\n").unwrap();
    p
}

fn run(cfg: &Path, plan: &Path, out: &Path, assistant: &str) -> std::process::Output {
    run_in(&editors(), cfg, plan, out, assistant)
}

/// A run with the profiles of the folder `editors`.
fn run_in(
    editors: &str,
    cfg: &Path,
    plan: &Path,
    out: &Path,
    assistant: &str,
) -> std::process::Output {
    typist()
        .env("TYPIST_CONFIG_DIR", cfg)
        .env("RUST_LOG", "debug")
        .args([
            "run",
            "--config",
            "/dev/null",
            "--quiet",
            "--no-latency",
            "--assistant",
            assistant,
            "--typed-prefix",
            "2",
            "--jobs",
            "2",
            "--display-deadline-ms",
            "5000",
            "--editors",
            editors,
            "--editor",
            "vscode",
            "--plan",
        ])
        .arg(plan)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn an_extension_signed_in_once_starts_signed_in_in_every_run_and_is_refused_once_logged_out() {
    require_vscode();
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("config");
    let plan = plan(tmp.path());
    let login = typist()
        .env("TYPIST_CONFIG_DIR", &cfg)
        .env("RUST_LOG", "debug")
        .args([
            "login",
            "--editor",
            "vscode",
            "--assistant",
            "typist-secret",
        ])
        .args(["--editors", &editors()])
        .args(["--command", "typist-secret: Provide Authentication Token"])
        .args(["--answer", TOKEN])
        .output()
        .unwrap();
    ok(&login);
    let mut said = String::from_utf8_lossy(&login.stdout).to_string()
        + &String::from_utf8_lossy(&login.stderr);
    assert!(said.contains("input box: typist-secret: paste"), "{said}");
    let entry = cfg.join("vault/typist-secret/vscode");
    for d in [cfg.join("vault"), entry.clone(), entry.join("browser")] {
        assert_eq!(mode(&d), 0o700, "{}", d.display());
    }
    for f in [
        "browser/local-storage.json",
        "user-data/serve-web-key-half",
        "entry.json",
    ] {
        assert_eq!(mode(&entry.join(f)), 0o600, "{f}");
    }

    // The first run's extension rotates its token after every completion (its setting
    // `typistSecret.rotateEvery`, the profile copied with it), as Tabnine's binary
    // refreshes its own: the rotated token is written back into the entry, and the
    // second run starts from it.
    let storage = entry.join("browser/local-storage.json");
    let at_login = std::fs::read(&storage).unwrap();
    let rotating = tmp.path().join("rotating");
    std::fs::create_dir_all(&rotating).unwrap();
    let profile =
        std::fs::read_to_string(Path::new(&editors()).join("typist-secret.toml")).unwrap();
    std::fs::write(
        rotating.join("typist-secret.toml"),
        profile + "\n[vscode.settings]\n\"typistSecret.rotateEvery\" = 1\n",
    )
    .unwrap();
    // The second run: the first file's two cases (one window; a run's time is its load).
    let text = std::fs::read_to_string(&plan).unwrap();
    let one_file = tmp.path().join("one-file.jsonl");
    std::fs::write(
        &one_file,
        text.lines().take(3).collect::<Vec<_>>().join("\n") + "\n",
    )
    .unwrap();
    let runs = [
        (rotating.display().to_string(), &plan, 4),
        (editors(), &one_file, 2),
    ];
    for (i, (editors, plan, cases)) in runs.iter().enumerate() {
        let out = tmp.path().join(format!("run{i}"));
        let r = run_in(editors, &cfg, plan, &out, "typist-secret");
        said +=
            &(String::from_utf8_lossy(&r.stdout).to_string() + &String::from_utf8_lossy(&r.stderr));
        ok(&r);
        let records = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
        let recs: Vec<Value> = records
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(recs.len(), *cases, "run {i}: {records}");
        for r in &recs {
            assert_eq!(r["outcome"], "suggestion", "run {i}: {r}");
        }
        let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
        let m: Value = serde_json::from_str(&manifest).unwrap();
        assert_eq!(m["vault"][0]["entry"], "typist-secret/vscode", "{manifest}");
        for (what, text) in [
            ("records", &records),
            ("manifest", &manifest),
            ("output", &said),
        ] {
            assert!(
                !text.contains(TOKEN),
                "the token is in the {what} (run {i})"
            );
        }
        if i == 0 {
            assert_ne!(
                std::fs::read(&storage).unwrap(),
                at_login,
                "the rotated token was not written back"
            );
            assert_eq!(mode(&storage), 0o600);
        }
    }

    // Logged out: refused, naming the assistant and the login to run.
    ok(&typist()
        .env("TYPIST_CONFIG_DIR", &cfg)
        .args([
            "logout",
            "--editor",
            "vscode",
            "--assistant",
            "typist-secret",
        ])
        .output()
        .unwrap());
    let r = run(&cfg, &plan, &tmp.path().join("refused"), "typist-secret");
    assert!(!r.status.success());
    let e = String::from_utf8_lossy(&r.stderr);
    assert!(
        e.contains("typist-secret")
            && e.contains("typist login --editor vscode --assistant typist-secret"),
        "{e}"
    );

    // Signs in with GitHub, and there is no GitHub sign-in: refused before VS Code starts.
    let r = run(&cfg, &plan, &tmp.path().join("github"), "typist-github");
    assert!(!r.status.success());
    let e = String::from_utf8_lossy(&r.stderr);
    assert!(e.contains("typist login copilot"), "{e}");

    // `typist login copilot --token-stdin`: every case of a run is answered, the
    // extension served the session by typist's own `github` provider (the built-in one
    // not loaded); the token is in no output.
    let mut login = typist()
        .env("TYPIST_CONFIG_DIR", &cfg)
        .env("RUST_LOG", "debug")
        .args(["login", "copilot", "--token-stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = login.stdin.take().unwrap();
        writeln!(stdin, "{GITHUB_TOKEN}").unwrap();
    }
    let login = login.wait_with_output().unwrap();
    ok(&login);
    let mut said = String::from_utf8_lossy(&login.stdout).to_string()
        + &String::from_utf8_lossy(&login.stderr);
    let out = tmp.path().join("github-run");
    let r = run(&cfg, &plan, &out, "typist-github");
    said += &(String::from_utf8_lossy(&r.stdout).to_string() + &String::from_utf8_lossy(&r.stderr));
    ok(&r);
    let records = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
    let recs: Vec<Value> = records
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 4, "{records}");
    for r in &recs {
        assert_eq!(r["outcome"], "suggestion", "{r}");
    }
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    for (what, text) in [
        ("records", &records),
        ("manifest", &manifest),
        ("output", &said),
    ] {
        assert!(
            !text.contains(GITHUB_TOKEN),
            "the GitHub token is in the {what}"
        );
    }
}
