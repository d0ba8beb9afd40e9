//! The benchmark service's web pages and uploads end to end, as a person uses them: a
//! headless Chromium of the test's own (`tests/common/person_at_serve.py`) logs in with
//! a token, uploads the fixture extension (`fixtures/vscode/typist-ngram`: it starts
//! typist's n-gram host itself, as lsp-ai's extension starts `lsp-ai`), watches the job
//! run in VS Code inside the sandbox, opens its report, finds it on the board beside a
//! second submission (typist-previous-line through typist's client, sent with `typist
//! submit`) and compares the two. Screenshots of every page are kept when
//! `TYPIST_SAVE_SCREENSHOTS=DIR` asks (docs/service.md's come from here). And the pages'
//! forms refuse what a forged request sends.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::common::{DATASET, TYPIST, ok, typist, unique_dataset};
use super::hub::{Service, data_with_benchmark, token};

/// The packed fixture extension (scripts/install-servers.sh packs it).
fn ngram_vsix() -> std::path::PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(".servers/vscode/typist-ngram.vsix");
    assert!(
        p.is_file(),
        "{} is missing: run scripts/install-servers.sh",
        p.display()
    );
    p
}

#[test]
fn a_person_uploads_an_extension_watches_its_job_and_compares_it_on_the_board() {
    let tmp = tempfile::tempdir().unwrap();
    let data = data_with_benchmark(tmp.path());
    // VS Code types each case, each file in a window of its own: a smaller sample than
    // the service's other tests (23 cases; at 0.02, 53 took the test to four minutes).
    std::fs::write(
        data.join("benchmarks.toml"),
        format!("[[benchmark]]\nname = \"small\"\ndataset = {DATASET:?}\nrate = 0.01\nseed = 1\n"),
    )
    .unwrap();
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let t = token(&data, "team-a", None);
    // The extension finds `typist` on PATH, as lsp-ai's finds `lsp-ai`: the service's
    // PATH, which its jobs' sandboxes keep.
    let bin = Path::new(TYPIST).parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let svc = Service::start_with(&data, &editors, |c| {
        c.env("PATH", &path);
    });
    // The second submission: typist-previous-line through typist's client.
    let o = typist()
        .args(["submit", "--server", &svc.url, "--token", &t])
        .args([
            "--benchmark",
            "small",
            "--assistant",
            "typist-previous-line",
        ])
        .output()
        .unwrap();
    ok(&o);
    let shots = tmp.path().join("shots");
    let person = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/common/person_at_serve.py"
        ))
        .arg(&svc.url)
        .arg(&t)
        .arg(ngram_vsix())
        .arg(&shots)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&person.stdout);
    assert!(
        person.status.success(),
        "the person at the pages: {}\n{said}\njob log: {}",
        String::from_utf8_lossy(&person.stderr),
        std::fs::read_to_string(data.join("jobs/2/run.log")).unwrap_or_default()
    );
    let seen: Value = serde_json::from_str(said.trim()).unwrap();
    assert_eq!(seen["states"].as_array().unwrap().last().unwrap(), "done");
    let id = seen["submission"].as_i64().unwrap();
    // Its job ran the uploaded extension in VS Code, in the sandbox, and the n-gram
    // host behind it answered: suggestions in its records.
    let (st, s) = svc.call("GET", &format!("/api/submissions/{id}"), Some(&t), None);
    assert_eq!(st, 200, "{s}");
    assert_eq!(s["spec"]["editor"], "vscode", "{s}");
    assert_eq!(s["spec"]["extension"]["id"], "typist.typist-ngram", "{s}");
    let records =
        std::fs::read_to_string(data.join(format!("jobs/{id}/out/records.jsonl"))).unwrap();
    let recs: Vec<Value> = records
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!recs.is_empty());
    let answered = recs
        .iter()
        .filter(|r| r["predicted"].as_str().is_some_and(|p| !p.is_empty()))
        .count();
    assert!(
        answered > 0,
        "no suggestion shown in {} records",
        recs.len()
    );
    let manifest =
        std::fs::read_to_string(data.join(format!("jobs/{id}/out/manifest.json"))).unwrap();
    assert!(manifest.contains("typist-ngram"), "{manifest}");
    // The report opened; the board has both, the comparison its paired p-value.
    assert_eq!(seen["report_h1"], "typist report");
    let board = seen["board"].as_array().unwrap();
    assert_eq!(board.len(), 2, "{seen}");
    let names: Vec<&str> = board.iter().map(|r| r[1].as_str().unwrap()).collect();
    assert!(names.contains(&"typist-ngram extension"), "{names:?}");
    assert!(names.contains(&"typist-previous-line"), "{names:?}");
    let verdict = seen["verdict"].as_str().unwrap();
    assert!(verdict.contains("paired p-value"), "{verdict}");
    assert!(
        !verdict.contains("p-value –"),
        "no p-value in the comparison: {verdict}"
    );
    for page in ["login", "submit", "done", "report", "board", "compare"] {
        let f = shots.join(format!("{page}.png"));
        assert!(
            std::fs::metadata(&f).is_ok_and(|m| m.len() > 5000),
            "{}",
            f.display()
        );
    }
    if let Some(dest) = std::env::var_os("TYPIST_SAVE_SCREENSHOTS") {
        for e in std::fs::read_dir(&shots).unwrap().flatten() {
            let to = Path::new(&dest).join(format!("service-{}", e.file_name().to_string_lossy()));
            std::fs::copy(e.path(), to).unwrap();
        }
    }
}

/// A hostile Neovim plugin (`fixtures/neovim/hostile`), uploaded as a team would upload
/// theirs, tries to read the service's database and key, another team's job and upload,
/// the host's home and its password hashes, and to write into the data folder; its
/// ghost text says what it found and which user it ran as. Outside the sandbox each of
/// those is there; inside, none is, and it is the job's own user.
#[test]
fn a_hostile_plugin_finds_nothing_of_the_service_other_teams_or_the_host() {
    let hostile = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/neovim/hostile");
    finds_nothing(&[
        "--neovim-plugin",
        hostile.to_str().unwrap(),
        "--neovim-namespace",
        "typist.fixture.hostile",
    ]);
}

/// The same probes from a hostile VS Code extension (`fixtures/vscode/typist-hostile`,
/// packed as a .vsix), which finds the data folder from the mounts it sees: measured
/// alone in VS Code in its job's sandbox, it finds nothing either.
#[test]
fn a_hostile_extension_finds_nothing_of_the_service_other_teams_or_the_host() {
    let vsix = Path::new(env!("CARGO_MANIFEST_DIR")).join(".servers/vscode/typist-hostile.vsix");
    assert!(
        vsix.is_file(),
        "{} is missing: run scripts/install-servers.sh",
        vsix.display()
    );
    finds_nothing(&["--extension", vsix.to_str().unwrap()]);
}

/// The same probes from a hostile language server uploaded as a profile and an archive
/// (`fixtures/hostile-server`: its program `bin/server`), measured through typist's own
/// client in its job's sandbox: it finds nothing either.
#[test]
fn a_hostile_server_finds_nothing_of_the_service_other_teams_or_the_host() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/hostile-server");
    let probe = finds_nothing(&[
        "--profile",
        dir.join("profile.toml").to_str().unwrap(),
        "--archive",
        dir.to_str().unwrap(),
    ]);
    // It walked the file system for the original of the file it was shown, and did not
    // find it (tests/suite/sandbox.rs shows it does without the assistants' sandbox).
    let found = probe["dataset"].as_str().unwrap();
    assert!(found.starts_with("not found"), "{probe}");
}

/// Submits another team's job (the ghost plugin) and then the hostile upload `hostile`
/// (`typist submit` arguments) on a small benchmark, and checks what the hostile code
/// said it found from inside its sandbox.
fn finds_nothing(hostile: &[&str]) -> Value {
    let tmp = tempfile::tempdir().unwrap();
    let data = data_with_benchmark(tmp.path());
    // A dataset found nowhere else on the machine: the hostile server looks for it.
    let dataset = unique_dataset(tmp.path());
    std::fs::write(
        data.join("benchmarks.toml"),
        format!("[[benchmark]]\nname = \"small\"\ndataset = {dataset:?}\nrate = 0.015\nseed = 1\n"),
    )
    .unwrap();
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let (a, b) = (token(&data, "team-a", None), token(&data, "team-b", None));
    let svc = Service::start_with(&data, &editors, |c| {
        c.env("HOME", "/root");
    });
    let submit = |tok: &str, args: &[&str]| {
        let o = typist()
            .args([
                "submit",
                "--server",
                &svc.url,
                "--token",
                tok,
                "--benchmark",
                "small",
                "--json",
            ])
            .args(args)
            .output()
            .unwrap();
        ok(&o);
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["submission"]["id"].as_i64().unwrap()
    };
    // Another team's job and upload first: the ghost plugin, a folder of its own.
    let other = tmp.path().join("other-plugin");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/neovim/ghost.lua"),
        other.join("init.lua"),
    )
    .unwrap();
    let first = submit(
        &b,
        &[
            "--neovim-plugin",
            other.to_str().unwrap(),
            "--neovim-namespace",
            "typist.fixture.ghost",
        ],
    );
    let id = submit(&a, hostile);
    // Outside: all there.
    for f in ["hub.sqlite", "secret.key"] {
        assert!(data.join(f).is_file(), "{f}");
    }
    assert!(
        data.join(format!("jobs/{first}/out/records.jsonl"))
            .is_file()
    );
    let uploads: Vec<String> = std::fs::read_dir(data.join("uploads"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(uploads.len(), 2, "{uploads:?}");
    assert!(std::fs::read_dir("/root").unwrap().next().is_some());
    assert!(std::fs::read("/etc/shadow").is_ok());
    // Inside: what the hostile code found, from its ghost text in the records.
    let records =
        std::fs::read_to_string(data.join(format!("jobs/{id}/out/records.jsonl"))).unwrap();
    let probe: Value = records
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|r| {
            r["predicted"]
                .as_str()
                .and_then(|p| p.strip_prefix("PROBE "))
                .and_then(|p| serde_json::from_str(p).ok())
        })
        .unwrap_or_else(|| {
            panic!(
                "the hostile code said nothing: {records}\njob log: {}",
                std::fs::read_to_string(data.join(format!("jobs/{id}/run.log")))
                    .unwrap_or_default()
            )
        });
    assert_eq!(
        probe["data"].as_str().unwrap(),
        data.to_str().unwrap(),
        "{probe}"
    );
    // The job's own user (docs/service.md: 1,500,000,000 + its id), not root.
    assert_eq!(
        probe["uid"],
        serde_json::json!(1_500_000_000 + id),
        "{probe}"
    );
    for k in ["database", "key", "shadow"] {
        assert!(
            probe[k].as_str().unwrap().starts_with("error:"),
            "{k}: {probe}"
        );
    }
    // Its own job and upload, and nothing else.
    assert_eq!(
        probe["jobs"],
        serde_json::json!([id.to_string()]),
        "{probe}"
    );
    let own: Vec<&String> = uploads
        .iter()
        .filter(|k| probe["uploads"][0].as_str() == Some(k.as_str()))
        .collect();
    assert_eq!(
        (probe["uploads"].as_array().unwrap().len(), own.len()),
        (1, 1),
        "{probe}"
    );
    assert_eq!(probe["home"], serde_json::json!([]), "{probe}");
    // Nothing of the truth: its own job's records (the true lines of the cases done)
    // and log are not there, and the plan reads empty (all there outside).
    for k in ["records", "log"] {
        assert!(
            probe[k].as_str().unwrap().starts_with("error:"),
            "{k}: {probe}"
        );
    }
    assert!(data.join(format!("jobs/{id}/out/records.jsonl")).is_file());
    let plans = probe["plans"].as_array().unwrap();
    assert!(!plans.is_empty(), "{probe}");
    for p in plans {
        let p = p.as_str().unwrap();
        assert!(p == "read 0 bytes" || p.starts_with("error:"), "{probe}");
    }
    // What it wrote into the data folder went nowhere.
    assert!(!data.join("planted.txt").exists(), "{probe}");
    probe
}

/// The pages' forms refuse a forged request: a login or a submission without the
/// session's form token, or with another session's, or sent from another site; with
/// it, they go through.
#[test]
fn forms_refuse_a_forged_request_and_take_their_own() {
    let tmp = tempfile::tempdir().unwrap();
    let data = data_with_benchmark(tmp.path());
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let t = token(&data, "team-a", None);
    let svc = Service::start_with(&data, &editors, |_| {});
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    let url = |p: &str| format!("{}{p}", svc.url);
    let cookie_of = |r: &ureq::http::Response<ureq::Body>, name: &str| -> Option<String> {
        r.headers()
            .get_all("set-cookie")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find_map(|v| {
                v.split(';')
                    .next()?
                    .strip_prefix(&format!("{name}="))
                    .map(str::to_string)
            })
    };
    let csrf_in = |html: &str| -> String {
        let at = html.find("name=\"csrf\" value=\"").unwrap() + 19;
        html[at..].split('"').next().unwrap().to_string()
    };
    // The login form: its cookie and its token.
    let mut r = agent.get(url("/login")).call().unwrap();
    let nonce = cookie_of(&r, "typist_login").unwrap();
    let form_token = csrf_in(&r.body_mut().read_to_string().unwrap());
    let login = |csrf: &str, origin: Option<&str>| {
        let mut q = agent
            .post(url("/login"))
            .header("Cookie", &format!("typist_login={nonce}"));
        if let Some(o) = origin {
            q = q.header("Origin", o);
        }
        q.send_form([("token", t.as_str()), ("csrf", csrf)])
            .unwrap()
    };
    assert_eq!(login("", None).status(), 403);
    assert_eq!(login("0123abcd", None).status(), 403);
    assert_eq!(
        login(&form_token, Some("http://evil.example")).status(),
        403
    );
    let ok_login = login(&form_token, None);
    assert_eq!(ok_login.status(), 303);
    let session = cookie_of(&ok_login, "typist_session").unwrap();
    assert!(
        !session.contains(&t),
        "the token itself is not in the cookie"
    );
    // The session's form token, from its submission page.
    let mut r = agent
        .get(url("/submit"))
        .header("Cookie", &format!("typist_session={session}"))
        .call()
        .unwrap();
    assert_eq!(r.status(), 200);
    let csrf = csrf_in(&r.body_mut().read_to_string().unwrap());
    let submit = |csrf: Option<&str>, origin: Option<&str>| {
        let mut body = String::new();
        let mut fields = vec![
            ("benchmark", "small"),
            ("name", "by the form"),
            ("assistant", "typist-ngram"),
        ];
        if let Some(c) = csrf {
            fields.push(("csrf", c));
        }
        for (k, v) in fields {
            body.push_str(&format!(
                "--b0undary\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n"
            ));
        }
        body.push_str("--b0undary--\r\n");
        let mut q = agent
            .post(url("/submit"))
            .header("Cookie", &format!("typist_session={session}"))
            .header("Content-Type", "multipart/form-data; boundary=b0undary");
        if let Some(o) = origin {
            q = q.header("Origin", o);
        }
        q.send(body.as_bytes()).unwrap()
    };
    assert_eq!(submit(None, None).status(), 403);
    assert_eq!(submit(Some(&form_token), None).status(), 403);
    assert_eq!(
        submit(Some(&csrf), Some("http://evil.example")).status(),
        403
    );
    // Nothing was queued by the forged ones.
    let (_, list) = svc.call("GET", "/api/submissions", Some(&t), None);
    assert_eq!(list["submissions"], serde_json::json!([]), "{list}");
    let r = submit(Some(&csrf), None);
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers().get("location").unwrap(), "/submissions/1");
    // Without a session, a page sends the person to log in.
    let r = agent.get(url("/submissions/1")).call().unwrap();
    assert_eq!(
        (
            r.status().as_u16(),
            r.headers().get("location").unwrap().to_str().unwrap()
        ),
        (303, "/login")
    );
}

/// A model endpoint measured from inside the job's sandbox: the one way out, its
/// requests reaching the model server on the host's loopback.
#[test]
fn a_model_job_reaches_its_endpoint_from_its_sandbox() {
    let tmp = tempfile::tempdir().unwrap();
    let data = data_with_benchmark(tmp.path());
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let t = token(&data, "team-a", None);
    let log = tmp.path().join("requests.jsonl");
    let mut model = typist()
        .args(["serve-model", "--port", "0", "--log-requests"])
        .arg(&log)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(model.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let addr = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .trim_end_matches('/')
        .to_string();
    let svc = Service::start_with(&data, &editors, |_| {});
    let o = typist()
        .args([
            "submit",
            "--server",
            &svc.url,
            "--token",
            &t,
            "--benchmark",
            "small",
            "--json",
        ])
        .args(["--model", &addr, "--model-name", "ngram"])
        .output()
        .unwrap();
    let _ = model.kill();
    let _ = model.wait();
    ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let id = v["submission"]["id"].as_i64().unwrap();
    let records =
        std::fs::read_to_string(data.join(format!("jobs/{id}/out/records.jsonl"))).unwrap();
    let answered = records
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r["predicted"].as_str().is_some_and(|p| !p.is_empty()))
        .count();
    assert!(answered > 0, "{records}");
    let asked = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .count();
    assert!(asked > 0, "the model server saw no request");
    // The job asked the sandbox's own address, not the host's.
    let profile =
        std::fs::read_to_string(data.join(format!("jobs/{id}/editors/model.toml"))).unwrap();
    assert!(profile.contains("\"http://127.0.0.1:18080\""), "{profile}");
}
