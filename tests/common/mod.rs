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

/// The line above a record's line in the dataset's file ("" for the first line).
pub fn line_above(r: &serde_json::Value) -> String {
    let text = std::fs::read_to_string(
        Path::new(DATASET)
            .join(r["repo"].as_str().unwrap())
            .join(r["file"].as_str().unwrap()),
    )
    .unwrap();
    let n = r["line"].as_u64().unwrap() as usize;
    match n {
        0 | 1 => String::new(),
        n => text.lines().nth(n - 2).unwrap_or("").to_string(),
    }
}

/// What the "line above" fixtures draw for a record (`fixtures/neovim/overlay.vim`,
/// `wincol.lua`, `fixtures/vscode/typist-auto`): when the typed prefix (`k` characters)
/// starts the line above and is shorter, the rest of it after the typed characters, then
/// the line above once more; else nothing.
pub fn line_above_suggestion(r: &serde_json::Value, k: usize) -> Option<String> {
    let above = line_above(r);
    let typed: String = r["expected"].as_str().unwrap().chars().take(k).collect();
    (!above.is_empty() && above.starts_with(&typed) && above.len() > typed.len())
        .then(|| format!("{above}\n{above}"))
}

/// Every record is exactly what a "line above" fixture drew with `k` characters typed:
/// the two lines as a suggestion, or nothing shown as an `empty` with its reason. Returns
/// how many suggestions.
pub fn assert_line_above(recs: &[serde_json::Value], k: usize) -> usize {
    let mut shown = 0;
    for r in recs {
        match line_above_suggestion(r, k) {
            Some(text) => {
                shown += 1;
                assert_eq!(r["outcome"], "suggestion", "{r}");
                assert_eq!(r["predicted_text"], text.as_str(), "{r}");
                assert_eq!(r["predicted"], text.split('\n').next().unwrap(), "{r}");
            }
            None => {
                assert_eq!(r["outcome"], "empty", "{r}");
                assert_eq!(
                    r["reason"], "nothing shown within the display deadline (1000 ms)",
                    "{r}"
                );
            }
        }
    }
    shown
}

/// Every core held busy by a spinning thread of the test's own while this lives: the load
/// of a user's machine whose browser, code-server, extension hosts and model share its
/// cores, made on demand rather than waited for (issue 39).
pub struct CoresBusy {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl CoresBusy {
    pub fn hold() -> CoresBusy {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let n = std::thread::available_parallelism().map_or(2, |n| n.get());
        let threads = (0..n)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        x = std::hint::black_box(
                            x.wrapping_mul(6364136223846793005).wrapping_add(1),
                        );
                    }
                })
            })
            .collect();
        CoresBusy { stop, threads }
    }
}

impl Drop for CoresBusy {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
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

/// A profile `name` in `editors` running typist's host with `--backend` and `args` for
/// Python files (20 s request timeout), with `extra` TOML lines after.
pub fn host_profile(editors: &Path, name: &str, args: &[&str], extra: &str) {
    host_profile_for(editors, name, args, &[("python", "py")], extra);
}

/// The same for these (language, extension) pairs.
pub fn host_profile_for(
    editors: &Path,
    name: &str,
    args: &[&str],
    languages: &[(&str, &str)],
    extra: &str,
) {
    let mut all = vec!["host", "--backend"];
    all.extend(args);
    let langs: Vec<&str> = languages.iter().map(|(l, _)| *l).collect();
    let exts: Vec<&str> = languages.iter().map(|(_, e)| *e).collect();
    std::fs::write(
        editors.join(format!("{name}.toml")),
        format!(
            "name = \"{name}\"\ncommand = \"@typist\"\nargs = {all:?}\ndialect = \"inline\"\nlanguages = {langs:?}\nextensions = {exts:?}\nrequest_timeout_ms = 20000\n{extra}"
        ),
    )
    .unwrap();
}

/// A dataset found nowhere else on this machine, for tests of what an assistant can
/// find on disk: one repository, `jail-PID-NANOS/`, holding copies of the bundled
/// dataset's `semver/classes/*.js` (1,006 lines), each under a first line naming the
/// repository, under `dir`.
pub fn unique_dataset(dir: &Path) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let root = dir.join("unique-dataset");
    let repo = root.join(format!("jail-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&repo).unwrap();
    // Each file begins with a line of its own, so no copy elsewhere begins the same.
    let mark = repo.file_name().unwrap().to_string_lossy().into_owned();
    for e in std::fs::read_dir(Path::new(DATASET).join("semver/classes")).unwrap() {
        let e = e.unwrap();
        let text = std::fs::read_to_string(e.path()).unwrap();
        std::fs::write(repo.join(e.file_name()), format!("// {mark}\n{text}")).unwrap();
    }
    root
}
