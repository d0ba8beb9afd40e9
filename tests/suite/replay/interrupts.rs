//! Runs cut short: SIGKILL and resume, one and two Ctrl-C, no server outliving a
//! killed typist, a worker's panic.

use super::*;

#[test]
fn a_run_killed_mid_way_and_resumed_equals_an_uninterrupted_run() {
    let tmp = tempfile::tempdir().unwrap();
    let editors = editors_with(tmp.path(), "slow-ngram", &["--delay-ms", "15"], 10_000);
    let common = [
        "--dataset",
        DATASET,
        "--assistant",
        "slow-ngram",
        "--editors",
        editors.to_str().unwrap(),
    ];
    let whole = whole_run(tmp.path(), &common);

    let cut = tmp.path().join("cut");
    let cut_s = cut.to_str().unwrap().to_string();
    let mut child = typist()
        .arg("run")
        .args(["--config", "/dev/null", "--quiet", "--no-latency"])
        .args(common)
        .args(DS_ARGS)
        .args(["--out", &cut_s])
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let n = std::fs::read_to_string(cut.join("records.jsonl"))
            .map(|t| t.lines().count())
            .unwrap_or(0);
        if n >= 20 {
            break;
        }
        assert!(Instant::now() < deadline, "the run made no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let partial = records(&cut).lines().count();
    assert!(
        partial < records(&whole).lines().count(),
        "killed before the end"
    );
    // Without --resume the folder is refused; with it the run completes.
    let refused = run(&[&common[..], &DS_ARGS[..], &["--out", &cut_s]].concat());
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--resume"));
    ok(&run(&[
        &common[..],
        &DS_ARGS[..],
        &["--out", &cut_s, "--resume"],
    ]
    .concat()));
    assert_eq!(records(&cut), records(&whole));
}

#[test]
fn ctrl_c_stops_cleanly_and_resume_completes_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let editors = editors_with(tmp.path(), "slow", &["--delay-ms", "15"], 10_000);
    let common = [
        "--dataset",
        DATASET,
        "--assistant",
        "slow",
        "--editors",
        editors.to_str().unwrap(),
        "--rate",
        "0.05",
        "--seed",
        "3",
    ];
    let out = tmp.path().join("out");
    let out_s = out.to_str().unwrap().to_string();
    let child = typist()
        .arg("run")
        .args(["--config", "/dev/null", "--quiet", "--no-latency"])
        .args(common)
        .args(["--out", &out_s])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::read_to_string(out.join("records.jsonl"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
        < 10
    {
        assert!(Instant::now() < deadline, "no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("--resume"));
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["status"], "interrupted");
    let partial = parsed(&out);
    assert!(!partial.is_empty());
    // What was kept is sorted and complete records.
    let keys: Vec<(String, String, u64)> = partial
        .iter()
        .map(|r| {
            (
                r["repo"].as_str().unwrap().to_string(),
                r["file"].as_str().unwrap().to_string(),
                r["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    ok(&run(&[&common[..], &["--out", &out_s, "--resume"]].concat()));
    let whole = tmp.path().join("whole");
    ok(&run(
        &[&common[..], &["--out", whole.to_str().unwrap()]].concat()
    ));
    assert_eq!(records(&out), records(&whole));
}

/// Processes whose parent is `pid`, with their command lines.
fn children_of(pid: u32) -> Vec<(u32, String)> {
    let mut out = vec![];
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        // pid (comm) state ppid …: comm may hold spaces, so split after the last ')'.
        let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
        let ppid: u32 = rest
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        if ppid == pid {
            let cmd = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            out.push((p, String::from_utf8_lossy(&cmd).replace('\0', " ")));
        }
    }
    out
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

/// The `--linger-secs` servers of typist `pid`: once `want` have started (or at least
/// one and 10 s have passed); fails after 30 s with none.
fn lingering_servers(pid: u32, want: usize) -> Vec<(u32, String)> {
    let started = Instant::now();
    loop {
        let s: Vec<(u32, String)> = children_of(pid)
            .into_iter()
            .filter(|(_, c)| c.contains("--linger-secs"))
            .collect();
        if s.len() >= want || (!s.is_empty() && started.elapsed() > Duration::from_secs(10)) {
            return s;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no server started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits up to 5 s for every server to be gone; kills and fails on any left.
fn assert_gone_within_5s(servers: &[(u32, String)]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while servers.iter().any(|(p, _)| alive(*p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<_> = servers.iter().filter(|(p, _)| alive(*p)).collect();
    for (p, _) in &left {
        // SAFETY: kill(2); clean up before failing.
        unsafe { libc::kill(*p as i32, libc::SIGKILL) };
    }
    assert!(left.is_empty(), "servers left running: {left:?}");
}

/// SIGKILL of typist leaves no server behind, even one that would linger for minutes
/// after its client is gone: servers get PR_SET_PDEATHSIG besides their own group.
#[test]
fn no_server_outlives_a_killed_typist() {
    let tmp = tempfile::tempdir().unwrap();
    let editors = editors_with(
        tmp.path(),
        "lingers",
        &["--linger-secs", "300", "--hang-after", "1"],
        60_000,
    );
    let out = tmp.path().join("out");
    let mut child = typist()
        .args([
            "run",
            "--config",
            "/dev/null",
            "--quiet",
            "--no-latency",
            "--jobs",
            "2",
        ])
        .args([
            "--dataset",
            DATASET,
            "--assistant",
            "lingers",
            "--rate",
            "0.02",
        ])
        .arg("--editors")
        .arg(&editors)
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let servers = lingering_servers(child.id(), 2);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_gone_within_5s(&servers);
}

/// The first Ctrl-C waits for the cases in flight (here a server that never answers,
/// with a 60 s deadline); the second stops typist at once, and its servers with it.
#[test]
fn ctrl_c_twice_forces_exit() {
    let tmp = tempfile::tempdir().unwrap();
    let editors = editors_with(
        tmp.path(),
        "stuck",
        &["--linger-secs", "300", "--hang-after", "1"],
        60_000,
    );
    let out = tmp.path().join("out");
    let transcripts = tmp.path().join("transcripts");
    let mut child = typist()
        .args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
        .args([
            "--dataset",
            DATASET,
            "--assistant",
            "stuck",
            "--rate",
            "0.02",
        ])
        .arg("--editors")
        .arg(&editors)
        .arg("--out")
        .arg(&out)
        .arg("--transcripts")
        .arg(&transcripts)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = StderrLines::of(&mut child);
    let servers = lingering_servers(child.id(), 1);
    // The first suggestion request is in flight once the transcript holds it (the
    // transcript is flushed per message, before the frame is written to the server).
    wait_for(
        "a suggestion request in a transcript",
        Duration::from_secs(60),
        || {
            std::fs::read_dir(&transcripts).ok().is_some_and(|d| {
                d.flatten().any(|e| {
                    std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("inlineCompletion"))
                })
            })
        },
    );
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    wait_for(
        "typist's answer to the first Ctrl-C",
        Duration::from_secs(10),
        || stderr.text().contains("stopping after the cases in flight"),
    );
    if let Some(s) = child.try_wait().unwrap() {
        panic!(
            "one Ctrl-C waits for the case in flight; exited {s}: {}",
            stderr.text()
        );
    }
    // The second Ctrl-C's own message (below) shows typist was still waiting when it
    // came: only the handler of a second Ctrl-C prints it.
    let second = Instant::now();
    // SAFETY: as above.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if second.elapsed() > Duration::from_secs(10) {
            child.kill().unwrap();
            panic!("a second Ctrl-C did not stop typist within 10 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130));
    wait_for(
        "typist's answer to the second Ctrl-C",
        Duration::from_secs(5),
        || stderr.closed(),
    );
    let err = stderr.text();
    assert!(err.contains("stopped at once"), "{err}");
    assert_gone_within_5s(&servers);
    // The manifest says how the run ended, with the records the file holds.
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["status"], "interrupted", "{m}");
    assert!(m["ended_at"].is_string(), "{m}");
    let kept = std::fs::read_to_string(out.join("records.jsonl"))
        .unwrap_or_default()
        .lines()
        .count();
    assert_eq!(m["records"], kept, "{m}");
    assert_eq!(m["history"][0]["status"], "interrupted", "{m}");
}

/// Polls `done` every 20 ms until it holds; fails naming `what` after `deadline`.
fn wait_for(what: &str, deadline: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < deadline, "no {what} within {deadline:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A child's stderr read on a thread of its own as it comes, so a test can wait for a
/// line without blocking on the pipe.
struct StderrLines {
    text: std::sync::Arc<std::sync::Mutex<String>>,
    reader: std::thread::JoinHandle<()>,
}

impl StderrLines {
    fn of(child: &mut std::process::Child) -> StderrLines {
        let mut pipe = child.stderr.take().unwrap();
        let text = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let into = text.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = std::io::Read::read(&mut pipe, &mut buf) {
                if n == 0 {
                    break;
                }
                into.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        StderrLines { text, reader }
    }

    fn text(&self) -> String {
        self.text.lock().unwrap().clone()
    }

    /// The pipe reached its end (every writer gone).
    fn closed(&self) -> bool {
        self.reader.is_finished()
    }
}

/// A panic in a worker stops the run with a message and exit 1, keeps every record
/// already written, and `--resume` completes it to an uninterrupted run's records.
#[test]
fn a_worker_panic_keeps_the_records_and_resume_completes_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let common = [
        "--dataset",
        DATASET,
        "--assistant",
        "typist-ngram",
        "--jobs",
        "2",
    ];
    let whole = whole_run(tmp.path(), &common);
    let cut = tmp.path().join("cut");
    let cut_s = cut.to_str().unwrap().to_string();
    let o = typist()
        .args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
        .args(["--drill-panic-at", "25"])
        .args(common)
        .args(DS_ARGS)
        .args(["--out", &cut_s])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("worker panicked"), "{err}");
    let kept = records(&cut).lines().count();
    assert!(
        kept >= 20 && kept < records(&whole).lines().count(),
        "{kept}"
    );
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(cut.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["status"], "failed");
    ok(&run(&[
        &common[..],
        &DS_ARGS[..],
        &["--out", &cut_s, "--resume"],
    ]
    .concat()));
    assert_eq!(records(&cut), records(&whole));
}
