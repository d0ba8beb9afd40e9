//! Pointing typist at any server: profiles built from `--server` flags, their TOML
//! (`profiles --show`), and `--connect` to a server already running (`typist host
//! --listen` on TCP and on a Unix socket), compared with the same profile spawned.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};

use crate::common::{TYPIST, ok, typist};
use serde_json::Value;

/// `typist host --listen` on 127.0.0.1 or a socket, killed when dropped.
struct Listening {
    child: Child,
    address: String,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn listen(at: &str, extra: &[&str]) -> Listening {
    let mut child = std::process::Command::new(TYPIST)
        .args(["host", "--backend", "ngram", "--listen", at])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let address = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("host said {line:?}"))
        .to_string();
    Listening { child, address }
}

fn editors() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/editors").to_string()
}

fn doctor(args: &[&str]) -> (Output, Value) {
    let o = typist()
        .args(["doctor", "--json", "--editors", &editors()])
        .args(args)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o, v)
}

/// A dataset of one repository with two small Python files (two units).
fn tiny_dataset(dir: &Path) -> PathBuf {
    let repo = dir.join("ds").join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let a = "import os\n\n\ndef list_files(path):\n    names = os.listdir(path)\n    names.sort()\n    return names\n\n\ndef count_files(path):\n    names = os.listdir(path)\n    names.sort()\n    return len(names)\n";
    let b = "def add(a, b):\n    total = a + b\n    return total\n\n\ndef sub(a, b):\n    total = a - b\n    return total\n";
    std::fs::write(repo.join("a.py"), a).unwrap();
    std::fs::write(repo.join("b.py"), b).unwrap();
    dir.join("ds")
}

fn run(ds: &Path, out: &Path, args: &[&str]) -> Output {
    typist()
        .args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
        .args(["--lines", "all", "--editors", &editors()])
        .arg("--dataset")
        .arg(ds)
        .arg("--out")
        .arg(out)
        .args(args)
        .output()
        .unwrap()
}

fn records(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("records.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The probe's answer and the server's name, whatever the transport.
fn essentials(report: &Value) -> Value {
    let p = &report["profiles"][0];
    serde_json::json!([
        p["name"],
        p["status"],
        p["server"],
        p["capabilities"],
        p["probe"]["top"]
    ])
}

#[test]
fn doctor_attaches_over_tcp_and_unix_like_a_spawned_server() {
    let (o, spawned) = doctor(&["--profile", "typist-ngram"]);
    ok(&o);
    assert_eq!(spawned["profiles"][0]["status"], "ok");
    let tmp = tempfile::tempdir().unwrap();
    let sock = tmp.path().join("host.sock");
    let tcp = listen("tcp://127.0.0.1:0", &[]);
    let unix = listen(&format!("unix:{}", sock.display()), &[]);
    assert!(
        tcp.address.starts_with("tcp://127.0.0.1:"),
        "{}",
        tcp.address
    );
    assert_eq!(unix.address, format!("unix:{}", sock.display()));
    for address in [&tcp.address, &unix.address, &sock.display().to_string()] {
        let (o, attached) = doctor(&["--profile", "typist-ngram", "--connect", address]);
        ok(&o);
        assert_eq!(essentials(&attached), essentials(&spawned), "{address}");
        assert_eq!(
            attached["profiles"][0]["command"].as_str(),
            Some(address.as_str())
        );
    }
}

#[test]
fn run_attached_writes_the_records_of_a_spawned_server() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = tiny_dataset(tmp.path());
    let spawned = tmp.path().join("spawned");
    ok(&run(&ds, &spawned, &["--assistant", "typist-ngram"]));
    let want = std::fs::read_to_string(spawned.join("records.jsonl")).unwrap();
    assert!(records(&spawned).len() >= 10);
    let sock = tmp.path().join("h.sock");
    let tcp = listen("tcp://127.0.0.1:0", &[]);
    let unix = listen(&format!("unix:{}", sock.display()), &[]);
    for (i, (address, jobs)) in [
        (&tcp.address, "1"),
        (&tcp.address, "2"),
        (&unix.address, "2"),
    ]
    .into_iter()
    .enumerate()
    {
        let out = tmp.path().join(format!("attached-{i}"));
        let args = [
            "--assistant",
            "typist-ngram",
            "--connect",
            address,
            "--jobs",
            jobs,
        ];
        ok(&run(&ds, &out, &args));
        let got = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
        assert_eq!(got, want, "{address} with --jobs {jobs}");
        let m: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap())
                .unwrap();
        let text = m.to_string();
        assert!(
            text.contains(address.as_str()),
            "the manifest names the address"
        );
    }
}

/// A server that goes away mid-run: the case in flight and the later ones of the unit
/// are errors naming the address (never empty answers: the two before the crash are the
/// only answered ones); the next connection fails (refused, or reset by the exiting
/// host) and says so.
#[test]
fn a_dropped_connection_is_an_error_naming_the_address() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = tiny_dataset(tmp.path());
    let host = listen("tcp://127.0.0.1:0", &["--crash-after", "3"]);
    let out = tmp.path().join("out");
    let o = run(
        &ds,
        &out,
        &["--assistant", "typist-ngram", "--connect", &host.address],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    let recs = records(&out);
    // Two requests answered (a suggestion or an empty list), the third crashes the host.
    let answered = recs.iter().filter(|r| r["outcome"] != "error").count();
    let errors: Vec<&Value> = recs.iter().filter(|r| r["outcome"] == "error").collect();
    assert_eq!(answered, 2, "{recs:?}");
    assert!(errors.len() >= 5, "{recs:?}");
    for e in &errors {
        let msg = e["error"].as_str().unwrap_or_default();
        assert!(
            msg.contains(&host.address) && msg.contains("dropped"),
            "{msg}"
        );
    }
    // The second file's unit finds no server: the run fails, naming the address. Its
    // connection is refused, or, when it comes while the crashing host is still
    // exiting, accepted by the listening socket's backlog and then reset: both are the
    // server gone, and both say where.
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        (stderr.contains("cannot connect to") || stderr.contains("was dropped"))
            && stderr.contains(&host.address),
        "{stderr}"
    );
}

#[test]
fn a_refused_connection_is_a_clear_error() {
    // A port nobody listens on: bind one, learn it, close it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let address = format!("tcp://127.0.0.1:{port}");
    let (o, v) = doctor(&["--profile", "typist-ngram", "--connect", &address]);
    assert_eq!(o.status.code(), Some(1));
    let msg = v["profiles"][0]["message"].as_str().unwrap();
    assert!(
        msg.contains(&format!("cannot connect to {address}")),
        "{msg}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let ds = tiny_dataset(tmp.path());
    let o = run(
        &ds,
        &tmp.path().join("out"),
        &["--assistant", "typist-ngram", "--connect", &address],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        stderr.contains(&format!("cannot connect to {address}")),
        "{stderr}"
    );
    // Not an address at all.
    let (o, _) = doctor(&["--profile", "typist-ngram", "--connect", "localhost"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not an address"));
}

const PYRIGHT: [&str; 6] = [
    "--server",
    "pyright-langserver --stdio",
    "--dialect",
    "completion",
    "--language",
    "python",
];

#[test]
fn doctor_with_server_flags_checks_real_pyright() {
    let (o, v) = doctor(&PYRIGHT);
    ok(&o);
    let p = &v["profiles"][0];
    assert_eq!(p["name"], "pyright-langserver");
    assert_eq!(p["status"], "ok", "{p}");
    assert_eq!(p["capabilities"]["completion"], true);
    assert!(p["probe"]["items"].as_u64().unwrap() > 0, "{p}");
}

#[test]
fn server_flags_errors_are_clear() {
    let err = |args: &[&str]| {
        let o = typist().arg("doctor").args(args).output().unwrap();
        assert!(!o.status.success());
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    assert!(
        err(&[
            "--server",
            "",
            "--dialect",
            "completion",
            "--language",
            "python"
        ])
        .contains("--server is empty")
    );
    assert!(
        err(&[
            "--server",
            "x",
            "--dialect",
            "sonnet",
            "--language",
            "python"
        ])
        .contains("possible values")
    );
    assert!(err(&["--server", "x --stdio", "--language", "python"]).contains("--dialect"));
    // A missing program: doctor reports it missing, run refuses it up front.
    let (o, v) = doctor(&[
        "--server",
        "no-such-server --stdio",
        "--dialect",
        "completion",
        "--language",
        "python",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(v["profiles"][0]["status"], "missing");
    let tmp = tempfile::tempdir().unwrap();
    let ds = tiny_dataset(tmp.path());
    let o = run(
        &ds,
        &tmp.path().join("out"),
        &[
            "--server",
            "no-such-server --stdio",
            "--dialect",
            "completion",
            "--language",
            "python",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("program \"no-such-server\" not found"));
}

/// `profiles --show` prints TOML that, saved as editors/NAME.toml, is the same profile.
#[test]
fn profiles_show_prints_toml_that_loads_back() {
    let show = |args: &[&str]| {
        let o = typist()
            .args(["profiles", "--show"])
            .args(args)
            .output()
            .unwrap();
        ok(&o);
        String::from_utf8(o.stdout).unwrap()
    };
    let built = show(&[&PYRIGHT[..], &["--name", "my-pyright"]].concat());
    assert!(built.contains("name = \"my-pyright\""), "{built}");
    assert!(built.contains("args = [\"--stdio\"]"), "{built}");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("editors");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("my-pyright.toml"), &built).unwrap();
    let again = show(&["my-pyright", "--editors", dir.to_str().unwrap()]);
    assert_eq!(again, built);
    // A shipped profile too.
    let shipped = show(&["pyright", "--editors", &editors()]);
    assert!(
        shipped.contains("[probe]") && shipped.contains("rule = \"stable\""),
        "{shipped}"
    );
}
