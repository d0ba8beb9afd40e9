//! `typist record` (issue 44): a person's editing recorded in a real Neovim on a
//! terminal, typed here through tmux as a person types (keys a few tens of
//! milliseconds apart, pauses between edits), then replayed through typist's own
//! client, Neovim and VS Code.

use std::process::Command;
use std::time::{Duration, Instant};

use typist::dataset::edits::{EventKind, Origin, read_edits_plan};

use super::common::{TYPIST, ok, typist};
use super::vscode::require_vscode;

/// A tmux server of the test's own (its own socket), so that the session's
/// environment is the test's.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("tmux is not installed: run scripts/install-servers.sh")
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "rec"];
        args.extend_from_slice(keys);
        let o = self.run(&args);
        assert!(o.status.success(), "tmux send-keys: {o:?}");
    }

    /// Types `text` one character at a time, 40 ms apart.
    fn typed(&self, text: &str) {
        for c in text.chars() {
            let s = c.to_string();
            let o = self.run(&["send-keys", "-t", "rec", "-l", &s]);
            assert!(o.status.success(), "tmux send-keys: {o:?}");
            std::thread::sleep(Duration::from_millis(40));
        }
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "rec"]).stdout).into()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

fn pause() {
    std::thread::sleep(Duration::from_millis(1300));
}

/// A person renames `x` to `value`, fixes one use, adds a line (pausing in the middle
/// of it, with a multibyte character) and a return line, then saves and quits; the
/// recording replays to the file Neovim wrote, and through typist's client, Neovim and
/// VS Code the n-gram host's inline records are the same at every moment.
#[test]
fn a_session_typed_in_neovim_is_recorded_and_replays_alike_in_three_editors() {
    require_vscode();
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("calc");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(
        ws.join("calc.py"),
        "def f(x):\n    y = x + 1\n    return x * y\n",
    )
    .unwrap();
    let plan = tmp.path().join("session.jsonl");
    let mark = tmp.path().join("done");
    let tmux = Tmux {
        socket: format!("typist-test-{}", std::process::id()),
    };
    let cmd = format!(
        "{TYPIST} record --clean --out {} calc.py; echo $? > {}",
        plan.display(),
        mark.display()
    );
    let o = tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "rec",
        "-x",
        "120",
        "-y",
        "40",
        "-c",
        ws.to_str().unwrap(),
        &cmd,
    ]);
    assert!(o.status.success(), "tmux new-session: {o:?}");
    std::thread::sleep(Duration::from_millis(1500));
    // Rename the parameter.
    tmux.keys(&["0", "f", "x"]);
    std::thread::sleep(Duration::from_millis(200));
    tmux.keys(&["x", "i"]);
    tmux.typed("value");
    tmux.keys(&["Escape"]);
    pause();
    // Fix its first use.
    tmux.keys(&["j", "0", "f", "x", "x", "i"]);
    tmux.typed("value");
    tmux.keys(&["Escape"]);
    pause();
    // A new line, with a pause in the middle of it, then a return line.
    tmux.keys(&["G", "o"]);
    tmux.typed("    z = val");
    pause();
    tmux.typed("ue + 1");
    pause();
    tmux.keys(&["Enter"]);
    tmux.typed("    return z");
    pause();
    tmux.typed(" + é");
    tmux.keys(&["Escape"]);
    pause();
    tmux.keys(&[":", "w", "q", "Enter"]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !mark.exists() {
        assert!(
            Instant::now() < deadline,
            "typist record did not end; the terminal shows:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        std::fs::read_to_string(&mark).unwrap().trim(),
        "0",
        "typist record failed; the terminal shows:\n{}",
        tmux.screen()
    );
    let written = std::fs::read_to_string(ws.join("calc.py")).unwrap();
    assert!(
        written.contains("z = value + 1\n") && written.ends_with("+ é\n"),
        "{written}"
    );

    let (header, sessions) = read_edits_plan(&plan).unwrap();
    assert_eq!(header.pause_ms, 1000);
    assert_eq!(sessions.len(), 1);
    let s = &sessions[0];
    s.validate().unwrap();
    assert!(matches!(&s.origin, Origin::Recorded { editor } if editor.starts_with("neovim ")));
    assert_eq!(s.repo, "calc");
    assert_eq!(s.files.keys().collect::<Vec<_>>(), ["calc.py"]);
    assert_eq!(
        s.buffers_after(s.events.len()).unwrap().files["calc.py"],
        written,
        "the recording replays to the file Neovim wrote"
    );
    assert!(s.events.windows(2).all(|w| w[0].t <= w[1].t));
    // Typed text is recorded a character at a time, none of it a paste; a line opened
    // (Enter, `o`) comes with the indentation Neovim adds.
    let typed: Vec<(&str, bool)> = s
        .events
        .iter()
        .filter_map(|e| match &e.what {
            EventKind::Insert { text, paste, .. } => Some((text.as_str(), *paste)),
            _ => None,
        })
        .collect();
    for (t, paste) in &typed {
        assert!(!paste, "{typed:?}");
        assert!(
            t.chars().count() == 1 || (t.contains('\n') && t.trim().is_empty()),
            "{typed:?}"
        );
    }
    assert!(typed.iter().any(|(t, _)| *t == "é"), "{typed:?}");
    // Nothing of the machine beyond the workspace's file.
    let line = std::fs::read_to_string(&plan).unwrap();
    assert!(!line.contains(tmp.path().to_str().unwrap()), "{line}");
    // A moment at each pause after the first edit.
    assert!(s.moments.len() >= 4, "{:#?}", s.moments);

    // The replay through the three editors, the n-gram host (and in typist's client
    // and Neovim the rename baseline's next edits).
    let run = |editor: &str, assistants: &[&str]| {
        let out = tmp.path().join(format!("out-{editor}"));
        let o = typist()
            .args(["run", "--quiet", "--no-latency", "--jobs", "1", "--plan"])
            .arg(&plan)
            .args(assistants.iter().flat_map(|a| ["--assistant", a]))
            .args(["--editor", editor, "--key-interval-ms", "20", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        if !o.status.success() {
            // What the failed moments say: the run's own line says only that they failed.
            let errors: std::collections::BTreeSet<String> =
                std::fs::read_to_string(out.join("records.jsonl"))
                    .unwrap_or_default()
                    .lines()
                    .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                    .filter_map(|r| r["error"].as_str().map(str::to_string))
                    .collect();
            panic!(
                "through {editor}: {}\n{errors:#?}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::fs::read_to_string(out.join("records.jsonl"))
            .unwrap()
            .lines()
            .map(|l| {
                let mut r: serde_json::Value = serde_json::from_str(l).unwrap();
                for k in ["latency_ms", "request_hash"] {
                    r.as_object_mut().map(|o| o.remove(k));
                    r["inline"].as_object_mut().map(|o| o.remove(k));
                }
                r
            })
            .collect::<Vec<_>>()
    };
    let own = run("typist", &["typist-ngram", "typist-rename"]);
    let nvim = run("neovim", &["typist-ngram", "typist-rename"]);
    let vs = run("vscode", &["typist-ngram"]);
    assert_eq!(own.len(), 2 * s.moments.len());
    // The same records through Neovim; the one difference allowed is the rename
    // baseline proposing nothing there (Neovim batches its whole-text changes).
    assert_eq!(own.len(), nvim.len());
    for (a, b) in own.iter().zip(&nvim) {
        assert!(
            a == b
                || (a["assistant"] == "typist-rename"
                    && b["outcome"] == "empty"
                    && a["inline"] == b["inline"]),
            "typist's client | neovim: {a:#} | {b:#}"
        );
    }
    let ngram: Vec<&serde_json::Value> = own
        .iter()
        .filter(|r| r["assistant"] == "typist-ngram")
        .collect();
    assert_eq!(ngram.len(), vs.len());
    let same = ngram
        .iter()
        .zip(&vs)
        .filter(|(a, b)| a["inline"] == b["inline"])
        .count();
    assert!(
        same * 100 >= 99 * vs.len(),
        "{same} of {} moments with the same inline record through VS Code:\n{ngram:#?}\n{vs:#?}",
        vs.len()
    );
    let asked = ngram.iter().filter(|r| !r["inline"].is_null()).count();
    assert!(asked >= 2, "inline asks at the pauses mid-line: {ngram:#?}");
}

/// A person at VS Code in a browser (`tests/common/person_at_vscode.py`: a Chromium of
/// its own, keys a few tens of milliseconds apart, pauses between edits) renames `x`,
/// fixes one use, adds lines (with a pause mid-line, a bracket VS Code closes and the
/// person types over, Enter with VS Code's indentation, a multibyte character), saves
/// and runs Typist: Stop Recording; the recording replays to the file VS Code wrote, and
/// through typist's client each moment is asked, the rename baseline proposing the
/// rename's last use.
#[test]
fn a_session_typed_in_vscode_is_recorded_and_replays_to_its_file() {
    require_vscode();
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("calc");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(
        ws.join("calc.py"),
        // A first line of characters VS Code counts as one and two UTF-16 units: every
        // offset after it is a byte offset only if the recorder turned it into one.
        "# é😀\ndef f(x):\n    y = x + 1\n    return x * y\n",
    )
    .unwrap();
    let plan = tmp.path().join("session.jsonl");
    let steps = tmp.path().join("steps.json");
    // Pauses well over `--pause-ms` (1000): the recorder times each change as VS
    // Code's extension host receives it, and a host late on a busy machine took a
    // 1.3 s pause as under a second (CI, the rename's moment lost).
    let p = |ms: u64| serde_json::json!({ "pause": ms });
    let t = |s: &str| serde_json::json!({ "type": s });
    let steps_json = serde_json::json!([
        {"wait_text": "def f(x)"},
        {"goto": "2:7"}, {"press": "Delete"}, t("value"), p(2500),
        {"goto": "3:9"}, {"press": "Delete"}, t("value"), p(2500),
        {"press": "End", "ctrl": true},
        t("    z = val"), p(2500), t("ue + 1"), p(2500),
        {"press": "Enter"}, t("print(z"), t(")"), p(2500),
        {"press": "Enter"}, t("return z + é"), p(2500),
        {"save": true},
        {"command": "Typist: Stop Recording"},
    ]);
    std::fs::write(&steps, steps_json.to_string()).unwrap();
    let mut rec = typist()
        .args(["record", "--editor", "vscode", "--out"])
        .arg(&plan)
        .arg("--workspace")
        .arg(&ws)
        .arg("calc.py")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // What typist prints for the person: the address and the password.
    let mut err = std::io::BufReader::new(rec.stderr.take().unwrap());
    let (mut url, mut password, mut said) = (None, None, String::new());
    while password.is_none() {
        let mut line = String::new();
        let n = std::io::BufRead::read_line(&mut err, &mut line).unwrap();
        assert!(
            n > 0,
            "typist record ended before it gave an address:\n{said}"
        );
        said.push_str(&line);
        let l = line.trim();
        if l.starts_with("http://127.0.0.1:") {
            url = Some(l.to_string());
        }
        password = l.strip_prefix("password: ").map(str::to_string);
    }
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut err, &mut s).unwrap();
        s
    });
    let person = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/common/person_at_vscode.py"
        ))
        .arg(url.expect("an address"))
        .arg(password.unwrap())
        .arg(&steps)
        .output()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = rec.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = rec.kill();
            panic!(
                "typist record did not end after Typist: Stop Recording; the person: {}",
                String::from_utf8_lossy(&person.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        person.status.success(),
        "the person at VS Code: {}",
        String::from_utf8_lossy(&person.stderr)
    );
    let said = said + &rest.join().unwrap();
    assert!(status.success(), "typist record: {status:?}\n{said}");
    assert!(
        !said.contains("unchecked"),
        "the recorder wrote the last text: {said}"
    );
    let written = std::fs::read_to_string(ws.join("calc.py")).unwrap();
    assert_eq!(
        written,
        "# é😀\ndef f(value):\n    y = value + 1\n    return x * y\n    z = value + 1\n    print(z)\n    return z + é"
    );

    let (header, sessions) = read_edits_plan(&plan).unwrap();
    assert_eq!(header.pause_ms, 1000);
    let s = &sessions[0];
    s.validate().unwrap();
    assert!(
        matches!(&s.origin, Origin::Recorded { editor } if editor.starts_with("vscode 1.")),
        "{:?}",
        s.origin
    );
    assert_eq!(s.repo, "calc");
    assert_eq!(
        s.buffers_after(s.events.len()).unwrap().files["calc.py"],
        written,
        "the recording replays to the file VS Code wrote"
    );
    // Typed a character at a time; Enter with VS Code's indentation; the closing
    // bracket VS Code added and the one the person typed over it.
    let typed: Vec<&str> = s
        .events
        .iter()
        .filter_map(|e| match &e.what {
            EventKind::Insert { text, paste, .. } => {
                assert!(!paste, "{e:?}");
                Some(text.as_str())
            }
            _ => None,
        })
        .collect();
    assert!(
        typed.contains(&"é") && typed.contains(&"\n    "),
        "{typed:?}"
    );
    assert!(
        typed
            .iter()
            .all(|t| t.chars().count() == 1 || *t == "\n    " || *t == "()"),
        "{typed:?}"
    );
    let line = std::fs::read_to_string(&plan).unwrap();
    assert!(!line.contains(tmp.path().to_str().unwrap()), "{line}");
    assert!(s.moments.len() >= 4, "{:#?}", s.moments);

    let out = tmp.path().join("out");
    let o = typist()
        .args(["run", "--quiet", "--no-latency", "--plan"])
        .arg(&plan)
        .args([
            "--assistant",
            "typist-ngram",
            "--assistant",
            "typist-rename",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    ok(&o);
    let records = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
    assert_eq!(records.lines().count(), 2 * s.moments.len(), "{records}");
    // The rename the person began, proposed at the use they left.
    assert!(
        records
            .lines()
            .any(|l| l.contains("\"typist-rename\"") && l.contains("return value * y")),
        "{records}"
    );
}
