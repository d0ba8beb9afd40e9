//! `typist check --tests` (methodology §12): does the accepted code still work? For
//! each answered line or block case of a repository whose `dataset.toml` gives a test
//! command and an environment (`typist dataset add`), the tests that execute the target
//! line are run on the file with the suggestion accepted (`F_pred`, as §11 builds it),
//! in the sandbox ([`crate::sandbox`]), on a working copy of the repository.
//!
//! Two runners:
//! - **Python** (a venv, `python -m pytest …`): a test is a pytest node id. Per
//!   repository, once, the whole suite runs under coverage with each test as a context
//!   (pytest-cov's `--cov-context=test`), so each line knows the tests that ran it. A
//!   line run only at import (the empty context: a `def`, an `import`) takes the tests
//!   that run any line of its file.
//! - **JavaScript** (an npm package's `node_modules`): a test is a test file, run on
//!   its own as `node FILE` (tape, `node:test`, or any script printing TAP). Per
//!   repository, once, each test file runs under Node's own coverage
//!   (`NODE_V8_COVERAGE`), so each line knows the test files that ran it.
//!
//! Tests that fail on the true files are never selected. Then:
//! - Per case, once (cached): the selected tests on `F_true` (they must pass) and on
//!   `F_true` with the target line blanked (its indentation, and `pass` in Python): the
//!   case is *noticed* when the blanked file does not pass (a failure, or a file the
//!   tests can no longer load: either way the tests see the line go).
//! - Per answered record of a noticed case: the selected tests on `F_pred`: `pass`,
//!   `fail` (pytest's exit status 1; a test file that started a test before it failed),
//!   or `error` (any other: a collection or import error, a file that broke before any
//!   test, no test collected, the time limit, a crash), never mixed. An empty
//!   suggestion accepts nothing: `F_pred` is the blanked file, which fails by
//!   definition of noticed.
//!
//! Test runs are cached by the sha256 of (repository, file, the file's text, the tests)
//! in `DIR/.typist/tests-cache.jsonl`, and run on `jobs` workers. Results go to the
//! records' sidecar `NAME.tests.jsonl`.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::dataset::Dataset;
use crate::dataset::fetch::{OWN_DIR, Package, packages};
use crate::replay::records::{Record, read_all};
use crate::sandbox::{Ended, Job, Limits, copy_tree, copy_tree_except, run};
use crate::score::checks_file::file_hash;
use crate::score::records::Outcome;
pub use crate::score::tests_file::TestResult;
use crate::score::tests_file::{tests_path, write_tests};

#[derive(Debug, Clone)]
pub struct TestsOptions {
    pub records: Vec<PathBuf>,
    pub dataset: PathBuf,
    pub limits: Limits,
    /// Test runs at once.
    pub jobs: usize,
    /// Read and keep test runs in the dataset's cache (false: a cache of this call
    /// alone, as `typist bench tests` times them).
    pub cache: bool,
    /// Run every test (that passes on the true files and runs a line) in each case's
    /// noticed check and on each answered record's `F_pred`, instead of the tests that
    /// run its line (what `typist bench tests` compares with).
    pub whole_suite: bool,
}

impl TestsOptions {
    /// A check as a user runs it: the dataset's cache, each case's selected tests, the
    /// sandbox's default limits but for the time one test run may take.
    pub fn new(records: Vec<PathBuf>, dataset: PathBuf, timeout_secs: u64, jobs: usize) -> Self {
        TestsOptions {
            records,
            dataset,
            limits: Limits {
                wall: std::time::Duration::from_secs(timeout_secs),
                ..Default::default()
            },
            jobs,
            cache: true,
            whole_suite: false,
        }
    }
}

/// What one records file gave.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TestsReport {
    pub records: PathBuf,
    pub sidecar: PathBuf,
    /// By outcome, answered records.
    pub outcomes: BTreeMap<String, u64>,
    /// Per repository: distinct cases, and of those noticed by its tests.
    pub noticed: BTreeMap<String, (u64, u64)>,
    /// Records left out: no test command, not Python, the file gone or changed.
    pub left_out: u64,
    /// Why, with how many records each.
    pub left_out_why: BTreeMap<String, u64>,
    /// Test runs made, and answered from the cache.
    pub runs: u64,
    pub cached: u64,
    /// Seconds of the whole check, and of its first phase (the coverage).
    pub seconds: f64,
    pub coverage_seconds: f64,
}

impl TestsReport {
    /// One line on what the check gave its records file.
    pub fn line(&self) -> String {
        let n = |k: &str| self.outcomes.get(k).copied().unwrap_or(0);
        let noticed: Vec<String> = (self.noticed.iter())
            .map(|(repo, (cases, noticed))| format!("{repo} {noticed}/{cases}"))
            .collect();
        format!(
            "{}: {} pass, {} fail, {} error on the tests that notice their line; {} not noticed, {} not covered, {} broken, {} left out; noticed cases by repository: {}; {} test runs ({} from the cache) -> {}",
            self.records.display(),
            n("pass"),
            n("fail"),
            n("error"),
            n("not_noticed"),
            n("not_covered"),
            n("broken"),
            self.left_out,
            if noticed.is_empty() {
                "none".to_string()
            } else {
                noticed.join(", ")
            },
            self.runs,
            self.cached,
            self.sidecar.display()
        )
    }
}

/// How a repository's tests are run, from `dataset.toml`'s environment.
#[derive(Debug, Clone, PartialEq)]
enum Runner {
    /// `python -m pytest` in the dataset's venv; a test is a pytest node id.
    Pytest {
        python: PathBuf,
        pythonpath: Vec<String>,
        /// pytest's arguments from the test command (after `python -m pytest`).
        args: Vec<String>,
    },
    /// Each test file on its own as `node FILE` (tape, `node:test`, or any script that
    /// prints TAP and exits non-zero on a failure); a test is a file's path. The
    /// package's `node_modules` is linked into each working copy, never copied.
    Node { node_modules: Option<PathBuf> },
}

/// Part of every cached result's key: a change to how runs are made or judged here
/// makes the old results unused.
const RUNNER_VERSION: &str = "check --tests 2";

/// A program on PATH, by its real path.
fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .and_then(|p| p.canonicalize().ok())
}

/// A repository's test setup, from `dataset.toml`.
struct Suite {
    folder: PathBuf,
    runner: Runner,
    /// The venv and the interpreter it was made from, or the `node_modules` (to be
    /// visible in the sandbox).
    needs: Vec<PathBuf>,
    /// What else a cached result depends on: the package's archive, the environment,
    /// the runner's arguments.
    identity: String,
}

impl Suite {
    /// Whether a record's file is one this suite's runner can judge.
    fn judges(&self, rel: &str) -> bool {
        let ext = Path::new(rel)
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or_default();
        match self.runner {
            Runner::Pytest { .. } => ext == "py",
            Runner::Node { .. } => matches!(ext, "js" | "cjs" | "mjs"),
        }
    }
}

fn suite(dataset: &Path, p: &Package) -> Result<Suite, String> {
    let command = p
        .test_command
        .as_deref()
        .ok_or_else(|| "no test command in dataset.toml".to_string())?;
    let env = p.env.as_ref().ok_or_else(|| {
        "no test environment in dataset.toml (dataset add without --no-env)".to_string()
    })?;
    let folder = dataset.join(&p.folder);
    match env.kind.as_str() {
        "venv" => {}
        "node_modules" => {
            // A package without dependencies has none.
            let node_modules =
                Some(dataset.join(&env.path).join("node_modules")).filter(|p| p.is_dir());
            let declares = |k: &str| {
                std::fs::read_to_string(folder.join("package.json"))
                    .ok()
                    .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                    .is_some_and(|v| v[k].as_object().is_some_and(|o| !o.is_empty()))
            };
            if node_modules.is_none() && (declares("dependencies") || declares("devDependencies")) {
                return Err(format!(
                    "{} is missing: typist dataset add {} {} makes it",
                    dataset.join(&env.path).join("node_modules").display(),
                    dataset.display(),
                    p.spec
                ));
            }
            // The `node` found on PATH, wherever it lives (under HOME, which the sandbox
            // hides, with nvm or volta): its prefix is bound too.
            let node = which("node").ok_or_else(|| {
                "node is not on PATH: the JavaScript runner runs each test file with it".to_string()
            })?;
            let version = std::process::Command::new(&node)
                .arg("--version")
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .unwrap_or_default();
            // What npm installed (no lock file ships with a tarball, so a second install
            // may resolve other versions).
            let lock = node_modules
                .as_ref()
                .and_then(|m| std::fs::read(m.join(".package-lock.json")).ok())
                .map(|b| crate::digest::sha256_hex(&b))
                .unwrap_or_default();
            let mut needs = vec![folder.clone()];
            needs.extend(node.parent().and_then(Path::parent).map(Path::to_path_buf));
            return Ok(Suite {
                identity: format!("{RUNNER_VERSION}\n{}\nnode {version}\n{lock}", p.sha256),
                needs,
                folder,
                runner: Runner::Node { node_modules },
            });
        }
        other => {
            return Err(format!(
                "tests in a `{other}` environment are not run by --tests (Python's pytest and Node's test files are)"
            ));
        }
    }
    let words = shlex::split(command).ok_or_else(|| format!("cannot read `{command}`"))?;
    let pytest_args = match words.as_slice() {
        [py, m, pytest, rest @ ..]
            if py.starts_with("python") && m == "-m" && pytest == "pytest" =>
        {
            rest.to_vec()
        }
        _ => {
            return Err(format!(
                "`{command}` is not `python -m pytest …`: tests are selected by pytest node ids"
            ));
        }
    };
    // Its real place (it may be a link), for the sandbox to bind.
    let venv = dataset.join(&env.path);
    let venv = venv.canonicalize().unwrap_or(venv);
    let python = venv.join("bin/python");
    let mut needs = vec![venv.clone(), folder.clone()];
    if let Ok(cfg) = std::fs::read_to_string(venv.join("pyvenv.cfg"))
        && let Some(home) = cfg.lines().find_map(|l| {
            l.strip_prefix("home")
                .map(|v| v.trim_start_matches([' ', '=']).trim())
        })
    {
        // The interpreter's prefix (…/bin's parent), its standard library beside it.
        needs.push(
            Path::new(home)
                .parent()
                .unwrap_or(Path::new(home))
                .to_path_buf(),
        );
    }
    let cfg = std::fs::read_to_string(venv.join("pyvenv.cfg")).unwrap_or_default();
    let identity = format!(
        "{RUNNER_VERSION}\n{}\n{}\n{}\n{}\n{cfg}",
        p.sha256,
        env.path,
        env.installed.join(" "),
        pytest_args.join(" ")
    );
    Ok(Suite {
        folder,
        runner: Runner::Pytest {
            python,
            pythonpath: env.pythonpath.clone(),
            args: pytest_args,
        },
        needs,
        identity,
    })
}

/// How a test run ended, as the results say it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Verdict {
    /// `pass`, `fail` or `error`.
    outcome: String,
    reason: Option<String>,
}

fn verdict(o: &crate::sandbox::Outcome, runner: &Runner) -> Verdict {
    let tail = || {
        let text = format!("{}\n{}", o.stdout, o.stderr);
        why_line(&text).map(|l| l.chars().take(200).collect::<String>())
    };
    let failed = match (&o.ended, runner) {
        (Ended::Exited(0), _) => {
            return Verdict {
                outcome: "pass".into(),
                reason: None,
            };
        }
        // pytest: 1 is tests that failed; 2–5 are a collection or usage error.
        (Ended::Exited(1), Runner::Pytest { .. }) => true,
        // A test file that started a test before it failed (TAP's `# name` or a
        // result line after typist's marker); one that broke before (a syntax error, a
        // module that will not load) is an error, as pytest's collection errors are.
        // (A status above 128 is node killed by a signal under the shell: a crash.)
        (Ended::Exited(c), Runner::Node { .. }) => *c <= 128 && node_started_a_test(&o.stdout),
        _ => false,
    };
    if failed {
        Verdict {
            outcome: "fail".into(),
            reason: tail(),
        }
    } else {
        Verdict {
            outcome: "error".into(),
            reason: Some(format!(
                "{}{}",
                o.reason(),
                tail().map(|t| format!(": {t}")).unwrap_or_default()
            )),
        }
    }
}

/// The line of a test run's output that says best why it did not pass: pytest's first
/// `FAILED` or `ERROR` summary line, else the first line naming an exception
/// (`ReferenceError: …`, `urllib.error.URLError: …`, Node's `Error: connect …`), else
/// TAP's first failed test (with node:test's `error:`), else the last line (not
/// Node's version line, a stack frame or a caret line).
fn why_line(text: &str) -> Option<Cow<'_, str>> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty()
                && !l.starts_with("Node.js v")
                && !l.starts_with("at ")
                && !l.chars().all(|c| matches!(c, '^' | '~' | ' '))
        })
        .collect();
    // (TAP comments too: node:test's `# Error: …` for an error after a test ended.)
    let names_an_exception = |l: &&&str| {
        // A TAP comment names one only as `# Name: …` (a test may be called `# TypeError
        // on bad input`).
        let (l, comment): (&str, bool) = match l.strip_prefix("# ") {
            Some(rest) => (rest, true),
            None => (l, false),
        };
        let head = l.split([':', ' ', '[']).next().unwrap_or_default();
        let name = head.rsplit('.').next().unwrap_or_default();
        (name.ends_with("Error") || name.ends_with("Exception"))
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && if comment {
                l[head.len()..].starts_with(':')
            } else {
                l[head.len()..].starts_with([':', ' ', '['])
            }
    };
    let summary = lines
        .iter()
        .find(|l| l.starts_with("FAILED ") || l.starts_with("ERROR "))
        .or_else(|| lines.iter().find(names_an_exception));
    if let Some(l) = summary {
        return Some(Cow::Borrowed(l));
    }
    // TAP (tape, node:test): the first failed test, with node:test's YAML `error:`
    // after it (a block's first line when it is one).
    if let Some(i) = lines.iter().position(|l| l.starts_with("not ok ")) {
        let error = lines[i + 1..]
            .iter()
            .position(|l| l.starts_with("error: "))
            .map(|j| i + 1 + j)
            .and_then(|j| {
                let v = lines[j]["error: ".len()..].trim();
                if v.starts_with('|') || v.starts_with('>') {
                    lines.get(j + 1).copied()
                } else {
                    Some(v.trim_matches('\''))
                }
            });
        return Some(match error {
            Some(e) => Cow::Owned(format!("{}: {e}", lines[i])),
            None => Cow::Borrowed(lines[i]),
        });
    }
    lines.last().map(|l| Cow::Borrowed(*l))
}

/// The marker the Node runner's script prints before each test file.
const NODE_MARK: &str = "# typist test file ";

/// Whether the last test file of a Node run (after its marker) started a test: a
/// TAP comment naming one, or a result line.
fn node_started_a_test(stdout: &str) -> bool {
    let last = stdout.rsplit(NODE_MARK).next().unwrap_or_default();
    last.lines().skip(1).any(|l| {
        let l = l.trim_start();
        let summary = [
            "# tests",
            "# suites",
            "# pass",
            "# fail",
            "# cancelled",
            "# skipped",
            "# todo",
            "# duration_ms",
            "# ok",
        ];
        (l.starts_with("# ") && !summary.iter().any(|p| l.starts_with(p)))
            || l.starts_with("ok ")
            || l.starts_with("not ok ")
    })
}

/// The persistent cache of test runs, by key.
struct Cache {
    /// None: kept in memory only.
    path: Option<PathBuf>,
    seen: Mutex<HashMap<String, Verdict>>,
}

#[derive(Serialize, Deserialize)]
struct CacheLine {
    key: String,
    #[serde(flatten)]
    verdict: Verdict,
}

impl Cache {
    fn open(dataset: &Path, keep: bool) -> Cache {
        if !keep {
            return Cache {
                path: None,
                seen: Mutex::new(HashMap::new()),
            };
        }
        let path = dataset.join(OWN_DIR).join("tests-cache.jsonl");
        let seen = std::fs::read_to_string(&path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<CacheLine>(l).ok())
            .map(|c| (c.key, c.verdict))
            .collect();
        Cache {
            path: Some(path),
            seen: Mutex::new(seen),
        }
    }

    fn get(&self, key: &str) -> Option<Verdict> {
        self.seen.lock().ok()?.get(key).cloned()
    }

    fn put(&self, key: &str, v: &Verdict) {
        use std::io::Write;
        let Ok(mut seen) = self.seen.lock() else {
            return;
        };
        seen.insert(key.to_string(), v.clone());
        let Some(path) = &self.path else {
            return;
        };
        let line = serde_json::to_string(&CacheLine {
            key: key.to_string(),
            verdict: v.clone(),
        })
        .unwrap_or_default();
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(f, "{line}");
        }
    }
}

/// A working copy of `suite`'s repository with `file`'s text replaced (None: as it
/// is) and extra files written: copied, but for a `node_modules`, which is linked.
fn working_copy(suite: &Suite, files: &[(&str, &str)]) -> Result<tempfile::TempDir> {
    let work = crate::editor::workspace::workspace_scratch_dir("tests-")
        .context("cannot make a working copy")?;
    match &suite.runner {
        Runner::Pytest { .. } => copy_tree(&suite.folder, work.path())?,
        Runner::Node { node_modules } => {
            // Links kept, as in Python's copy; the installed packages linked, not copied.
            copy_tree_except(&suite.folder, work.path(), &["node_modules"])?;
            if let Some(m) = node_modules {
                std::os::unix::fs::symlink(m, work.path().join("node_modules"))
                    .context("cannot link node_modules into the working copy")?;
            }
        }
    }
    for (rel, text) in files {
        std::fs::write(work.path().join(rel), text)
            .with_context(|| format!("cannot write {rel} in the working copy"))?;
    }
    Ok(work)
}

/// Runs the tests `tests` (None: the whole suite, as the coverage run does) in a
/// sandboxed working copy of `suite`'s repository with `files` written over it, with
/// `extra` arguments (pytest's); returns the outcome and the working copy to read
/// (removed when the guard drops).
fn run_tests(
    suite: &Suite,
    files: &[(&str, &str)],
    tests: &[String],
    extra: &[String],
    limits: Limits,
) -> Result<(crate::sandbox::Outcome, tempfile::TempDir)> {
    let work = working_copy(suite, files)?;
    let (program, args, env) = match &suite.runner {
        Runner::Pytest {
            python,
            pythonpath,
            args,
        } => {
            let pythonpath: Vec<String> = pythonpath
                .iter()
                .map(|p| work.path().join(p).display().to_string())
                .collect();
            let mut all = vec![
                "-m".to_string(),
                "pytest".to_string(),
                "-p".to_string(),
                "no:cacheprovider".to_string(),
            ];
            all.extend(args.iter().cloned());
            all.extend(extra.iter().cloned());
            all.extend(tests.iter().cloned());
            (
                python.display().to_string(),
                all,
                vec![
                    ("PYTHONPATH".to_string(), pythonpath.join(":")),
                    ("PYTHONDONTWRITEBYTECODE".to_string(), "1".to_string()),
                ],
            )
        }
        Runner::Node { .. } => {
            // Each file in turn; the first that fails ends the run with its status.
            let script = format!(
                "for f do printf '\\n{NODE_MARK}%s\\n' \"$f\"; node --test-reporter=tap \"./$f\" || exit $?; done"
            );
            let mut all = vec!["-c".to_string(), script, "sh".to_string()];
            all.extend(tests.iter().cloned());
            ("sh".to_string(), all, Vec::new())
        }
    };
    let job = Job {
        program,
        args,
        work: work.path().to_path_buf(),
        needs: suite.needs.clone(),
        hide: Vec::new(),
        cwd: None,
        env,
        user: None,
        limits,
    };
    Ok((run(&job)?, work))
}

/// Per file of the repository (relative path), per line, the tests that ran it
/// (pytest node ids, or test files' paths).
type LineTests = HashMap<String, HashMap<u32, BTreeSet<String>>>;

fn coverage(suite: &Suite, limits: Limits) -> Result<LineTests> {
    match suite.runner {
        Runner::Pytest { .. } => pytest_coverage(suite, limits),
        Runner::Node { .. } => node_coverage(suite, limits),
    }
}

/// pytest under coverage.py with each test as a context (pytest-cov's
/// `--cov-context=test`). A line run only at import (the empty context: a `def`, an
/// `import`) takes every test that ran any line of its file.
fn pytest_coverage(suite: &Suite, limits: Limits) -> Result<LineTests> {
    let rc = "[json]\nshow_contexts = True\n";
    let args: Vec<String> = [
        "--cov=.",
        "--cov-context=test",
        "--cov-config=.typist-coveragerc",
        "--cov-report=json:.typist-coverage.json",
        "--junitxml=.typist-junit.xml",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // The rc file goes in with the working copy.
    let (o, work) = run_tests(suite, &[(".typist-coveragerc", rc)], &[], &args, limits)?;
    let json =
        std::fs::read_to_string(work.path().join(".typist-coverage.json")).with_context(|| {
            format!(
                "the coverage run of {} wrote no report ({}): {}",
                suite.folder.display(),
                o.reason(),
                o.stderr.lines().last().unwrap_or_default()
            )
        })?;
    let v: serde_json::Value = serde_json::from_str(&json).context("coverage's JSON report")?;
    // Tests that do not pass on the true files (a module this Python lacks, a test
    // that needs the network) are never selected: they cannot tell a suggestion.
    let failing = failing_tests(
        &std::fs::read_to_string(work.path().join(".typist-junit.xml")).unwrap_or_default(),
    );
    tracing::debug!(repo = %suite.folder.display(), failing = ?failing, "check --tests: tests that fail on the true files");
    let mut out: LineTests = HashMap::new();
    let Some(files) = v["files"].as_object() else {
        return Ok(out);
    };
    for (rel, f) in files {
        let mut lines: HashMap<u32, BTreeSet<String>> = HashMap::new();
        let mut import_only = Vec::new();
        let mut any: BTreeSet<String> = BTreeSet::new();
        for (line, ctxs) in f["contexts"].as_object().into_iter().flatten() {
            let Ok(n) = line.parse::<u32>() else { continue };
            let ran: BTreeSet<String> = (ctxs.as_array().into_iter().flatten())
                .filter_map(|c| c.as_str())
                .filter(|c| !c.is_empty())
                .map(|c| c.rsplit_once('|').map_or(c, |(id, _)| id).to_string())
                .collect();
            let tests: BTreeSet<String> = ran
                .iter()
                .filter(|id| !failing.contains(*id))
                .cloned()
                .collect();
            if ran.is_empty() {
                // Run only at import (the empty context).
                import_only.push(n);
            } else if tests.is_empty() {
                // Run only by tests that fail on the true files: no test can judge it.
                continue;
            } else {
                any.extend(tests.iter().cloned());
                lines.insert(n, tests);
            }
        }
        for n in import_only {
            lines.insert(n, any.clone());
        }
        out.insert(rel.trim_start_matches("./").to_string(), lines);
    }
    Ok(out)
}

/// The repository's test files: `.js`, `.cjs` or `.mjs` files under a `test`,
/// `tests` or `__tests__` folder, or named `*.test.js`, `*.spec.js` or `test.js`
/// (`node_modules` left out), by relative path.
fn node_test_files(folder: &Path) -> Vec<String> {
    let mut out: Vec<String> = ignore::WalkBuilder::new(folder)
        .hidden(false)
        .git_ignore(false)
        .filter_entry(|e| e.file_name() != "node_modules" && e.file_name() != ".git")
        .build()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| {
            let rel = e.path().strip_prefix(folder).ok()?.to_str()?.to_string();
            let name = e.file_name().to_str()?;
            let (stem, ext) = name.rsplit_once('.')?;
            if !matches!(ext, "js" | "cjs" | "mjs") {
                return None;
            }
            let in_tests = Path::new(&rel).parent().is_some_and(|p| {
                p.components()
                    .any(|c| matches!(c.as_os_str().to_str(), Some("test" | "tests" | "__tests__")))
            });
            let named = stem == "test" || stem.ends_with(".test") || stem.ends_with(".spec");
            (in_tests || named).then_some(rel)
        })
        .collect();
    out.sort();
    out
}

/// Each test file run on its own under Node's own coverage (`NODE_V8_COVERAGE`: V8's
/// block coverage, written by Node itself), in one sandboxed job. A file that exits
/// non-zero on the true files, or prints no test (a helper), is never selected.
fn node_coverage(suite: &Suite, limits: Limits) -> Result<LineTests> {
    let files = node_test_files(&suite.folder);
    // Each file with its own time limit; TAP whatever Node's default reporter (Node 23
    // and later print `spec` even into a pipe).
    let script = format!(
        "i=0; mkdir -p .typist-cov; for f do i=$((i+1)); \
        NODE_V8_COVERAGE=\"$PWD/.typist-cov/$i\" timeout -k 5 {secs} node --test-reporter=tap \"./$f\" \
        > \".typist-cov/$i.out\" 2>&1; echo \"$i $?\" >> .typist-cov/status; done",
        secs = limits.wall.as_secs().max(1)
    );
    let mut args = vec!["-c".to_string(), script, "sh".to_string()];
    args.extend(files.iter().cloned());
    let work = working_copy(suite, &[])?;
    let job = Job {
        program: "sh".to_string(),
        args,
        work: work.path().to_path_buf(),
        needs: suite.needs.clone(),
        hide: Vec::new(),
        cwd: None,
        env: Vec::new(),
        user: None,
        limits: Limits {
            // Every test file in turn, each within the limit.
            wall: limits.wall * (files.len() as u32 + 1),
            ..limits
        },
    };
    let o = run(&job)?;
    if o.ended == Ended::TimedOut {
        bail!(
            "the coverage run of {} went over its time limit ({:.0} s for {} test files)",
            suite.folder.display(),
            o.wall.as_secs_f64(),
            files.len()
        );
    }
    let cov = work.path().join(".typist-cov");
    let status = std::fs::read_to_string(cov.join("status")).with_context(|| {
        format!(
            "the coverage run of {} ran no test file ({}): {}",
            suite.folder.display(),
            o.reason(),
            o.stderr.lines().last().unwrap_or_default()
        )
    })?;
    // V8 names scripts by their real path.
    let real = work
        .path()
        .canonicalize()
        .unwrap_or(work.path().to_path_buf());
    let root = format!("{}/", real.display());
    let mut out: LineTests = HashMap::new();
    let mut first_left_out: Option<String> = None;
    let mut texts: HashMap<String, Option<String>> = HashMap::new();
    for line in status.lines() {
        let Some((i, code)) = line.split_once(' ') else {
            continue;
        };
        let Some(test) = i.parse::<usize>().ok().and_then(|i| files.get(i - 1)) else {
            continue;
        };
        let printed = std::fs::read_to_string(cov.join(format!("{i}.out"))).unwrap_or_default();
        let ran_a_test = node_started_a_test(&format!("{NODE_MARK}{test}\n{printed}"));
        if code != "0" || !ran_a_test {
            first_left_out.get_or_insert_with(|| {
                format!(
                    "{test}: exit status {code}{}",
                    why_line(&printed)
                        .map(|w| format!(": {w}"))
                        .unwrap_or_default()
                )
            });
            tracing::debug!(repo = %suite.folder.display(), test, code, ran_a_test, "check --tests: a test file left out (it fails on the true files, or runs no test)");
            continue;
        }
        for e in std::fs::read_dir(cov.join(i))
            .into_iter()
            .flatten()
            .flatten()
        {
            let Ok(text) = std::fs::read_to_string(e.path()) else {
                continue;
            };
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
                continue;
            };
            for script in v["result"].as_array().into_iter().flatten() {
                let Some(path) = script["url"]
                    .as_str()
                    .and_then(|u| u.strip_prefix("file://"))
                    .map(percent_decoded)
                else {
                    continue;
                };
                let Some(rel) = path.strip_prefix(&root) else {
                    continue;
                };
                if rel.starts_with("node_modules/") {
                    continue;
                }
                let Some(source) = texts
                    .entry(rel.to_string())
                    .or_insert_with(|| std::fs::read_to_string(suite.folder.join(rel)).ok())
                else {
                    continue;
                };
                let ranges: Vec<(usize, usize, u64)> = (script["functions"].as_array())
                    .into_iter()
                    .flatten()
                    .flat_map(|f| f["ranges"].as_array().into_iter().flatten())
                    .filter_map(|r| {
                        Some((
                            r["startOffset"].as_u64()? as usize,
                            r["endOffset"].as_u64()? as usize,
                            r["count"].as_u64()?,
                        ))
                    })
                    .collect();
                let lines = out.entry(rel.to_string()).or_default();
                for n in executed_lines(source, &ranges) {
                    lines.entry(n).or_default().insert(test.clone());
                }
            }
        }
    }
    // No test file passed on the true files: say why rather than leave every case
    // uncovered (a `node` the sandbox cannot see, a runner these files need).
    if out.is_empty()
        && let Some(why) = first_left_out
    {
        bail!(
            "no test file of {} passes on its own as `node FILE` ({} files; the first: {why})",
            suite.folder.display(),
            files.len()
        );
    }
    Ok(out)
}

/// The 1-based lines of `source` that V8's block coverage `ranges` (start, end, count;
/// offsets in UTF-16 units, nested: the innermost range containing an offset gives its
/// count) says ran: those whose first non-blank character's count is above 0.
fn executed_lines(source: &str, ranges: &[(usize, usize, u64)]) -> Vec<u32> {
    let mut out = Vec::new();
    let mut offset = 0usize;
    for (i, line) in source.split('\n').enumerate() {
        let lead: usize = line
            .chars()
            .take_while(|c| c.is_whitespace())
            .map(char::len_utf16)
            .sum();
        let at = offset + lead;
        offset += line.chars().map(char::len_utf16).sum::<usize>() + 1;
        if line.trim().is_empty() {
            continue;
        }
        let innermost = ranges
            .iter()
            .filter(|(s, e, _)| *s <= at && at < *e)
            .min_by_key(|(s, e, _)| e - s);
        if innermost.is_some_and(|(_, _, c)| *c > 0) {
            out.push(i as u32 + 1);
        }
    }
    out
}

/// A `file://` URL's path with its `%XX` escapes decoded.
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(v) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The node ids of the tests a JUnit XML report (pytest's `--junitxml`) says failed,
/// errored or were skipped: `classname` `a.b.C` and `name` `f[x]` give `a/b.py::C::f[x]`
/// (or `a/b.py::f[x]` where the class part is the module), as pytest-cov names contexts.
fn failing_tests(xml: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for case in xml.split("<testcase ").skip(1) {
        let head = format!(" {}", case.split('>').next().unwrap_or_default());
        // ` name="` (a space first: `classname="` ends with `name="` too).
        let attr = |k: &str| {
            head.split(&format!(" {k}=\""))
                .nth(1)?
                .split('"')
                .next()
                .map(unescape)
        };
        let body_end = case.find("</testcase>").unwrap_or(case.len());
        let body = &case[..body_end];
        let bad = !head.ends_with('/')
            && (body.contains("<failure") || body.contains("<error") || body.contains("<skipped"));
        if !bad {
            continue;
        }
        let (Some(class), Some(name)) = (attr("classname"), attr("name")) else {
            continue;
        };
        // Try the module as every prefix of the dotted class name.
        let parts: Vec<&str> = class.split('.').collect();
        for k in (1..=parts.len()).rev() {
            let module = parts[..k].join("/") + ".py";
            let rest: Vec<&str> = parts[k..].to_vec();
            let mut id = module;
            for r in rest {
                id.push_str("::");
                id.push_str(r);
            }
            id.push_str("::");
            id.push_str(&name);
            out.insert(id);
        }
    }
    out
}

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The file with line `line` (1-based) blanked: its indentation and `pass` (Python),
/// or its indentation alone (JavaScript).
fn blanked(text: &str, line: u32, runner: &Runner) -> Option<String> {
    let mut lines: Vec<String> = text.split('\n').map(String::from).collect();
    let l = lines.get_mut((line as usize).checked_sub(1)?)?;
    let indent: String = l.chars().take_while(|c| c.is_whitespace()).collect();
    *l = match runner {
        Runner::Pytest { .. } => format!("{indent}pass"),
        Runner::Node { .. } => indent,
    };
    Some(lines.join("\n"))
}

fn key(suite: &Suite, repo: &str, rel: &str, text: &str, tests: &BTreeSet<String>) -> String {
    let mut s = format!("{}\n{repo}\n{rel}\n{}\n", suite.identity, tests.len());
    for t in tests {
        s.push_str(t);
        s.push('\n');
    }
    s.push_str(text);
    crate::digest::sha256_hex(s.as_bytes())
}

/// Checks every records file of `opts` and writes each one's tests sidecar.
pub fn check_tests(opts: &TestsOptions) -> Result<Vec<TestsReport>> {
    // Absolute: the sandbox runs in the working copy, where a relative path means nothing.
    let opts = &TestsOptions {
        dataset: std::path::absolute(&opts.dataset)
            .with_context(|| format!("cannot resolve {}", opts.dataset.display()))?,
        ..opts.clone()
    };
    let ds = crate::dataset::walk(&opts.dataset, &crate::dataset::WalkOptions::default())?;
    let pkgs = packages(&opts.dataset)?;
    if pkgs.is_empty() {
        bail!(
            "{} has no dataset.toml: --tests runs the tests `typist dataset add` recorded (typist dataset add {} pypi:NAME==VERSION)",
            opts.dataset.display(),
            opts.dataset.display()
        );
    }
    let cache = Cache::open(&opts.dataset, opts.cache);
    let mut out = Vec::new();
    for r in &opts.records {
        out.push(check_file(&ds, &pkgs, &cache, r, opts)?);
    }
    Ok(out)
}

/// A case's selected tests, and whether they notice its line (`Err`: why not).
type CaseTests = (BTreeSet<String>, Result<(), String>);

/// A line or block record answered (a suggestion or an empty one).
fn answered(r: &Record) -> bool {
    r.kind.is_none() && matches!(r.outcome, Outcome::Suggestion | Outcome::Empty)
}

/// `f` on every item, on `jobs` threads, the results in the items' order.
fn in_parallel<T: Sync, R: Send>(jobs: usize, items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, R)>> = Mutex::new(Vec::with_capacity(items.len()));
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    if let Ok(mut d) = done.lock() {
                        d.push((i, r));
                    }
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_default();
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// A repository's suite with its coverage, and every test that passes on the true
/// files and runs a line (for `whole_suite`).
struct Covered {
    suite: Suite,
    lines: LineTests,
    all: BTreeSet<String>,
}

/// An answered record on its way: its result so far and, for a case the tests notice,
/// the text to test.
struct Pending {
    result: TestResult,
    case: (String, String, u32),
    pred: String,
}

fn check_file(
    ds: &Dataset,
    pkgs: &BTreeMap<String, Package>,
    cache: &Cache,
    path: &Path,
    opts: &TestsOptions,
) -> Result<TestsReport> {
    let started = std::time::Instant::now();
    let hash = file_hash(path)?;
    let records = read_all(path).with_context(|| format!("cannot read {}", path.display()))?;
    let files = super::files_by_place(ds);
    let mut report = TestsReport {
        records: path.to_path_buf(),
        sidecar: tests_path(path),
        ..Default::default()
    };
    let runs = std::sync::atomic::AtomicU64::new(0);
    let cached = std::sync::atomic::AtomicU64::new(0);
    let test =
        |suite: &Suite, repo: &str, rel: &str, text: &str, tests: &BTreeSet<String>| -> Verdict {
            let k = key(suite, repo, rel, text, tests);
            if let Some(v) = cache.get(&k) {
                cached.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                return v;
            }
            runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let ids: Vec<String> = tests.iter().cloned().collect();
            // typist's own failures (no working copy, no sandbox) and time limits
            // (which depend on the machine's load and the limit) are not kept.
            match run_tests(suite, &[(rel, text)], &ids, &[], opts.limits) {
                Ok((o, _work)) => {
                    let v = verdict(&o, &suite.runner);
                    if o.ended != Ended::TimedOut {
                        cache.put(&k, &v);
                    }
                    v
                }
                Err(e) => Verdict {
                    outcome: "error".into(),
                    reason: Some(format!("{e:#}")),
                },
            }
        };
    let answered: Vec<&Record> = records.iter().filter(|r| answered(r)).collect();

    // 1. Each repository's suite and coverage, once, the repositories in parallel.
    let coverage_started = std::time::Instant::now();
    let repos: Vec<&str> = answered
        .iter()
        .map(|r| r.repo.as_str())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter(|repo| pkgs.contains_key(*repo))
        .collect();
    let covered: BTreeMap<&str, Result<Covered, String>> = repos
        .iter()
        .copied()
        .zip(in_parallel(opts.jobs, &repos, |repo| {
            let s = suite(&ds.root, &pkgs[*repo])?;
            tracing::info!(repo, "check --tests: coverage of the whole suite");
            let lines = coverage(&s, opts.limits).map_err(|e| format!("{e:#}"))?;
            // Every test that passes on the true files and runs a line.
            let all = lines
                .values()
                .flat_map(|l| l.values())
                .flatten()
                .cloned()
                .collect();
            Ok(Covered {
                suite: s,
                lines,
                all,
            })
        }))
        .collect();

    report.coverage_seconds = coverage_started.elapsed().as_secs_f64();

    // 2. Each record's file with the suggestion accepted, or why it is left out.
    let mut pending: Vec<Pending> = Vec::new();
    for r in answered {
        let mut leave = |why: String| {
            report.left_out += 1;
            *report.left_out_why.entry(why).or_default() += 1;
        };
        let Some(f) = files.get(&(r.repo.as_str(), r.file.as_str())) else {
            leave(format!("{}/{}: not in the dataset", r.repo, r.file));
            continue;
        };
        let Some(c) = covered.get(r.repo.as_str()) else {
            leave(format!("{}: not in dataset.toml", r.repo));
            continue;
        };
        let c = match c {
            Ok(c) => c,
            Err(why) => {
                leave(format!("{}: {why}", r.repo));
                continue;
            }
        };
        if !c.suite.judges(&r.file) {
            leave(format!(
                "{}/{}: not a file its tests' runner judges (Python for pytest; JavaScript for Node)",
                r.repo, r.file
            ));
            continue;
        }
        let pred = match r.outcome {
            // The file must still hold the record's line there, as for a suggestion.
            Outcome::Empty => {
                let at = (r.line as usize).checked_sub(1);
                let holds = at.and_then(|i| f.text.split('\n').nth(i)) == Some(r.expected.as_str());
                holds
                    .then(|| blanked(&f.text, r.line, &c.suite.runner))
                    .flatten()
            }
            _ => super::accepted_file(f, r),
        };
        let Some(pred) = pred else {
            leave(format!(
                "{}/{}: the file no longer holds the record's line",
                r.repo, r.file
            ));
            continue;
        };
        let exact =
            r.outcome == Outcome::Suggestion && r.predicted.as_deref() == Some(r.expected.as_str());
        pending.push(Pending {
            result: TestResult {
                assistant: r.assistant.clone(),
                pass: r.pass,
                repo: r.repo.clone(),
                file: r.file.clone(),
                line: r.line,
                case: r.case.clone(),
                exact,
                outcome: String::new(),
                reason: None,
                tests: 0,
            },
            case: (r.repo.clone(), r.file.clone(), r.line),
            pred,
        });
    }

    // 3. Each case's tests, and whether they notice its line, once, in parallel.
    let keys: Vec<(String, String, u32)> = pending
        .iter()
        .map(|p| p.case.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let cases: BTreeMap<(String, String, u32), Option<CaseTests>> = keys
        .iter()
        .cloned()
        .zip(in_parallel(opts.jobs, &keys, |(repo, rel, line)| {
            let Some(Ok(c)) = covered.get(repo.as_str()) else {
                return None;
            };
            let text = &files.get(&(repo.as_str(), rel.as_str()))?.text;
            let tests = c.lines.get(rel).and_then(|l| l.get(line)).cloned()?;
            // The tests must pass on the true file and not on the blanked one.
            let run = if opts.whole_suite { &c.all } else { &tests };
            let truth = test(&c.suite, repo, rel, text, run);
            let noticed = if truth.outcome != "pass" {
                Err(format!(
                    "broken: the selected tests do not pass on the true file ({})",
                    truth.reason.unwrap_or_default()
                ))
            } else {
                let blank = blanked(text, *line, &c.suite.runner).unwrap_or_default();
                let b = test(&c.suite, repo, rel, &blank, run);
                if b.outcome == "pass" {
                    Err("not_noticed: the tests pass with the line blanked".to_string())
                } else {
                    Ok(())
                }
            };
            Some((tests, noticed))
        }))
        .collect();

    // 4. The answered records of noticed cases, on `F_pred`, in parallel.
    let verdicts = in_parallel(opts.jobs, &pending, |p| {
        let (tests, noticed) = cases.get(&p.case)?.as_ref()?;
        noticed.as_ref().ok()?;
        let Some(Ok(c)) = covered.get(p.case.0.as_str()) else {
            return None;
        };
        let run = if opts.whole_suite { &c.all } else { tests };
        Some(test(&c.suite, &p.case.0, &p.case.1, &p.pred, run))
    });
    let mut results = Vec::with_capacity(pending.len());
    for (p, v) in pending.into_iter().zip(verdicts) {
        let mut res = p.result;
        match (cases.get(&p.case).and_then(|c| c.as_ref()), v) {
            (None, _) => res.outcome = "not_covered".into(),
            (Some((tests, Err(why))), _) => {
                let (outcome, reason) = why.split_once(": ").unwrap_or(("broken", why));
                res.outcome = outcome.to_string();
                res.reason = Some(reason.to_string());
                res.tests = tests.len();
            }
            (Some((tests, Ok(()))), v) => {
                let v = v.unwrap_or(Verdict {
                    outcome: "error".into(),
                    reason: Some("typist: the case's suite went missing".into()),
                });
                res.outcome = v.outcome;
                res.reason = v.reason;
                res.tests = tests.len();
            }
        }
        results.push(res);
    }
    for res in &results {
        *report.outcomes.entry(res.outcome.clone()).or_default() += 1;
    }
    for ((repo, _, _), c) in &cases {
        let e = report.noticed.entry(repo.clone()).or_default();
        e.0 += 1;
        if matches!(c, Some((_, Ok(())))) {
            e.1 += 1;
        }
    }
    report.runs = runs.into_inner();
    report.cached = cached.into_inner();
    report.seconds = started.elapsed().as_secs_f64();
    write_tests(&report.sidecar, &hash, &opts.dataset, &results)?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::{Runner, blanked, executed_lines, failing_tests, node_started_a_test};

    #[test]
    fn failing_tests_are_read_from_junit_xml_as_node_ids() {
        // As pytest writes it: classname before name (whose key ends classname's).
        let xml = r#"<testsuite><testcase classname="test_six" name="test_lazy" time="0.1" />
<testcase classname="test_six" name="test_move_items[dbm_ndbm]" time="0"><failure message="x">ModuleNotFoundError</failure></testcase>
<testcase classname="tests.test_a.TestX" name="test_y" time="0"><skipped message="s"/></testcase></testsuite>"#;
        let f = failing_tests(xml);
        assert!(
            f.contains("test_six.py::test_move_items[dbm_ndbm]"),
            "{f:?}"
        );
        assert!(f.contains("tests/test_a.py::TestX::test_y"), "{f:?}");
        assert!(!f.iter().any(|id| id.contains("test_lazy")), "{f:?}");
    }

    #[test]
    fn a_blanked_line_keeps_its_indentation() {
        assert_eq!(
            blanked("def f():\n    return 1\n", 2, &py()).unwrap(),
            "def f():\n    pass\n"
        );
        assert_eq!(blanked("x = 1", 1, &py()).unwrap(), "pass");
        assert_eq!(blanked("x = 1", 2, &py()), None);
        let node = Runner::Node { node_modules: None };
        assert_eq!(
            blanked("function f() {\n  return 1;\n}\n", 2, &node).unwrap(),
            "function f() {\n  \n}\n"
        );
    }

    fn py() -> Runner {
        Runner::Pytest {
            python: "python".into(),
            pythonpath: Vec::new(),
            args: Vec::new(),
        }
    }

    #[test]
    fn v8_block_coverage_gives_the_lines_whose_innermost_range_ran() {
        // As V8 writes it for `node`: the script's range, a function called twice, a
        // branch inside it never taken, and a function never called.
        let src = "const a = 1;\nfunction f(x) {\n  if (x) {\n    return 2;\n  }\n  return 3;\n}\nfunction g() {\n  return 4;\n}\nf(0); f(0);\n";
        let at = |needle: &str| src.find(needle).unwrap();
        let ranges = [
            (0, src.len(), 1),
            (at("function f"), at("function g") - 1, 2),
            (at("{\n    return 2"), at("  return 3") - 1, 0),
            (at("function g"), at("f(0);") - 1, 0),
        ];
        // The untaken branch's closing brace is inside its range: not run.
        assert_eq!(executed_lines(src, &ranges), vec![1, 2, 3, 6, 7, 11]);
        // Offsets count UTF-16 units: a character outside the BMP counts two.
        let wide = "const s = '𝒳';\nfunction h() {\n  return 1;\n}\n";
        let start = "const s = '𝒳';\n".encode_utf16().count();
        assert_eq!(
            executed_lines(wide, &[(0, 60, 1), (start, start + 30, 0)]),
            vec![1]
        );
    }

    #[test]
    fn the_reason_is_the_line_that_names_what_broke() {
        use super::why_line;
        let pytest = "F.\n=== short test summary info ===\nFAILED tests/test_ops.py::test_mean - assert None == 2\n1 failed, 1 passed in 0.03s\n";
        let why = |t: &str| why_line(t).map(|c| c.into_owned());
        assert_eq!(
            why(pytest).as_deref(),
            Some("FAILED tests/test_ops.py::test_mean - assert None == 2")
        );
        let node = "/w/index.js:7\n  pass\n  ^\n\nReferenceError: pass is not defined\n    at pad (/w/index.js:7:3)\n\nNode.js v20.20.2\n";
        assert_eq!(
            why(node).as_deref(),
            Some("ReferenceError: pass is not defined")
        );
        let events = "node:events:497\n      throw er; // Unhandled 'error' event\n      ^\n\nError: connect ECONNREFUSED 127.0.0.1:9\n    at TCPConnectWrap.afterConnect\n";
        assert_eq!(
            why(events).as_deref(),
            Some("Error: connect ECONNREFUSED 127.0.0.1:9")
        );
        // node:test's comment for an error after a test ended.
        let late = "ok 1 - pads\n1..1\n# Error: Test \"pads\" at test/index.js:7:1 generated asynchronous activity after the test ended. This activity created the error \"Error: connect ECONNREFUSED 127.0.0.1:9\"\n# tests 1\n# duration_ms 24.0\n";
        assert!(why(late).unwrap().starts_with("# Error: Test \"pads\""));
        // node:test's TAP: the failed test and its YAML error (a block's first line).
        let tap = "TAP version 13\n# Subtest: adds\nok 1 - adds\n# Subtest: pads\nnot ok 2 - pads\n  ---\n  duration_ms: 0.9\n  failureType: 'testCodeFailure'\n  error: |-\n    Expected values to be strictly equal:\n\n  code: 'ERR_ASSERTION'\n  ...\n# duration_ms 39.3\n";
        assert_eq!(
            why(tap).as_deref(),
            Some("not ok 2 - pads: Expected values to be strictly equal:")
        );
        let quoted = tap.replace(
            "|-\n    Expected values to be strictly equal:",
            "'connect ECONNREFUSED 127.0.0.1:9'",
        );
        assert_eq!(
            why(&quoted).as_deref(),
            Some("not ok 2 - pads: connect ECONNREFUSED 127.0.0.1:9")
        );
        // A test named after an exception is not one.
        let named = "TAP version 13\n# TypeError on bad input\nnot ok 1 should throw\n";
        assert_eq!(why(named).as_deref(), Some("not ok 1 should throw"));
        // tape: the failed assertion's line.
        let tape = "TAP version 13\n# parses\nnot ok 1 should be equal\n  ---\n    operator: equal\n  ...\n";
        assert_eq!(why(tape).as_deref(), Some("not ok 1 should be equal"));
        assert_eq!(
            why("1 passed in 0.01s\n\n").as_deref(),
            Some("1 passed in 0.01s")
        );
        assert_eq!(why(""), None);
    }

    #[test]
    fn a_node_test_file_that_broke_before_any_test_is_an_error_not_a_fail() {
        // tape: a test's name as a TAP comment, then its results.
        let started = "\n# typist test file test/a.js\nTAP version 13\n# parses flags\nnot ok 1 should be equal\n";
        assert!(node_started_a_test(started));
        // A syntax error in the module under test: the file dies before any test.
        let broke =
            "\n# typist test file test/a.js\nTAP version 13\n\n# typist test file test/b.js\n";
        assert!(!node_started_a_test(broke));
        // node:test's summary of a file with no test is not a test.
        let none = "\n# typist test file test/c.js\nTAP version 13\n1..0\n# tests 0\n# suites 0\n# pass 0\n# fail 0\n# duration_ms 3.1\n";
        assert!(!node_started_a_test(none));
        // Only the last file counts (the earlier ones passed).
        let later = format!("{started}\n# typist test file test/b.js\n");
        assert!(!node_started_a_test(&later));
    }
}
