//! Managed model services with a real model: SmolLM2-135M-Instruct on llama.cpp's
//! `llama-server` (both installed by scripts/install-servers.sh), started by `typist run`
//! for the `smollm2` and `lsp-ai-smollm2` profiles, shared, and stopped at the end, also
//! after Ctrl-C.

mod common;

use std::path::Path;
use std::process::Output;

use common::{DATASET, ok, typist};
use serde_json::Value;

fn run(out: &Path, extra: &[&str]) -> Output {
    typist()
        .args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
        .args(["--dataset", DATASET, "--rate", "0.004", "--seed", "11"])
        .args(["--assistant", "smollm2", "--assistant", "lsp-ai-smollm2"])
        .args(["--jobs", "2", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

fn manifest(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap()
}

/// Processes whose command line holds every one of `words`.
fn processes_with(words: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if e.file_name().to_string_lossy().parse::<u32>().is_err() {
            continue;
        }
        let Ok(raw) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<String> = raw
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        if words.iter().all(|w| args.iter().any(|a| a == w)) {
            found.push(args.join(" "));
        }
    }
    found
}

fn service_ports(m: &Value) -> Vec<String> {
    m["services"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["port"].to_string())
        .collect()
}

fn assert_installed() {
    let p = typist::editor::profile::find_profile("smollm2", None).unwrap();
    let spec = p.service.as_ref().unwrap().list()[0].clone();
    assert!(
        typist::editor::profile::resolve_program(&spec.command).is_some(),
        "llama-server is not installed: run scripts/install-servers.sh"
    );
}

#[test]
fn a_real_model_answers_through_a_managed_service_and_nothing_is_left_behind() {
    assert_installed();
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    ok(&run(&a, &[]));
    let recs: Vec<Value> = std::fs::read_to_string(a.join("records.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for name in ["smollm2", "lsp-ai-smollm2"] {
        let mine: Vec<&Value> = recs.iter().filter(|r| r["assistant"] == name).collect();
        assert!(mine.len() >= 15, "{name}: {} cases", mine.len());
        for r in &mine {
            assert!(
                r["outcome"] == "suggestion" || r["outcome"] == "empty",
                "{name}: {r}"
            );
        }
        let non_empty = mine.iter().filter(|r| r["outcome"] == "suggestion").count();
        assert!(
            2 * non_empty >= mine.len(),
            "{name}: {non_empty} of {}",
            mine.len()
        );
    }
    // One service, shared by both profiles and both workers, recorded with its model.
    let m = manifest(&a);
    let services = m["services"].as_array().unwrap();
    assert_eq!(services.len(), 1, "{services:?}");
    assert_eq!(services[0]["name"], "llama-smollm2");
    assert_eq!(
        services[0]["model"]["sha256"],
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    );
    // llama-server's parallel slots follow --jobs.
    let args: Vec<&str> = services[0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let at = args.iter().position(|a| *a == "--parallel").unwrap();
    assert_eq!(args[at + 1], "2", "{args:?}");
    for port in service_ports(&m) {
        assert!(
            processes_with(&["--port", &port]).is_empty(),
            "a service outlived the run"
        );
    }
    // The same plan, profile and conditions: the same bytes.
    let b = tmp.path().join("b");
    ok(&run(&b, &[]));
    assert_eq!(
        std::fs::read(a.join("records.jsonl")).unwrap(),
        std::fs::read(b.join("records.jsonl")).unwrap()
    );
}

#[test]
fn ctrl_c_stops_the_service_with_the_run() {
    assert_installed();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut child = typist()
        .args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
        .args(["--dataset", DATASET, "--rate", "0.05", "--seed", "11"])
        .args(["--assistant", "smollm2", "--jobs", "1", "--out"])
        .arg(&out)
        .spawn()
        .unwrap();
    // Wait until the service is up and cases are being recorded.
    let records = out.join("records.jsonl");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while std::fs::metadata(&records).map(|m| m.len()).unwrap_or(0) == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "no record within 120 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let ports = service_ports(&manifest(&out));
    assert_eq!(ports.len(), 1);
    assert!(!processes_with(&["--port", &ports[0]]).is_empty());
    // SAFETY: signalling a child we started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(
        processes_with(&["--port", &ports[0]]).is_empty(),
        "the service outlived an interrupted run"
    );
}
