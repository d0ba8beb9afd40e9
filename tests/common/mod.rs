//! Helpers the integration tests share: the typist binary, the bundled dataset, exit
//! checks, and `typist serve-model` on a free loopback port.
#![allow(dead_code)] // tests/services.rs uses a subset

pub mod tokens;

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

pub const TYPIST: &str = env!("CARGO_BIN_EXE_typist");
pub const DATASET: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/dataset");

/// The typist binary, with `@typist` in profiles resolving to it.
pub fn typist() -> Command {
    let mut c = Command::new(TYPIST);
    c.env("TYPIST_EXE", TYPIST).env("RUST_LOG", "warn");
    c
}

/// Asserts a command succeeded, showing its output when not.
pub fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `typist serve-model` on a free loopback port, killed when dropped.
pub struct Model {
    child: Child,
    pub url: String,
}

impl Drop for Model {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn serve_model(log: Option<&Path>) -> Model {
    let mut cmd = Command::new(TYPIST);
    cmd.args(["serve-model", "--port", "0"])
        .stdout(Stdio::piped());
    if let Some(l) = log {
        cmd.arg("--log-requests").arg(l);
    }
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_default()
        .to_string();
    assert!(
        url.starts_with("http://127.0.0.1:"),
        "serve-model said {line:?}"
    );
    Model { child, url }
}

/// A profile folder with the host behind extra `host` flags (faults, delays; the n-gram
/// backend unless they name another).
pub fn editors_with(dir: &Path, name: &str, host_args: &[&str], timeout_ms: u64) -> PathBuf {
    let editors = dir.join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let mut args = vec!["host".to_string()];
    if !host_args.contains(&"--backend") {
        args.extend(["--backend".to_string(), "ngram".into()]);
    }
    args.extend(host_args.iter().map(|s| s.to_string()));
    let toml = format!(
        "name = \"{name}\"\ncommand = \"@typist\"\nargs = {args:?}\ndialect = \"inline\"\nlanguages = [\"python\", \"javascript\"]\nextensions = [\"py\", \"js\"]\nrequest_timeout_ms = {timeout_ms}\n"
    );
    std::fs::write(editors.join(format!("{name}.toml")), toml).unwrap();
    editors
}
