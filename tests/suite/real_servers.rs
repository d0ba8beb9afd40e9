//! Real language servers, started for real (scripts/install-servers.sh installs them;
//! `.ci/run` calls it first). A missing server fails its test with the install hint:
//! nothing here is skipped silently. The one exception is rust-analyzer, which the
//! install script adds only when rustup's own server can be reached (it says so when
//! not): its test prints NOT RUN and passes then, as documented where it is.

use std::time::Duration;

use crate::common::{ok, typist};

use typist::editor::typist::TypistSession;
use typist::editor::{Conditions, Position, SessionOptions, Suggestions, profile};

/// Starts `name` as `typist doctor` does: every request may take the readiness wait, as
/// a cold server's first may (jedi's took over 10 s on a busy CI machine). These tests
/// check what servers answer, not how fast.
async fn start(name: &str) -> TypistSession {
    let p = profile::find_profile(name, None).unwrap().cold_start();
    assert!(
        p.resolve_command().is_some(),
        "{name} is not installed: {} (run scripts/install-servers.sh)",
        p.install_hint
    );
    TypistSession::start(&p, &Conditions::default(), SessionOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{name} did not start: {e}"))
}

fn labels(s: &Suggestions) -> Vec<String> {
    s.top(50)
}

/// Processes whose process group is `pgid` (the server and every worker it started).
fn group_members(pgid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command (which may contain spaces) start after the last ')'.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let fields: Vec<&str> = rest.split(' ').collect();
        // rest: state ppid pgrp ...
        if fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid) && fields[0] != "Z" {
            out.push(pid);
        }
    }
    out
}

/// Opens a file, edits it through several `didChange`s, and checks that the server's
/// view matches ours by completing a name that only the edits introduced; then shuts
/// down and checks that no process of the server's group is left.
async fn check_server(
    name: &str,
    file: &str,
    start_text: &str,
    edits: &[&str],
    want_after_edits: &str,
) {
    let mut s = start(name).await;
    let pgid = s.pid().unwrap();
    s.open(file, start_text).unwrap();
    for e in edits {
        s.type_text(file, e).unwrap();
    }
    let doc = s.document(file).unwrap();
    assert_eq!(
        doc.version,
        1 + edits.len() as i32,
        "one version per change"
    );
    let cursor = s.end_of(file).unwrap();
    let got = s.suggest_when_ready(file, cursor).await.unwrap();
    assert!(
        got.value.has_in_top(want_after_edits, 5),
        "{name}: {want_after_edits:?} not in the top 5 of {:?}",
        labels(&got.value)
    );
    let exit = tokio::time::timeout(Duration::from_secs(10), s.shutdown())
        .await
        .expect("shutdown took too long");
    assert!(exit.is_some(), "{name}: no exit status after shutdown");
    // Give the kernel a moment to reap the group.
    for _ in 0..50 {
        if group_members(pgid).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        group_members(pgid),
        Vec::<u32>::new(),
        "{name}: processes left running"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_offers_path_after_os_pa() {
    check_server(
        "pyright",
        "probe.py",
        "import os\n",
        &["x = 1\n", "os.pa"],
        "path",
    )
    .await;
    // The issue's own example: os.pa with the text built up in several changes.
    check_server(
        "pyright",
        "main.py",
        "import os\n",
        &[
            "\nvalue_from_edit = 1\n",
            "print(value_from_edit)\n",
            "value_from",
        ],
        "value_from_edit",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_os_pa_top5_has_path() {
    let mut s = start("pyright").await;
    s.open("a.py", "import os\nos.pa").unwrap();
    let got = s
        .suggest_when_ready(
            "a.py",
            Position {
                line: 1,
                character: 5,
            },
        )
        .await
        .unwrap();
    assert!(got.value.has_in_top("path", 5), "{:?}", labels(&got.value));
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jedi_sees_edits_and_shuts_down_cleanly() {
    check_server(
        "jedi-language-server",
        "main.py",
        "import os\n",
        &[
            "counter_from_edit = 0\n",
            "counter_from_edit += 1\n",
            "os.pa",
        ],
        "path",
    )
    .await;
    check_server(
        "jedi-language-server",
        "b.py",
        "import os\n",
        &[
            "counter_from_edit = 0\n",
            "counter_from_edit += 1\n",
            "counter_f",
        ],
        "counter_from_edit",
    )
    .await;
}

/// jedi writes its parse cache (`$XDG_CACHE_HOME/jedi`) in place, so a jedi killed
/// mid-write leaves a truncated pickle behind, and every later completion that reads it
/// fails: jedi-language-server answers with an error, pylsp with an empty list. (CI met
/// this once: the jedi test above failed with "pickle data was truncated".) The
/// Jedi-based profiles run with a `HOME` of their own, so a cut-short user cache changes
/// no answer.
#[test]
fn a_truncated_user_jedi_cache_changes_no_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join(".cache");
    let jls = profile::find_profile("jedi-language-server", None)
        .unwrap()
        .resolve_command()
        .expect("jedi-language-server is not installed (run scripts/install-servers.sh)");
    let python = jls.parent().unwrap().join("python");
    // The cache jedi writes for the probe's own text, then every file of it cut short.
    let o = std::process::Command::new(&python)
        .env("XDG_CACHE_HOME", &cache)
        .args([
            "-c",
            "import jedi; jedi.Script('import os\\nos.pa').complete(2, 5)",
        ])
        .output()
        .unwrap();
    ok(&o);
    let mut cut = 0;
    for dir in std::fs::read_dir(cache.join("jedi")).unwrap().flatten() {
        for f in std::fs::read_dir(dir.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if f.path().extension().is_some_and(|e| e == "pkl") {
                let bytes = std::fs::read(f.path()).unwrap();
                std::fs::write(f.path(), &bytes[..bytes.len().min(100)]).unwrap();
                cut += 1;
            }
        }
    }
    assert!(cut > 0, "jedi wrote no cache under {}", cache.display());
    for name in ["jedi-language-server", "python-lsp-server"] {
        let o = typist()
            .args(["doctor", "--json", "--profile", name, "--editors"])
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/editors"))
            .env("XDG_CACHE_HOME", &cache)
            .output()
            .unwrap();
        ok(&o);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let p = &v["profiles"][0];
        assert_eq!(p["status"], "ok", "{name}: {p}");
        assert_eq!(p["probe"]["expected_in_top5"], true, "{name}: {p}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_language_server_sees_edits_and_shuts_down_cleanly() {
    check_server(
        "typescript-language-server",
        "main.ts",
        "const s: string = \"abc\";\n",
        &[
            "const totalFromEdit = s.length;\n",
            "console.log(totalFromEdit);\n",
            "s.toU",
        ],
        "toUpperCase",
    )
    .await;
    check_server(
        "typescript-language-server",
        "b.ts",
        "let a = 1;\n",
        &[
            "const totalFromEdit = a + 1;\n",
            "console.log(totalFromEdit);\n",
            "totalFr",
        ],
        "totalFromEdit",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clangd_sees_edits_and_shuts_down_cleanly() {
    check_server(
        "clangd",
        "main.c",
        "#include <stdio.h>\n",
        &[
            "static int counter_from_edit = 0;\n",
            "int main(void) {\n",
            "  counter_from_edit += 1;\n  prin",
        ],
        "printf",
    )
    .await;
    check_server(
        "clangd",
        "b.c",
        "int x;\n",
        &[
            "static int counter_from_edit = 0;\n",
            "int main(void) {\n",
            "  counter_fr",
        ],
        "counter_from_edit",
    )
    .await;
}

/// Copilot's real server, not signed in: `doctor` says `needs-auth`, it does not hang.
#[test]
fn doctor_reports_copilot_needs_auth_and_servers_ok() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_typist"))
        .args([
            "doctor",
            "--json",
            "--profile",
            "copilot",
            "--profile",
            "pyright",
            "--profile",
            "jedi-language-server",
            "--profile",
            "typescript-language-server",
            "--profile",
            "clangd",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let status = |name: &str| {
        v["profiles"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .map(|p| (p["status"].as_str().unwrap().to_string(), p.clone()))
            .unwrap()
    };
    let (s, p) = status("copilot");
    assert_eq!(s, "needs-auth", "{p}");
    assert_eq!(p["server"]["name"], "GitHub Copilot Language Server");
    assert_eq!(p["capabilities"]["inline"], true);
    for name in [
        "pyright",
        "jedi-language-server",
        "typescript-language-server",
        "clangd",
    ] {
        let (s, p) = status(name);
        assert_eq!(s, "ok", "{p}");
        assert!(p["probe"]["items"].as_u64().unwrap() >= 1, "{p}");
        assert_eq!(p["probe"]["expected_in_top5"], true, "{p}");
    }
    // Not every profile is ok (copilot needs auth), so the exit code says so.
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn help_lists_the_subcommands() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_typist"))
        .arg("--help")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    for sub in ["doctor", "profiles"] {
        assert!(text.contains(sub), "{text}");
    }
}

/// Servers that cache the disk register for `workspace/didChangeWatchedFiles`; the
/// session tells them when a disk copy changes, so pyright's view of a file that is not
/// open follows the disk (it offers the function the new copy defines, not the old one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_follows_disk_changes_through_watched_file_events() {
    let p = profile::find_profile("pyright", None).unwrap().cold_start();
    assert!(p.resolve_command().is_some(), "pyright is not installed");
    let mut s = TypistSession::start(
        &p,
        &Conditions::default(),
        SessionOptions {
            contents: vec![("helper.py".into(), "def alpha_old():\n    pass\n".into())],
            ..Default::default()
        },
    )
    .await
    .unwrap();
    s.open("main.py", "import helper\nhelper.").unwrap();
    let at = Position {
        line: 1,
        character: 7,
    };
    let got = s.suggest_when_ready("main.py", at).await.unwrap();
    assert!(
        got.value.has_in_top("alpha_old", 5),
        "{:?}",
        labels(&got.value)
    );
    assert!(s.watches_files(), "pyright registered no file watcher");
    s.write_file("helper.py", "def beta_new():\n    pass\n")
        .unwrap();
    // Any edit of the open file makes pyright re-check it against the new helper.
    s.set_text("main.py", "import helper\n\nhelper.").unwrap();
    let at = Position {
        line: 2,
        character: 7,
    };
    let mut found = false;
    for _ in 0..40 {
        let got = s.suggest("main.py", at).await.unwrap();
        if got.value.has_in_top("beta_new", 5) {
            assert!(
                !got.value.has_in_top("alpha_old", 50),
                "{:?}",
                labels(&got.value)
            );
            found = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(found, "pyright never saw the new helper.py");
    s.shutdown().await;
}

/// rust-analyzer's readiness signal, `experimental/serverStatus`, is sent only to a
/// client that declares `experimental.serverStatusNotification`: the session declares
/// it, so the readiness rule ends on the server's word (quiescent) and the completion
/// that follows is a real one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_analyzer_reports_its_status_and_completes_after_it() {
    let p = profile::find_profile("rust-analyzer", None).unwrap();
    if p.resolve_command().is_none() {
        // rust-analyzer comes from rustup's own server, which is not a package registry
        // and may be out of reach (scripts/install-servers.sh says so when it is).
        eprintln!(
            "NOT RUN: rust-analyzer is not installed ({})",
            p.install_hint
        );
        return;
    }
    // The first completion after loading std can take long on a busy 2-core machine;
    // what is tested is the status signal, not the speed.
    let mut p = p;
    p.request_timeout_ms = p.request_timeout_ms.max(90_000);
    let mut s = TypistSession::start(&p, &Conditions::default(), SessionOptions::default())
        .await
        .unwrap();
    let text = "pub fn f() -> String {\n    String::from(\"a\").to_up";
    s.open("probe.rs", text).unwrap();
    let got = s
        .suggest_when_ready(
            "probe.rs",
            Position {
                line: 1,
                character: 28,
            },
        )
        .await
        .unwrap();
    assert_eq!(s.server_status(), Some(true), "no quiescent serverStatus");
    assert!(
        got.value.has_in_top("to_uppercase", 5),
        "{:?}",
        labels(&got.value)
    );
    s.shutdown().await;
}
