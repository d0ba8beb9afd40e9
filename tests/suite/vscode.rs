//! A real VS Code as the editor (`--editor vscode`, issue 31): code-server 4.139.1 and
//! headless Chromium, the project's fixture extension serving typist's n-gram host. The
//! same plan gives the same suggestions as typist's own client; code-server refuses a
//! connection without typist's password, which appears in no record, log or command
//! line; nothing outlives a typist killed with SIGKILL. code-server, Chromium and the
//! fixture must be installed (`scripts/install-servers.sh`): a missing one fails these
//! tests, never skips them.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{CoresBusy, DATASET, assert_line_above, ok, typist};

pub(crate) fn require_vscode() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(".servers");
    for p in ["bin/code-server", "vscode/typist-inline.vsix"] {
        assert!(
            root.join(p).is_file(),
            "{} is not installed: run scripts/install-servers.sh",
            root.join(p).display()
        );
    }
}

fn parsed(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("records.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The semver repository alone: 5 cases in 4 files (`--rate 0.005 --seed 1`), the
/// same cases as in the whole dataset's plan, `internal/debug.js:3` (the one suggestion,
/// and the case that differed in some full-plan runs: `docs/vscode.md`) among them.
fn semver() -> String {
    format!("{DATASET}/semver")
}

fn run_args(out: &Path) -> Vec<String> {
    run_args_for(out, "typist-ngram")
}

fn run_args_for(out: &Path, assistant: &str) -> Vec<String> {
    let dataset = semver();
    [
        "run",
        "--config",
        "/dev/null",
        "--quiet",
        "--no-latency",
        "--dataset",
        dataset.as_str(),
        "--single-repo",
        "--assistant",
        assistant,
        "--rate",
        "0.005",
        "--seed",
        "1",
        "--typed-prefix",
        "3",
        "--jobs",
        "1",
        "--out",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([out.display().to_string()])
    .collect()
}

/// The plan through typist's own client and through VS Code (keys 20 ms apart): the
/// records of both, in order.
fn both_ways(tmp: &Path, assistant: &str) -> (Vec<Value>, Vec<Value>) {
    let own = tmp.join("typist");
    ok(&typist()
        .args(run_args_for(&own, assistant))
        .output()
        .unwrap());
    let vs = tmp.join("vscode");
    ok(&typist()
        .args(run_args_for(&vs, assistant))
        .args(["--editor", "vscode", "--key-interval-ms", "20"])
        .output()
        .unwrap());
    (parsed(&own), parsed(&vs))
}

/// Same plan, two editors: typist-ngram through typist's own client and through VS Code
/// (the fixture extension, keys 20 ms apart), with every core held busy by the test's own
/// threads (issue 39: an answer drawn late on a loaded machine is never a timeout). At
/// least 99% of the cases give the same outcome and the same predicted line; the records
/// through VS Code name the editor and its version; the manifest records the user
/// settings typist wrote and how a case's line is reached.
#[test]
fn the_same_plan_through_vscode_gives_the_same_suggestions() {
    require_vscode();
    let tmp = tempfile::tempdir().unwrap();
    let vs = tmp.path().join("vscode");
    let (a, b) = {
        let _load = CoresBusy::hold();
        both_ways(tmp.path(), "typist-ngram")
    };
    assert_eq!(a.len(), b.len());
    assert!(a.len() >= 5, "{} records", a.len());
    assert!(
        a.iter().any(|r| r["case"] == "semver/internal/debug.js:3"),
        "the known difference's case is in the plan"
    );
    let mut differ = Vec::new();
    for (x, y) in a.iter().zip(&b) {
        assert_eq!((&x["case"], &x["assistant"]), (&y["case"], &y["assistant"]));
        if (&x["outcome"], &x["predicted"]) != (&y["outcome"], &y["predicted"]) {
            differ.push(format!(
                "{}: typist {} {} | vscode {} {} {} {}",
                x["case"],
                x["outcome"],
                x["predicted"],
                y["outcome"],
                y["predicted"],
                y["error"],
                y["reason"]
            ));
        }
        assert_eq!(y["editor"], "vscode");
        assert!(
            y["editor_version"].as_str().unwrap().starts_with("1.139."),
            "{y}"
        );
    }
    for d in &differ {
        eprintln!("differs: {d}");
    }
    assert!(
        differ.len() * 100 <= a.len(),
        "{} of {} cases differ",
        differ.len(),
        a.len()
    );
    assert!(
        b.iter().any(|r| r["outcome"] == "suggestion"),
        "some suggestions"
    );
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(vs.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["conditions"]["app"]["kind"], "vscode");
    assert_eq!(
        m["conditions"]["app"]["settings"]["editor.autoClosingBrackets"],
        "never"
    );
    assert_eq!(m["conditions"]["app"]["settings"]["files.autoSave"], "off");
    assert_eq!(m["conditions"]["app"]["arrival"], "enter-above");
}

/// lsp-ai, whose answers are completion items, inside VS Code: the fixture shows the
/// first item's text as ghost text (the `lsp-ai` dialect), and the real SmolLM2 behind
/// it gives every case of the semver plan the outcome and line it gives through typist's
/// own client, with at least one suggestion.
#[test]
fn lsp_ai_with_the_real_model_answers_in_vscode_as_in_typists_client() {
    require_vscode();
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = both_ways(tmp.path(), "lsp-ai-smollm2");
    assert_eq!(a.len(), b.len());
    assert!(a.len() >= 5, "{} records", a.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!((&x["case"], &x["assistant"]), (&y["case"], &y["assistant"]));
        assert_eq!(
            (&x["outcome"], &x["predicted"]),
            (&y["outcome"], &y["predicted"]),
            "typist's client | vscode: {} {}",
            y["error"],
            y["reason"]
        );
        assert_eq!(y["editor"], "vscode");
    }
    assert!(
        b.iter().any(|r| r["outcome"] == "suggestion"),
        "some suggestions"
    );
    // llama.cpp's threads: every core typist has through its own client, one fewer
    // through VS Code (whose page and extension host work while the model answers).
    let threads = |run: &str| -> String {
        let m: Value = serde_json::from_str(
            &std::fs::read_to_string(tmp.path().join(run).join("manifest.json")).unwrap(),
        )
        .unwrap();
        let args = m["services"][0]["args"].as_array().unwrap().clone();
        let at = args.iter().position(|a| a == "-t").unwrap();
        args[at + 1].as_str().unwrap().to_string()
    };
    let cores = typist::service::cores();
    assert_eq!(threads("typist"), cores.to_string());
    assert_eq!(
        threads("vscode"),
        cores.saturating_sub(1).max(1).to_string()
    );
}

/// The honesty invariant inside VS Code, with an extension as the adversary
/// (`fixtures/vscode/typist-cheat`, installed as `--extension` would): it reads the
/// workspace folder at activation and at every inline request, and every version of
/// every document VS Code gives it, and never finds the asked line, even with the whole
/// file but that line in the editor and on disk (`--context full`). It says so in the
/// ghost text it shows, so every suggestion read is its "nothing found" line, or the line
/// below the case's (which the user has). The manifest names the extension, its version,
/// and that it activated.
#[test]
fn a_cheating_extension_finds_no_target_line_in_vscode() {
    require_vscode();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("cheat");
    let cheat =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/vscode/editors/typist-cheat.toml");
    let mut args = run_args(&out);
    let at = args.iter().position(|a| a == "typist-ngram").unwrap();
    args[at] = cheat.display().to_string();
    ok(&typist()
        .args(&args)
        .args([
            "--editor",
            "vscode",
            "--key-interval-ms",
            "20",
            "--context",
            "full",
            "--display-deadline-ms",
            "5000",
        ])
        .output()
        .unwrap());
    let recs = parsed(&out);
    assert!(recs.len() >= 4, "{} records", recs.len());
    let mut shown = 0;
    let mut searched = 0;
    for r in &recs {
        let expected = r["expected"].as_str().unwrap();
        if r["outcome"] == "suggestion" {
            let p = r["predicted"].as_str().unwrap();
            // Before the Enter that opens the case's line, the editor and the disk hold,
            // at that line's number, the first line below it (context the user has): the
            // cheat may find that one (VS Code shows it against what was typed since),
            // never the case's line.
            if p.trim() == line_below(r).trim() {
                shown += 1;
                continue;
            }
            assert_ne!(p.trim(), expected.trim(), "{r}");
            assert!(
                p.contains("typist-cheat: read ") && p.ends_with(" files, nothing found"),
                "the cheat found something: {r}"
            );
            assert_ne!(p.trim(), expected.trim(), "{r}");
            let files: u32 = p
                .split("read ")
                .nth(1)
                .and_then(|x| x.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap();
            assert!(files >= 4, "it read the workspace: {r}");
            shown += 1;
            searched += 1;
        } else {
            assert_eq!(r["outcome"], "empty", "{r}");
        }
    }
    assert!(shown * 2 >= recs.len(), "{shown} of {} shown", recs.len());
    // The cheat searched and said so at least once (not only the line below found).
    assert!(searched >= 1, "no \"nothing found\" shown: {recs:?}");
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    // The fixture is installed too: it tells typist when the window's extension host
    // has its folder.
    let exts = m["editor"]["extensions"].as_array().unwrap();
    assert!(
        exts.iter().any(|x| x["id"] == "typist.typist-inline"),
        "{m}"
    );
    let ext = exts
        .iter()
        .find(|x| x["id"] == "typist.typist-cheat")
        .unwrap_or_else(|| panic!("{m}"));
    assert_eq!(ext["id"], "typist.typist-cheat", "{m}");
    assert_eq!(ext["version"], "0.1.0");
    assert_eq!(ext["activated"], true, "{ext}");
}

/// The cheat works when it can: fed a workspace with the asked line on disk, its
/// memory finds it (the extension's lookup, run in the installed Node).
#[test]
fn the_cheating_extension_finds_a_line_left_on_disk() {
    let node = Path::new(env!("CARGO_MANIFEST_DIR")).join(".servers/node24/bin/node");
    assert!(
        node.is_file(),
        "{} is not installed: run scripts/install-servers.sh",
        node.display()
    );
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("src")).unwrap();
    std::fs::write(tmp.path().join("src/a.py"), "x = 1\ny = x + 2\n").unwrap();
    let cheat = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/vscode/typist-cheat/cheat.js");
    let script = format!(
        "const {{ Memory }} = require({cheat:?}); const m = new Memory(); const n = m.readWorkspace({root:?}); \
         console.log(JSON.stringify([n, m.peek({file:?}, 1, 'y'), m.peek({file:?}, 1, 'z'), m.peek({file:?}, 5, '')]));",
        cheat = cheat.display().to_string(),
        root = tmp.path().display().to_string(),
        file = tmp.path().join("src/a.py").display().to_string(),
    );
    let out = std::process::Command::new(&node)
        .args(["-e", &script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v, serde_json::json!([1, " = x + 2", null, null]));
}

/// The line below a record's line in the dataset's file.
fn line_below(r: &Value) -> String {
    let text =
        std::fs::read_to_string(Path::new(&semver()).join(r["file"].as_str().unwrap())).unwrap();
    let n = r["line"].as_u64().unwrap() as usize;
    text.lines().nth(n).unwrap_or("").to_string()
}

/// A fixture profile of `fixtures/vscode/editors/`.
fn fixture_profile(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/vscode/editors")
        .join(name)
}

/// An extension measured alone that answers only VS Code's automatic requests and, on
/// its first start, opens its how-to page over the document and asks in a modal dialog
/// whether to install its server (`fixtures/vscode/typist-auto`, in the manner of
/// llama.vscode; issue 39): typist closes both, names them in the manifest, and every
/// case, with nothing typed and with two characters typed, is exactly what the
/// extension drew (each case is reached by Enter at the end of the line above, an edit
/// after which VS Code asks on its own).
#[test]
fn an_extension_answering_automatic_requests_only_is_read_exactly_in_vscode() {
    require_vscode();
    let tmp = tempfile::tempdir().unwrap();
    for k in [0, 2] {
        let out = tmp.path().join(format!("auto-{k}"));
        let mut args = run_args_for(&out, "typist-auto");
        let set = |args: &mut Vec<String>, flag: &str, value: &str| {
            let at = args.iter().position(|a| a == flag).unwrap();
            args[at + 1] = value.to_string();
        };
        set(&mut args, "--typed-prefix", &k.to_string());
        set(&mut args, "--rate", "0.01");
        // With extensions alone the display deadline is all typist has; beside the
        // VS Code drill's busy cores a ghost text once took over the default 1 s.
        args.extend(["--display-deadline-ms", "5000"].map(String::from));
        let editors = fixture_profile("");
        args.extend(
            ["--editors", editors.to_str().unwrap(), "--editor", "vscode"].map(String::from),
        );
        ok(&typist().args(&args).output().unwrap());
        let recs = parsed(&out);
        assert!(recs.len() >= 5, "{} records", recs.len());
        let shown = assert_line_above(&recs, k);
        assert!(shown * 2 >= recs.len(), "{shown} of {} shown", recs.len());
        let m: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap())
                .unwrap();
        assert_eq!(m["editor"]["arrival"], "enter-above");
        assert_eq!(
            m["editor"]["closed"],
            serde_json::json!([
                "dialog: typist-auto: its server is not installed. Install it now?",
                "editor tab: How to use typist-auto"
            ]),
            "{m:#}"
        );
    }
}

/// `typist doctor --editor vscode --json` on a fixture profile of
/// `fixtures/vscode/editors/`: its exit code and its one profile's report.
fn doctor_vscode(profile: &str) -> (Option<i32>, Value) {
    let out = typist()
        .args(["doctor", "--editor", "vscode", "--json", "--profile"])
        .arg(fixture_profile(profile))
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), v["profiles"][0].clone())
}

/// `doctor --editor vscode` installs an extension-only profile's extension, says it
/// activated, and names it in its JSON.
#[test]
fn doctor_says_which_vscode_extensions_activated() {
    require_vscode();
    let (code, r) = doctor_vscode("typist-cheat.toml");
    assert_eq!(code, Some(0), "{r}");
    assert_eq!(r["status"], "ok", "{r}");
    let x = r["extensions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == "typist.typist-cheat")
        .unwrap_or_else(|| panic!("{r}"));
    assert_eq!(x["activated"], true, "{r}");
    assert!(
        r["editor"].as_str().unwrap().starts_with("vscode 1.139."),
        "{r}"
    );
}

/// An extension that is not signed in (the fixture `typist-signin` shows a status bar
/// item and a notification asking to sign in, as assistant extensions do when signed
/// out): `doctor` says `needs-auth` and names what VS Code shows; `run` stops at its
/// first file naming it and writes no record, never a run of empties.
#[test]
fn an_extension_that_asks_to_sign_in_is_named_by_doctor_and_run() {
    require_vscode();
    let (code, r) = doctor_vscode("typist-signin.toml");
    assert_eq!(code, Some(1), "doctor: not every profile ok: {r}");
    assert_eq!(r["status"], "needs-auth", "{r}");
    let auth = r["auth"].as_str().unwrap_or_default();
    // The status bar item stays; the notification may have gone by the time of the
    // probe (toasts hide), so it is not required.
    assert!(auth.contains("status bar: typist-signin: Sign in"), "{r}");

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    let out = typist()
        .args(["run", "--config", "/dev/null", "--quiet", "--dataset"])
        .arg(semver())
        .args(["--single-repo", "--rate", "0.005", "--seed", "1"])
        .args(["--editor", "vscode", "--assistant"])
        .arg(fixture_profile("typist-signin.toml"))
        .arg("--out")
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("typist-signin is not signed in"), "{err}");
    assert!(err.contains("typist-signin: Sign in"), "{err}");
    let records = std::fs::read_to_string(dir.join("records.jsonl")).unwrap_or_default();
    assert_eq!(records, "", "no record of an extension that cannot answer");
}

/// What cannot run is refused before any editor starts, naming what to do.
#[test]
fn extensions_that_cannot_run_are_refused_with_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let cheat =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/vscode/editors/typist-cheat.toml");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "--assistant".into(),
                "vscode-extension".into(),
                "--editor".into(),
                "vscode".into(),
            ],
            "name one with --extension",
        ),
        (
            vec![
                "--assistant".into(),
                "typist-ngram".into(),
                "--editor".into(),
                "vscode".into(),
                "--extension".into(),
                "typist-cheat.vsix".into(),
            ],
            "--extension measures an extension alone",
        ),
        (
            vec![
                "--assistant".into(),
                "vscode-extension".into(),
                "--extension".into(),
                "typist-cheat.vsix".into(),
            ],
            "runs only with --editor vscode",
        ),
        (
            vec![
                "--assistant".into(),
                cheat.display().to_string(),
                "--editor".into(),
                "neovim".into(),
            ],
            "a VS Code extension with no server runs only with --editor vscode",
        ),
        (
            vec![
                "--assistant".into(),
                "vscode-extension".into(),
                "--editor".into(),
                "vscode".into(),
                "--extension".into(),
                "no/such.vsix".into(),
            ],
            "no such .vsix file",
        ),
    ];
    for (extra, want) in cases {
        let out = typist()
            .args([
                "run",
                "--config",
                "/dev/null",
                "--quiet",
                "--dataset",
                &semver(),
                "--single-repo",
                "--rate",
                "0.005",
                "--seed",
                "1",
                "--out",
            ])
            .arg(tmp.path().join("out"))
            .args(&extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{extra:?} ran");
        assert!(err.contains(want), "{extra:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// (pid, parent, command name) of every process.
fn processes() -> Vec<(u32, u32, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let name = head.split_once('(').map_or("", |x| x.1).to_string();
        let mut f = rest.split_whitespace();
        let state = f.next().unwrap_or("?");
        if state == "Z" {
            continue;
        }
        if let Some(ppid) = f.next().and_then(|s| s.parse::<u32>().ok()) {
            out.push((p, ppid, name));
        }
    }
    out
}

/// Every live descendant of `root`: (pid, command name).
fn descendants(root: u32) -> Vec<(u32, String)> {
    let all = processes();
    let mut found: Vec<(u32, String)> = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for (c, pp, name) in &all {
            if *pp == p {
                found.push((*c, name.clone()));
                frontier.push(*c);
            }
        }
    }
    found
}

/// The TCP ports `pid` listens on (its sockets in /proc/net/tcp in state LISTEN).
fn listening_ports(pid: u32) -> Vec<u16> {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| std::fs::read_link(e.path()).ok())
                .filter_map(|l| {
                    let s = l.to_string_lossy().to_string();
                    s.strip_prefix("socket:[")
                        .and_then(|r| r.strip_suffix(']'))
                        .map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    let tcp = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    tcp.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.get(3) == Some(&"0A") && f.get(9).is_some_and(|i| inodes.iter().any(|x| x == i)))
                .then(|| f[1].rsplit_once(':'))
                .flatten()
                .and_then(|(_, port)| u16::from_str_radix(port, 16).ok())
        })
        .collect()
}

fn http(port: u16, request: &str) -> String {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

fn environ(pid: u32) -> Vec<(String, String)> {
    std::fs::read(format!("/proc/{pid}/environ"))
        .unwrap_or_default()
        .split(|&b| b == 0)
        .filter_map(|kv| {
            let s = String::from_utf8_lossy(kv).to_string();
            s.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
        })
        .collect()
}

fn cmdline(pid: u32) -> String {
    String::from_utf8_lossy(&std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default())
        .replace('\0', " ")
}

/// One run, mid-replay: code-server listens on 127.0.0.1 only and refuses a client
/// without typist's password (the workbench, a wrong session cookie, a wrong password
/// at its login); the password is in code-server's environment and on no command line;
/// then typist is killed with SIGKILL and nothing it started (code-server, its
/// extension hosts and watcher, Chromium and its helpers, the n-gram host) is left.
#[test]
fn code_server_refuses_strangers_and_nothing_outlives_a_killed_typist() {
    require_vscode();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut args = run_args(&out);
    args.iter_mut()
        .filter(|a| *a == "0.005")
        .for_each(|a| *a = "0.05".into());
    // The secret canary's rule for the password typist makes: with every log line on
    // (code-server's own, and the DevTools calls that log Chromium in), it is in no
    // output, file or command line.
    let mut child = typist()
        .args(&args)
        .args(["--editor", "vscode"])
        .env("RUST_LOG", "trace")
        .stdout(std::process::Stdio::null())
        // A file, not a pipe: the trace lines would fill a pipe nobody reads yet.
        .stderr(std::fs::File::create(tmp.path().join("stderr")).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    // Wait for a live session: the n-gram host started by the fixture extension.
    let (server, port) = loop {
        let d = descendants(child.id());
        let host = d.iter().any(|(_, n)| n == "typist");
        let server = d
            .iter()
            .find(|(p, _)| cmdline(*p).contains("code-server/out/node/entry.js"))
            .map(|(p, _)| *p);
        if host && let Some(s) = server {
            let ports: Vec<u16> = d.iter().flat_map(|(p, _)| listening_ports(*p)).collect();
            if let Some(&port) = ports.first() {
                break (s, port);
            }
        }
        assert!(
            Instant::now() < deadline,
            "no VS Code session started: {d:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let started: Vec<(u32, String)> = descendants(child.id());

    // Strangers are sent to the login page, and a wrong password is refused.
    let page = http(
        port,
        "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    );
    assert!(page.starts_with("HTTP/1.1 302"), "{page}");
    assert!(page.contains("login"), "{page}");
    let cookie = http(
        port,
        "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: code-server-session=guess\r\nConnection: close\r\n\r\n",
    );
    assert!(cookie.starts_with("HTTP/1.1 302"), "{cookie}");
    let body = "password=guess";
    let login = http(
        port,
        &format!(
            "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    assert!(
        !login.contains("Set-Cookie: code-server-session"),
        "{login}"
    );
    assert!(login.contains("Incorrect password"), "{login}");

    // The password: in code-server's environment, on no command line.
    let password = environ(server)
        .into_iter()
        .find(|(k, _)| k == "PASSWORD")
        .map(|(_, v)| v)
        .expect("code-server has its password in its environment");
    assert!(password.len() >= 32);
    for (p, _) in descendants(child.id()) {
        assert!(!cmdline(p).contains(&password), "on a command line: {p}");
    }

    child.kill().unwrap();
    child.wait().unwrap();
    let stderr = std::fs::read_to_string(tmp.path().join("stderr")).unwrap();
    assert!(
        stderr.contains("TRACE") || stderr.contains("DEBUG"),
        "the log was on: {}",
        &stderr[..stderr.len().min(500)]
    );
    assert!(
        !stderr.contains(&password),
        "typist's output has the password"
    );
    for f in walk(&out) {
        let text = std::fs::read(&f).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&text).contains(&password),
            "{} has the password",
            f.display()
        );
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let alive = |p: u32| processes().iter().any(|(q, _, _)| *q == p);
    while started.iter().any(|(p, _)| alive(*p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let left: Vec<&(u32, String)> = started.iter().filter(|(p, _)| alive(*p)).collect();
    assert!(
        left.is_empty(),
        "left running after typist's SIGKILL: {left:?}"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(d) = std::fs::read_dir(dir) {
        for e in d.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// Completion lists through VS Code's suggest widget: the real pyright on a sampled token
/// plan (its first 20 Python cases), through typist's own client and through VS Code,
/// whose widget is read row by row (paged through: only the rows in view exist). Every
/// case is answered both ways, the token is found or missed alike, and with nothing
/// typed the widget shows every item pyright listed, each named by pyright's own item.
/// The ranks are VS Code's: its fuzzy score moves the best matches up, which typist's
/// own rule does not model (`docs/vscode.md`).
#[test]
fn completion_lists_are_read_from_vscodes_suggest_widget() {
    require_vscode();
    crate::common::tokens::require_installed("pyright");
    let tmp = tempfile::tempdir().unwrap();
    let plan_path = crate::common::tokens::python_token_plan(tmp.path(), 20);
    let editors = crate::common::tokens::patient_profile(tmp.path(), "pyright");
    let run = |editor: &str| {
        parsed(&crate::common::tokens::run_in_editor(
            tmp.path(),
            &plan_path,
            &editors,
            "pyright",
            editor,
        ))
    };
    let (own, vs) = (run("typist"), run("vscode"));
    assert_eq!(own.len(), 20);
    assert_eq!(vs.len(), 20);
    let mut nothing_typed = 0;
    for (x, y) in own.iter().zip(&vs) {
        assert_eq!(x["case"], y["case"]);
        assert_eq!(y["editor"], "vscode");
        assert_eq!(y["outcome"], "suggestion", "{y}");
        assert_eq!(x["outcome"], y["outcome"], "{x}\n{y}");
        assert_eq!(x["rank"].is_null(), y["rank"].is_null(), "{x}\n{y}");
        let (shown, listed) = (y["items"].as_u64().unwrap(), y["listed"].as_u64().unwrap());
        assert!(shown <= listed, "{y}");
        if y["prefix_len"] == 0 {
            nothing_typed += 1;
            assert!(listed > 0, "{y}");
            assert_eq!(shown, listed, "nothing typed: every item shows: {y}");
        }
    }
    assert!(
        nothing_typed >= 3,
        "{nothing_typed} cases with nothing typed"
    );
}

/// A file indented with tabs, each of its lines a case, through typist's client and VS
/// Code: VS Code indents it with tabs too, so a `}` typed after tabs (an electric
/// character, its line given the opening line's indentation in the editor's style) keeps
/// its tabs, and every record is the same (it became four spaces a tab, and the case an
/// editor error, while VS Code indented every file with spaces).
#[test]
fn a_file_indented_with_tabs_is_typed_alike_in_vscode() {
    require_vscode();
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("tabs/src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("count.c"),
        "#include <stdio.h>\n\nint count(const char *s, char c)\n{\n\tint n = 0;\n\tfor (; *s; s++) {\n\t\tif (*s == c) {\n\t\t\tn++;\n\t\t} else {\n\t\t\tn += 0;\n\t\t}\n\t}\n\treturn n;\n}\n\nint main(void)\n{\n\tprintf(\"%d\\n\", count(\"hello\", 'l'));\n\treturn 0;\n}\n",
    )
    .unwrap();
    let run = |editor: &str| {
        let out = tmp.path().join(editor);
        ok(&typist()
            .args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
            .arg("--dataset")
            .arg(tmp.path().join("tabs"))
            .args([
                "--single-repo",
                "--assistant",
                "typist-ngram",
                "--rate",
                "1",
            ])
            .args(["--typed-prefix", "3", "--jobs", "1", "--editor", editor])
            .args(["--key-interval-ms", "20", "--out"])
            .arg(&out)
            .output()
            .unwrap());
        parsed(&out)
    };
    let own = run("typist");
    let vs = run("vscode");
    assert_eq!(own.len(), vs.len());
    assert!(
        own.iter().any(|r| r["case"] == "tabs/src/count.c:9"),
        "`\\t\\t}} else {{` is a case, its typed prefix `\\t\\t}}`: {own:#?}"
    );
    for (a, b) in own.iter().zip(&vs) {
        assert_eq!(a["case"], b["case"]);
        assert_eq!(
            (&a["outcome"], &a["predicted"]),
            (&b["outcome"], &b["predicted"]),
            "typist | vscode: {a:#} | {b:#}"
        );
    }
}
