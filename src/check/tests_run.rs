//! `typist check --tests` (methodology §12): does the accepted code still work? For
//! each answered line or block case of a repository whose `dataset.toml` gives a
//! Python test command (`typist dataset add`), the tests that execute the target line
//! are run on the file with the suggestion accepted (`F_pred`, as §11 builds it), in
//! the sandbox ([`crate::sandbox`]), on a working copy of the repository.
//!
//! - Per repository, once: the whole suite under coverage with each test as a context
//!   (pytest-cov's `--cov-context=test`), so each line knows the tests that ran it. A
//!   line run only at import (the empty context: a `def`, an `import`) takes the tests
//!   that run any line of its file.
//! - Per case, once (cached): the selected tests on `F_true` (they must pass) and on
//!   `F_true` with the target line blanked (its indentation and `pass`): the case is
//!   *noticed* when the blanked file does not pass (a failure, or a file the tests can
//!   no longer import: either way the tests see the line go).
//! - Per answered record of a noticed case: the selected tests on `F_pred`: `pass`,
//!   `fail` (pytest's exit status 1), or `error` (any other: a collection or import
//!   error, no test collected, the time limit, a crash), never mixed. An empty
//!   suggestion accepts nothing: `F_pred` is the blanked file, which fails by
//!   definition of noticed.
//!
//! Test runs are cached by the sha256 of (repository, file, the file's text, the tests)
//! in `DIR/.typist/tests-cache.jsonl`, and run on `jobs` workers. Results go to the
//! records' sidecar `NAME.tests.jsonl`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::dataset::Dataset;
use crate::dataset::fetch::{OWN_DIR, Package, packages};
use crate::replay::records::{Record, read_all};
use crate::sandbox::{Ended, Job, Limits, copy_tree, run};
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
}

/// A repository's test setup, from `dataset.toml`.
struct Suite {
    folder: PathBuf,
    python: PathBuf,
    /// The venv and the interpreter it was made from (to be visible in the sandbox).
    needs: Vec<PathBuf>,
    pythonpath: Vec<String>,
    /// pytest's arguments from the test command (after `python -m pytest`).
    pytest_args: Vec<String>,
    /// What else a cached result depends on: the package's archive, the venv, pytest's
    /// arguments.
    identity: String,
}

fn suite(dataset: &Path, p: &Package) -> Result<Suite, String> {
    let command = p
        .test_command
        .as_deref()
        .ok_or_else(|| "no test command in dataset.toml".to_string())?;
    let env = p
        .env
        .as_ref()
        .filter(|e| e.kind == "venv")
        .ok_or_else(|| "no Python environment (dataset add without --no-env)".to_string())?;
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
    let venv = dataset.join(&env.path);
    let python = venv.join("bin/python");
    let mut needs = vec![venv.clone(), dataset.join(&p.folder)];
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
    let identity = format!(
        "{}\n{}\n{}\n{}",
        p.sha256,
        env.path,
        env.installed.join(" "),
        pytest_args.join(" ")
    );
    Ok(Suite {
        folder: dataset.join(&p.folder),
        python,
        needs,
        pythonpath: env.pythonpath.clone(),
        pytest_args,
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

fn verdict(o: &crate::sandbox::Outcome) -> Verdict {
    let tail = || {
        let text = format!("{}\n{}", o.stdout, o.stderr);
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        lines
            .last()
            .map(|l| l.chars().take(200).collect::<String>())
    };
    match o.ended {
        Ended::Exited(0) => Verdict {
            outcome: "pass".into(),
            reason: None,
        },
        Ended::Exited(1) => Verdict {
            outcome: "fail".into(),
            reason: tail(),
        },
        _ => Verdict {
            outcome: "error".into(),
            reason: Some(format!(
                "{}{}",
                o.reason(),
                tail().map(|t| format!(": {t}")).unwrap_or_default()
            )),
        },
    }
}

/// The persistent cache of test runs, by key.
struct Cache {
    path: PathBuf,
    seen: Mutex<HashMap<String, Verdict>>,
}

#[derive(Serialize, Deserialize)]
struct CacheLine {
    key: String,
    #[serde(flatten)]
    verdict: Verdict,
}

impl Cache {
    fn open(dataset: &Path) -> Cache {
        let path = dataset.join(OWN_DIR).join("tests-cache.jsonl");
        let seen = std::fs::read_to_string(&path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<CacheLine>(l).ok())
            .map(|c| (c.key, c.verdict))
            .collect();
        Cache {
            path,
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
        let line = serde_json::to_string(&CacheLine {
            key: key.to_string(),
            verdict: v.clone(),
        })
        .unwrap_or_default();
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
        {
            let _ = writeln!(f, "{line}");
        }
    }
}

/// Runs pytest in a sandboxed working copy of `suite`'s repository with `file`'s text
/// replaced by `text` (None: as it is), with `args` after pytest's own; returns the
/// outcome and the working copy's path to read (removed when the guard drops).
fn run_pytest(
    suite: &Suite,
    file: Option<(&str, &str)>,
    args: &[String],
    limits: Limits,
) -> Result<(crate::sandbox::Outcome, tempfile::TempDir)> {
    let work = crate::editor::workspace::workspace_scratch_dir("tests-")
        .context("cannot make a working copy")?;
    copy_tree(&suite.folder, work.path())?;
    if let Some((rel, text)) = file {
        std::fs::write(work.path().join(rel), text)
            .with_context(|| format!("cannot write {rel} in the working copy"))?;
    }
    let pythonpath: Vec<String> = suite
        .pythonpath
        .iter()
        .map(|p| work.path().join(p).display().to_string())
        .collect();
    let mut all = vec![
        "-m".to_string(),
        "pytest".to_string(),
        "-p".to_string(),
        "no:cacheprovider".to_string(),
    ];
    all.extend(suite.pytest_args.iter().cloned());
    all.extend(args.iter().cloned());
    let job = Job {
        program: suite.python.display().to_string(),
        args: all,
        work: work.path().to_path_buf(),
        needs: suite.needs.clone(),
        env: vec![
            ("PYTHONPATH".to_string(), pythonpath.join(":")),
            ("PYTHONDONTWRITEBYTECODE".to_string(), "1".to_string()),
        ],
        limits,
    };
    Ok((run(&job)?, work))
}

/// Per file of the repository (relative path), per line, the node ids of the tests
/// that ran it (the import-time lines: every test that ran any line of the file).
type LineTests = HashMap<String, HashMap<u32, BTreeSet<String>>>;

fn coverage(suite: &Suite, limits: Limits) -> Result<LineTests> {
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
    let (o, work) = run_pytest(suite, Some((".typist-coveragerc", rc)), &args, limits)?;
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

/// The file with line `line` (1-based) blanked: its indentation and `pass`.
fn blanked(text: &str, line: u32) -> Option<String> {
    let mut lines: Vec<String> = text.split('\n').map(String::from).collect();
    let l = lines.get_mut((line as usize).checked_sub(1)?)?;
    let indent: String = l.chars().take_while(|c| c.is_whitespace()).collect();
    *l = format!("{indent}pass");
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
    let cache = Cache::open(&opts.dataset);
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

fn check_file(
    ds: &Dataset,
    pkgs: &BTreeMap<String, Package>,
    cache: &Cache,
    path: &Path,
    opts: &TestsOptions,
) -> Result<TestsReport> {
    let hash = file_hash(path)?;
    let records = read_all(path).with_context(|| format!("cannot read {}", path.display()))?;
    let files = super::files_by_place(ds);
    let mut report = TestsReport {
        records: path.to_path_buf(),
        sidecar: tests_path(path),
        ..Default::default()
    };
    let mut suites: BTreeMap<&str, Result<(Suite, LineTests), String>> = BTreeMap::new();
    // Per case: the selected tests and whether they notice the line (computed once).
    let mut results: Vec<TestResult> = Vec::new();
    // Jobs: (index in results, repo, file rel, text to test).
    let mut todo: Vec<(usize, String, String, String, BTreeSet<String>)> = Vec::new();
    let mut cases: BTreeMap<(String, String, u32), Option<CaseTests>> = BTreeMap::new();
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
            match run_pytest(suite, Some((rel, text)), &ids, opts.limits) {
                Ok((o, _work)) => {
                    let v = verdict(&o);
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
    for r in records.iter().filter(|r| answered(r)) {
        let key_f = (r.repo.as_str(), r.file.as_str());
        let mut leave = |why: String| {
            report.left_out += 1;
            *report.left_out_why.entry(why).or_default() += 1;
        };
        let Some(f) = files.get(&key_f) else {
            leave(format!("{}/{}: not in the dataset", r.repo, r.file));
            continue;
        };
        let Some(p) = pkgs.get(&r.repo) else {
            leave(format!("{}: not in dataset.toml", r.repo));
            continue;
        };
        let entry = suites.entry(r.repo.as_str()).or_insert_with(|| {
            let s = suite(&ds.root, p)?;
            tracing::info!(repo = %r.repo, "check --tests: coverage of the whole suite");
            let lines = coverage(&s, opts.limits).map_err(|e| format!("{e:#}"))?;
            Ok((s, lines))
        });
        let (suite, lines) = match entry {
            Ok(x) => x,
            Err(why) => {
                leave(format!("{}: {why}", r.repo));
                continue;
            }
        };
        let pred = match r.outcome {
            // The file must still hold the record's line there, as for a suggestion.
            Outcome::Empty => {
                let at = (r.line as usize).checked_sub(1);
                let holds = at.and_then(|i| f.text.split('\n').nth(i)) == Some(r.expected.as_str());
                holds.then(|| blanked(&f.text, r.line)).flatten()
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
        let case_key = (r.repo.clone(), r.file.clone(), r.line);
        let case = cases.entry(case_key).or_insert_with(|| {
            let tests = lines.get(&r.file).and_then(|l| l.get(&r.line)).cloned()?;
            // The tests must pass on the true file and not on the blanked one.
            let truth = test(suite, &r.repo, &r.file, &f.text, &tests);
            let noticed = if truth.outcome != "pass" {
                Err(format!(
                    "broken: the selected tests do not pass on the true file ({})",
                    truth.reason.unwrap_or_default()
                ))
            } else {
                let blank = blanked(&f.text, r.line).unwrap_or_default();
                let b = test(suite, &r.repo, &r.file, &blank, &tests);
                if b.outcome == "pass" {
                    Err("not_noticed: the tests pass with the line blanked".to_string())
                } else {
                    Ok(())
                }
            };
            Some((tests, noticed))
        });
        let exact =
            r.outcome == Outcome::Suggestion && r.predicted.as_deref() == Some(r.expected.as_str());
        let base = TestResult {
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
        };
        match case {
            None => results.push(TestResult {
                outcome: "not_covered".into(),
                ..base
            }),
            Some((tests, Err(why))) => {
                let (outcome, reason) = why.split_once(": ").unwrap_or(("broken", why));
                results.push(TestResult {
                    outcome: outcome.to_string(),
                    reason: Some(reason.to_string()),
                    tests: tests.len(),
                    ..base
                });
            }
            Some((tests, Ok(()))) => {
                todo.push((
                    results.len(),
                    r.repo.clone(),
                    r.file.clone(),
                    pred,
                    tests.clone(),
                ));
                results.push(TestResult {
                    tests: tests.len(),
                    ..base
                });
            }
        }
    }
    // The answered records' runs, on `jobs` workers.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, Verdict)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..opts.jobs.max(1) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((at, repo, rel, text, tests)) = todo.get(i) else {
                        break;
                    };
                    let Some(Ok((suite, _))) = suites.get(repo.as_str()) else {
                        continue;
                    };
                    let v = test(suite, repo, rel, text, tests);
                    if let Ok(mut d) = done.lock() {
                        d.push((*at, v));
                    }
                }
            });
        }
    });
    for (at, v) in done.into_inner().unwrap_or_default() {
        results[at].outcome = v.outcome;
        results[at].reason = v.reason;
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
    write_tests(&report.sidecar, &hash, &opts.dataset, &results)?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::{blanked, failing_tests};

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
            blanked("def f():\n    return 1\n", 2).unwrap(),
            "def f():\n    pass\n"
        );
        assert_eq!(blanked("x = 1", 1).unwrap(), "pass");
        assert_eq!(blanked("x = 1", 2), None);
    }
}
