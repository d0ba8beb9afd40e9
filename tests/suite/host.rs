//! typist's own assistant host: answers at known positions through the project's LSP
//! client (inline and completion dialects), cancellation honoured, every HTTP backend
//! against `typist serve-model` on loopback (answers equal to the baseline computed
//! here), and the fault drills (garbage frames, log floods) a run survives.

use std::path::Path;
use std::time::Duration;

use crate::common::{TYPIST, serve_model};

use typist::editor::typist::TypistSession;
use typist::editor::{Conditions, Position, Profile, SessionOptions, Suggestions};
use typist::host::ngram::predict_document;

fn profile(name: &str, dialect: &str, args: &[&str], timeout_ms: u64) -> Profile {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let toml = format!(
        "name = \"{name}\"\ncommand = \"{TYPIST}\"\nargs = {args:?}\ndialect = \"{dialect}\"\nlanguages = [\"python\"]\nextensions = [\"py\"]\nrequest_timeout_ms = {timeout_ms}\n"
    );
    Profile::parse(&toml, Path::new("test.toml")).unwrap()
}

async fn start(p: &Profile) -> TypistSession {
    TypistSession::start(p, &Conditions::default(), SessionOptions::default())
        .await
        .unwrap()
}

fn inline_lines(s: &Suggestions) -> Vec<String> {
    match s {
        Suggestions::Inline(v) => v.iter().map(|i| i.line.clone()).collect(),
        other => panic!("expected inline, got {other:?}"),
    }
}

const DOC: &str = "import os\nfor name in os.listdir('.'):\n    print(name)\nfor name in ";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inline_and_completion_answers_at_known_positions() {
    let mut s = start(&profile(
        "pl",
        "inline",
        &["host", "--backend", "previous-line"],
        5000,
    ))
    .await;
    assert!(s.capabilities().inline && s.capabilities().completion);
    assert_eq!(
        s.server_info().name.as_deref(),
        Some("typist-host (previous-line)")
    );
    s.open("a.py", DOC).unwrap();
    let end = s.end_of("a.py").unwrap();
    let got = s.suggest("a.py", end).await.unwrap();
    assert_eq!(inline_lines(&got.value), ["for name in os.listdir('.'):"]);
    // At the start of an empty line: the previous non-blank line again.
    s.open("b.py", "a = 1\n\nb = a + 1\n\nc = 2\n").unwrap();
    let got = s
        .suggest(
            "b.py",
            Position {
                line: 3,
                character: 0,
            },
        )
        .await
        .unwrap();
    assert_eq!(inline_lines(&got.value), ["b = a + 1"]);
    // In the middle of a typed line: what the matching earlier line adds.
    let got = s
        .suggest(
            "a.py",
            Position {
                line: 3,
                character: 4,
            },
        )
        .await
        .unwrap();
    assert_eq!(
        inline_lines(&got.value),
        ["for name in os.listdir('.'):name in "]
    );
    s.shutdown().await;

    let mut s = start(&profile(
        "ng",
        "completion",
        &["host", "--backend", "ngram", "--ngram-context", "document"],
        5000,
    ))
    .await;
    s.open("a.py", DOC).unwrap();
    let end = s.end_of("a.py").unwrap();
    let got = s.suggest("a.py", end).await.unwrap();
    match &got.value {
        Suggestions::Completion(items) => {
            assert_eq!(items[0].insert, predict_document(DOC, ""));
            assert_eq!(items[0].insert, "os.listdir('.'):");
        }
        other => panic!("{other:?}"),
    }
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn incremental_sync_stays_right_after_many_edits() {
    let mut s = start(&profile(
        "ng",
        "inline",
        &["host", "--backend", "ngram", "--ngram-context", "document"],
        5000,
    ))
    .await;
    s.open("a.py", "").unwrap();
    // Typed one character at a time, with a few rewrites in the middle.
    let mut text = String::new();
    for c in DOC.chars() {
        text.push(c);
        s.type_text("a.py", &c.to_string()).unwrap();
    }
    let edited = DOC.replace("print(name)", "print(name, flush=True)");
    s.set_text("a.py", &edited).unwrap();
    s.set_text("a.py", &edited.replace("listdir", "scandir"))
        .unwrap();
    let final_text = edited.replace("listdir", "scandir");
    let end = s.end_of("a.py").unwrap();
    let got = s.suggest("a.py", end).await.unwrap();
    let want = format!("for name in {}", predict_document(&final_text, ""));
    assert_eq!(inline_lines(&got.value), [want.as_str()]);
    assert_eq!(inline_lines(&got.value), ["for name in os.scandir('.'):"]);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_is_honoured() {
    let mut s = start(&profile(
        "hang",
        "inline",
        &["host", "--backend", "ngram", "--hang-after", "1"],
        200,
    ))
    .await;
    s.open("a.py", DOC).unwrap();
    let end = s.end_of("a.py").unwrap();
    let err = s.suggest("a.py", end).await.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    // The host answers the cancelled request (with "request cancelled"): the client
    // sees that late answer and discards it.
    for _ in 0..100 {
        if s.stats().late_answers == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(s.stats().late_answers, 1);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_http_backend_reaches_serve_model_and_gets_the_baseline() {
    let model = serve_model(None);
    let text = "import os\nfor name in os.listdir('.'):\n    print(name)\nfor name in ";
    let suffix = "\nprint('done')\n";
    let want = format!("for name in {}", predict_document(text, suffix));
    assert_eq!(want, "for name in os.listdir('.'):");
    for (backend, template) in [
        ("openai", "starcoder"),
        ("openai", "codellama"),
        ("openai", "deepseek"),
        ("openai", "qwen"),
        ("openai", "none"),
        ("ollama", "starcoder"),
        ("llamacpp", "starcoder"),
        ("tgi", "starcoder"),
        ("tgi", "qwen"),
    ] {
        let p = profile(
            backend,
            "inline",
            &[
                "host",
                "--backend",
                backend,
                "--endpoint",
                &model.url,
                "--template",
                template,
                "--model",
                "m",
            ],
            10_000,
        );
        let mut s = start(&p).await;
        s.open("a.py", &format!("{text}{suffix}")).unwrap();
        let cursor = Position {
            line: 3,
            character: 12,
        };
        let got = s.suggest("a.py", cursor).await.unwrap();
        assert_eq!(
            inline_lines(&got.value),
            [want.as_str()],
            "{backend} {template}"
        );
        s.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_model_is_an_error_not_an_empty_answer() {
    let p = profile(
        "down",
        "inline",
        &[
            "host",
            "--backend",
            "openai",
            "--endpoint",
            "http://127.0.0.1:9",
            "--http-timeout-ms",
            "2000",
        ],
        10_000,
    );
    let mut s = start(&p).await;
    s.open("a.py", DOC).unwrap();
    let end = s.end_of("a.py").unwrap();
    let err = s.suggest("a.py", end).await.unwrap_err().to_string();
    assert!(err.contains("127.0.0.1:9"), "{err}");
    s.shutdown().await;
}

#[test]
fn runs_survive_garbage_frames_and_log_floods() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, extra) in [
        ("garbage", ["--garbage-after", "1"]),
        ("flood", ["--log-flood", "200"]),
    ] {
        let editors = crate::common::editors_with(tmp.path(), name, &extra, 5000);
        let out = tmp.path().join(name);
        let o = crate::common::typist()
            .args([
                "run",
                "--config",
                "/dev/null",
                "--quiet",
                "--dataset",
                crate::common::DATASET,
            ])
            .args([
                "--assistant",
                name,
                "--editors",
                editors.to_str().unwrap(),
                "--rate",
                "0.02",
                "--seed",
                "3",
                "--out",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let recs: Vec<serde_json::Value> = std::fs::read_to_string(out.join("records.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(recs.len() > 20);
        // Garbage between frames is skipped; every case is still answered.
        assert!(
            recs.iter()
                .all(|r| r["outcome"] == "suggestion" || r["outcome"] == "empty"),
            "{name}"
        );
    }
}

/// The adversary of the replay's honesty test is real: a workspace whose target file is
/// on disk in full when the server starts (the old replay's leak) lets `--backend cheat`
/// answer the hidden line exactly, although the editor's document holds only the lines
/// above it. (`tests/suite/replay/typing.rs` shows it finds nothing in a real run.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cheating_backend_finds_a_line_left_on_disk() {
    let full = "import os\nprint(os.getcwd())\nx = 1\n";
    let p = profile("cheat", "inline", &["host", "--backend", "cheat"], 5000);
    let mut s = TypistSession::start(
        &p,
        &Conditions::default(),
        SessionOptions {
            contents: vec![("a.py".into(), full.into())],
            ..Default::default()
        },
    )
    .await
    .unwrap();
    // The editor holds the first line only, and the disk copy now mirrors it.
    s.open("a.py", "import os\n").unwrap();
    assert_eq!(
        std::fs::read_to_string(s.workspace().join("a.py")).unwrap(),
        "import os\n"
    );
    let got = s
        .suggest(
            "a.py",
            Position {
                line: 1,
                character: 0,
            },
        )
        .await
        .unwrap();
    assert_eq!(inline_lines(&got.value), ["print(os.getcwd())"]);
    // A session that starts with the hidden state on disk gives it nothing.
    let mut s = TypistSession::start(
        &p,
        &Conditions::default(),
        SessionOptions {
            contents: vec![("a.py".into(), String::new())],
            ..Default::default()
        },
    )
    .await
    .unwrap();
    s.open("a.py", "").unwrap();
    s.set_text("a.py", "import os\n").unwrap();
    assert_eq!(
        std::fs::read_to_string(s.workspace().join("a.py")).unwrap(),
        "import os\n"
    );
    let got = s
        .suggest(
            "a.py",
            Position {
                line: 1,
                character: 0,
            },
        )
        .await
        .unwrap();
    assert!(inline_lines(&got.value).is_empty(), "{got:?}");
}

/// What the host answers at the start of the second line of `target`, typed as `typed`,
/// in a session whose workspace holds `files`.
async fn second_line(
    p: &Profile,
    files: &[(&str, &str)],
    target: &str,
    typed: &str,
) -> Vec<String> {
    let mut s = TypistSession::start(
        p,
        &Conditions::default(),
        SessionOptions {
            contents: files
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    s.open(target, typed).unwrap();
    let at = Position {
        line: 1,
        character: 0,
    };
    let got = s.suggest(target, at).await.unwrap();
    s.shutdown().await;
    inline_lines(&got.value)
}

/// Issue 47: the n-gram host's index is cached on disk and shared by the sessions of a
/// repository, so a later session's cached index holds its target file in full (as an
/// earlier session, where it was not the target, saw it on disk). Those later lines are
/// never used: the answer is the one a host without a cache gives, though the same index
/// answers them to a session where that file is legitimately on disk.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_index_never_answers_from_the_target_files_later_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let with_cache = |dir: &str| {
        let mut p = profile("ng", "inline", &["host", "--backend", "ngram"], 5000);
        p.env.insert("TYPIST_CACHE_DIR".into(), dir.into());
        p
    };
    let cache = tmp.path().join("cache");
    let cached = with_cache(cache.to_str().unwrap());
    let uncached = with_cache("off");
    // A neutral file large beside the targets, so that a session reuses the index.
    let big: String = (0..300).map(|i| format!("v{i} = compute({i})\n")).collect();
    let b_full = "import quux_reader\nzeta_total = quux_reader.load_zeta(path)\n";
    let b_typed = "import quux_reader\n";
    // Session 1: a.py is the target; b.py is on disk in full, and goes into the index.
    second_line(
        &cached,
        &[("big.py", &big), ("a.py", "import os\n"), ("b.py", b_full)],
        "a.py",
        "import os\n",
    )
    .await;
    let files: Vec<_> = std::fs::read_dir(cache.join("ngram"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let idx = &files[0];
    assert!(
        std::fs::read(idx)
            .unwrap()
            .windows(9)
            .any(|w| w == b"load_zeta"),
        "the cached index holds b.py in full"
    );
    let (ino, mtime) = {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(idx).unwrap();
        (m.ino(), m.modified().unwrap())
    };

    // Session 2: b.py is the target, its first line typed; the cached index is read
    // back (the same file, not rewritten) and b.py's later line never answers.
    let files2 = [
        ("big.py", big.as_str()),
        ("a.py", "import os\nprint(os.getcwd())\n"),
        ("b.py", b_typed),
    ];
    let second = second_line(&cached, &files2, "b.py", b_typed).await;
    {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(idx).unwrap();
        assert_eq!(m.ino(), ino, "the index was read back, not built anew");
        assert!(m.modified().unwrap() > mtime, "the index was read");
    }
    assert!(
        second.iter().all(|l| !l.contains("load_zeta")),
        "{second:?}"
    );
    let fresh = second_line(&uncached, &files2, "b.py", b_typed).await;
    assert_eq!(second, fresh, "the answer of a host without a cache");

    // The control: where b.py is on disk in full and a.py is typed instead, the same
    // cached index answers b.py's later line.
    let control = second_line(
        &cached,
        &[
            ("big.py", big.as_str()),
            ("a.py", b_typed),
            ("b.py", b_full),
        ],
        "a.py",
        b_typed,
    )
    .await;
    assert_eq!(control, ["zeta_total = quux_reader.load_zeta(path)"]);
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(idx).unwrap().ino(), ino, "the same index");
}
