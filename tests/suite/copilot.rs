//! GitHub Copilot's sign-in through the real `@github/copilot-language-server`
//! (scripts/install-servers.sh installs it), with a scratch HOME and typist config
//! folder: `typist login copilot` fails fast and says so when GitHub cannot be reached;
//! `doctor` reports needs-auth with the reason, or finds a sign-in (typist's own, the
//! user's, an environment variable) and gives the sandboxed server a copy of it.
//!
//! GitHub is made unreachable for certain through a proxy on a closed local port (the
//! server honours `HTTPS_PROXY`); where the machine has no network at all (this one),
//! the login is also tried without it.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::typist;
use serde_json::Value;

fn installed() {
    let p = typist::editor::profile::find_profile("copilot", None).unwrap();
    assert!(
        p.resolve_command().is_some(),
        "copilot-language-server is not installed: run scripts/install-servers.sh"
    );
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    l.local_addr().unwrap().port()
}

/// typist with HOME in `dir`, no XDG_CONFIG_HOME, no Copilot token in the environment,
/// and (with `proxy`) GitHub behind a dead proxy.
fn isolated(dir: &Path, proxy: bool) -> Command {
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut c = typist();
    c.env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("TYPIST_CONFIG_DIR")
        .env_remove("GH_COPILOT_TOKEN")
        .env_remove("GITHUB_COPILOT_TOKEN")
        .env_remove("CODESPACES");
    if proxy {
        let p = format!("http://127.0.0.1:{}", closed_port());
        c.env("HTTPS_PROXY", &p)
            .env("https_proxy", &p)
            .env("HTTP_PROXY", &p)
            .env("http_proxy", &p)
            .env_remove("NO_PROXY")
            .env_remove("no_proxy");
    }
    c
}

fn login_fails_saying_the_network_is_unreachable(proxy: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let o = isolated(tmp.path(), proxy)
        .args(["login", "copilot"])
        .output()
        .unwrap();
    let took = t0.elapsed();
    let stderr = String::from_utf8_lossy(&o.stderr);
    eprintln!("proxy {proxy}: {:.1} s: {stderr}", took.as_secs_f64());
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("the network is unreachable"), "{stderr}");
    assert!(took < Duration::from_secs(30), "took {took:?}");
    // Nothing was stored.
    assert!(
        !tmp.path()
            .join("home/.config/typist/copilot/github-copilot")
            .exists()
    );
    assert!(
        !tmp.path()
            .join("home/.config/typist/vault/copilot")
            .exists()
    );
}

#[test]
fn login_without_network_fails_fast_and_says_the_network_is_unreachable() {
    installed();
    login_fails_saying_the_network_is_unreachable(true);
    // This machine resolves no name: the plain flow, with nothing in its way.
    use std::net::ToSocketAddrs;
    if ("github.com", 443).to_socket_addrs().is_err() {
        login_fails_saying_the_network_is_unreachable(false);
    } else {
        eprintln!("github.com resolves here: only the dead-proxy case was run");
    }
}

fn doctor(cmd: &mut Command) -> Value {
    let o = cmd
        .args(["doctor", "--json", "--profile", "copilot"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    v["profiles"][0].clone()
}

#[test]
fn doctor_reports_needs_auth_with_the_reason_when_there_is_no_sign_in() {
    installed();
    let tmp = tempfile::tempdir().unwrap();
    let r = doctor(&mut isolated(tmp.path(), true));
    assert_eq!(r["status"], "needs-auth", "{r}");
    assert_eq!(r["auth"], "NotSignedIn", "{r}");
    let m = r["message"].as_str().unwrap();
    assert!(
        m.starts_with("not signed in: no $GH_COPILOT_TOKEN") && m.contains("typist login copilot"),
        "{m}"
    );
}

/// A sign-in file as copilot.vim and older servers write it (the server migrates it).
const APPS_JSON: &str = r#"{"github.com:Iv1.b507a08c87ecfe98":{"user":"octocat","oauth_token":"gho_typist_test_token","githubAppId":"Iv1.b507a08c87ecfe98"}}"#;

#[test]
fn a_sign_in_is_found_and_the_sandboxed_server_gets_a_copy() {
    installed();
    // The user's own sign-in, where the server itself looks.
    let tmp = tempfile::tempdir().unwrap();
    let own = tmp.path().join("home/.config/github-copilot");
    std::fs::create_dir_all(&own).unwrap();
    std::fs::write(own.join("apps.json"), APPS_JSON).unwrap();
    let r = doctor(&mut isolated(tmp.path(), true));
    // The server in its sandbox HOME read the copy: signed in locally (MaybeOK), and
    // then could not reach GitHub.
    assert_eq!(r["auth"], "MaybeOK", "{r}");
    let m = r["message"].as_str().unwrap();
    assert!(m.contains("through your own sign-in"), "{m}");
    assert!(m.contains("the network is unreachable"), "{m}");
    assert_ne!(r["status"], "ok", "{r}");
    // The copy is a copy: the user's file is as it was.
    assert_eq!(
        std::fs::read_to_string(own.join("apps.json")).unwrap(),
        APPS_JSON
    );

    // typist's own store (what `typist login copilot` keeps) comes first.
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("typist-config/copilot/github-copilot");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(store.join("apps.json"), APPS_JSON).unwrap();
    let r = doctor(
        isolated(tmp.path(), true).env("TYPIST_CONFIG_DIR", tmp.path().join("typist-config")),
    );
    assert_eq!(r["auth"], "MaybeOK", "{r}");
    let m = r["message"].as_str().unwrap();
    assert!(m.contains("through typist login copilot"), "{m}");

    // A token in the environment reaches the server as it is.
    let tmp = tempfile::tempdir().unwrap();
    let r = doctor(isolated(tmp.path(), true).env("GH_COPILOT_TOKEN", "gho_typist_test_token"));
    assert_eq!(r["auth"], "MaybeOK", "{r}");
    let m = r["message"].as_str().unwrap();
    assert!(m.contains("through $GH_COPILOT_TOKEN"), "{m}");
}

/// `typist login copilot --token-stdin` keeps a GitHub OAuth token in the vault (0700,
/// 0600), the sandboxed server starts from a copy of it, doctor names the entry, and
/// `typist logout copilot` removes it. The server (under Node 20, no `node:sqlite`)
/// migrates `apps.json` into an in-memory store and deletes the file: the vault keeps
/// it (a session that kept no file never empties an entry).
#[test]
fn a_token_kept_in_the_vault_reaches_the_server_and_goes_with_logout() {
    use std::os::unix::fs::PermissionsExt;
    installed();
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("typist-config");
    let token = format!("gho_{}", "T0k3n".repeat(8));
    let mut login = isolated(tmp.path(), true);
    login
        .env("TYPIST_CONFIG_DIR", &config)
        .args(["login", "copilot", "--token-stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = login.spawn().unwrap();
    use std::io::Write;
    writeln!(child.stdin.take().unwrap(), "{token}").unwrap();
    let o = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{said}");
    assert!(said.contains("copilot/github"), "{said}");
    assert!(!said.contains(&token), "{said}");
    let entry = config.join("vault/copilot/github");
    for d in [config.join("vault"), entry.clone()] {
        let m = std::fs::metadata(&d).unwrap().permissions().mode() & 0o777;
        assert_eq!(m, 0o700, "{}", d.display());
    }
    let apps = entry.join("home/.config/github-copilot/apps.json");
    assert_eq!(
        std::fs::metadata(&apps).unwrap().permissions().mode() & 0o777,
        0o600
    );

    let o = isolated(tmp.path(), true)
        .env("TYPIST_CONFIG_DIR", &config)
        .env("RUST_LOG", "debug")
        .args(["doctor", "--json", "--profile", "copilot"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !out.contains(&token) && !err.contains(&token),
        "the token leaked"
    );
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    let r = &v["profiles"][0];
    // The server read the vault's copy: signed in locally, then GitHub unreachable.
    assert_eq!(r["auth"], "MaybeOK", "{r}");
    assert!(
        r["message"]
            .as_str()
            .unwrap()
            .contains("through typist login copilot"),
        "{r}"
    );
    assert!(
        v["vault"][0]
            .as_str()
            .unwrap()
            .starts_with("copilot/github: saved "),
        "{v}"
    );
    // Whatever the server did with its copy, the vault still holds the sign-in.
    assert!(
        typist::copilot::github_token(&entry.join("home/.config/github-copilot")).as_deref()
            == Some(token.as_str()),
        "{:?}",
        std::fs::read_dir(entry.join("home/.config/github-copilot"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect::<Vec<_>>()
    );

    let o = isolated(tmp.path(), true)
        .env("TYPIST_CONFIG_DIR", &config)
        .args(["logout", "copilot"])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(!entry.exists());
    let r = doctor(isolated(tmp.path(), true).env("TYPIST_CONFIG_DIR", &config));
    assert_eq!(r["status"], "needs-auth", "{r}");
}

/// Next edits (`textDocument/copilotInlineEdit`, methodology §13) asked of the real
/// server without a sign-in: it answers "not authenticated", and the run stops naming
/// `typist login copilot` with no record (an unanswered request is never scored).
#[test]
fn next_edits_stop_at_the_sign_in_with_no_record() {
    installed();
    let tmp = tempfile::tempdir().unwrap();
    let plan = tmp.path().join("edits.jsonl");
    std::fs::write(&plan, crate::edits::RENAME_PLAN_FOR_TESTS()).unwrap();
    let out = tmp.path().join("out");
    let o = isolated(tmp.path(), true)
        .args(["run", "--quiet", "--assistant", "copilot", "--plan"])
        .arg(&plan)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("copilotInlineEdit") && err.contains("typist login copilot"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("records.jsonl")).unwrap(),
        ""
    );
}
