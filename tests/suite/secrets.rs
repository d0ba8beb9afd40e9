//! The secret canary: canary keys and tokens go in through every way typist takes one
//! (an API key named by `--api-key-env` and sent as a Bearer header by each HTTP
//! backend: OpenAI-compatible, Ollama, llama.cpp, TGI; a token in
//! initialization options, a key in settings, a token in a server's environment), into a
//! careless server that prints its key to stderr, quotes it in error answers and
//! crashes; then `run` with `RUST_LOG=trace` and transcripts, `report`, `score` and
//! `doctor`. Nothing written or printed may hold a canary, and the errors that quoted
//! one must show `[redacted]` in its place.

use std::path::Path;

use crate::common::*;

const KEY: &str = "sk-canary-0f9e8d7c6b5a4938";
const TOKEN: &str = "canary-init-token-5e4d3c2b";
const SETTING: &str = "canary-settings-key-a1b2c3d4";
const ENV_TOKEN: &str = "canary-env-token-99887766";
const CANARIES: [&str; 4] = [KEY, TOKEN, SETTING, ENV_TOKEN];

fn all_text(dir: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            all_text(&p, out);
        } else {
            let bytes = std::fs::read(&p).unwrap();
            out.push((
                p.display().to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ));
        }
    }
}

#[test]
fn no_canary_reaches_records_transcripts_manifests_logs_reports_or_messages() {
    let tmp = tempfile::tempdir().unwrap();
    let model = serve_model(None);
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let common = "dialect = \"inline\"\nlanguages = [\"python\", \"javascript\"]\nextensions = [\"py\", \"js\"]\nrequest_timeout_ms = 10000\n";
    std::fs::write(
        editors.join("canary-http.toml"),
        format!(
            "name = \"canary-http\"\ncommand = \"@typist\"\nargs = [\"host\", \"--backend\", \"openai\", \"--endpoint\", \"{}\", \"--api-key-env\", \"TYPIST_CANARY_API_KEY\", \"--leak-env\", \"TYPIST_CANARY_API_KEY\", \"--crash-after\", \"7\"]\n{common}",
            model.url
        ),
    )
    .unwrap();
    // The other HTTP backends take the key the same way.
    for backend in ["ollama", "llamacpp", "tgi"] {
        std::fs::write(
            editors.join(format!("canary-{backend}.toml")),
            format!(
                "name = \"canary-{backend}\"\ncommand = \"@typist\"\nargs = [\"host\", \"--backend\", \"{backend}\", \"--endpoint\", \"{}\", \"--api-key-env\", \"TYPIST_CANARY_API_KEY\"]\n{common}",
                model.url
            ),
        )
        .unwrap();
    }
    std::fs::write(
        editors.join("canary-lsp.toml"),
        format!(
            "name = \"canary-lsp\"\ncommand = \"@typist\"\nargs = [\"host\", \"--leak-env\", \"CANARY_TOKEN\"]\n{common}\
             [env]\nCANARY_TOKEN = \"{ENV_TOKEN}\"\n\
             [initialization_options]\ntoken = \"{TOKEN}\"\n\
             [settings.typist]\napiKey = \"{SETTING}\"\n\
             [probe]\nfile = \"probe.py\"\ntext = \"import os\\nimport \"\nexpect = \"os\"\n"
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let transcripts = tmp.path().join("transcripts");
    let mut printed: Vec<(String, String)> = Vec::new();
    let mut capture = |what: &str, o: std::process::Output| {
        printed.push((
            format!("{what} stdout"),
            String::from_utf8_lossy(&o.stdout).into(),
        ));
        printed.push((
            format!("{what} stderr"),
            String::from_utf8_lossy(&o.stderr).into(),
        ));
        o
    };
    let run = capture(
        "run",
        typist()
            .env("TYPIST_CANARY_API_KEY", KEY)
            .env("RUST_LOG", "trace")
            .args([
                "run",
                "--config",
                "/dev/null",
                "--no-latency",
                "--rate",
                "0.05",
            ])
            .args(["--assistant", "canary-http", "--assistant", "canary-lsp"])
            .args([
                "--assistant",
                "canary-ollama",
                "--assistant",
                "canary-llamacpp",
            ])
            .args(["--assistant", "canary-tgi"])
            .arg("--dataset")
            .arg(DATASET)
            .arg("--editors")
            .arg(&editors)
            .arg("--transcripts")
            .arg(&transcripts)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap(),
    );
    assert!(
        matches!(run.status.code(), Some(0 | 3)),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let records = out.join("records.jsonl");
    capture(
        "report",
        typist()
            .env("TYPIST_CANARY_API_KEY", KEY)
            .args(["report", "--out"])
            .arg(tmp.path().join("report.html"))
            .arg("--markdown")
            .arg(tmp.path().join("report.md"))
            .arg(&records)
            .output()
            .unwrap(),
    );
    capture(
        "score",
        typist()
            .env("TYPIST_CANARY_API_KEY", KEY)
            .args(["score", "--json"])
            .arg(&records)
            .output()
            .unwrap(),
    );
    capture(
        "doctor",
        typist()
            .env("TYPIST_CANARY_API_KEY", KEY)
            .env("RUST_LOG", "trace")
            .args([
                "doctor",
                "--json",
                "--profile",
                "canary-lsp",
                "--profile",
                "canary-http",
            ])
            .arg("--editors")
            .arg(&editors)
            .arg("--transcripts")
            .arg(tmp.path().join("doctor-transcripts"))
            .output()
            .unwrap(),
    );
    drop(model);
    // Everything on disk the commands wrote, except the profiles that hold the canaries.
    let mut written = Vec::new();
    all_text(tmp.path(), &mut written);
    written.retain(|(p, _)| !p.starts_with(&editors.display().to_string()));
    assert!(
        written.len() >= 6,
        "{:?}",
        written.iter().map(|w| &w.0).collect::<Vec<_>>()
    );
    let mut leaks = Vec::new();
    for (name, text) in written.iter().chain(printed.iter()) {
        for c in CANARIES {
            if text.contains(c) {
                let at = text.find(c).unwrap();
                let from = text[..at]
                    .char_indices()
                    .rev()
                    .nth(80)
                    .map_or(0, |(i, _)| i);
                leaks.push(format!("{c} in {name}: …{}…", &text[from..(at + c.len())]));
            }
        }
    }
    assert!(leaks.is_empty(), "leaked:\n{}", leaks.join("\n"));
    // The leaks were there to be stopped: the careless server quoted its key in errors.
    let recs = std::fs::read_to_string(&records).unwrap();
    assert!(
        recs.contains("invalid API key provided: [redacted]"),
        "{recs}"
    );
    for backend in [
        "canary-ollama",
        "canary-llamacpp",
        "canary-tgi",
        "canary-http",
    ] {
        assert!(
            recs.lines()
                .any(|l| l.contains(&format!("\"assistant\":\"{backend}\""))
                    && l.contains("\"outcome\":\"suggestion\"")),
            "{backend} reached the model with the key"
        );
    }
    let log = &printed[1].1;
    assert!(
        log.contains("[redacted]"),
        "the trace log carried the redacted key"
    );
}
