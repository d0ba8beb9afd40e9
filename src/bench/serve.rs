//! `typist bench serve`: what a job costs through the benchmark service against the same
//! `typist run` on the command line, pair by pair in one run (the order alternating):
//! the command line's run timed from its start to its exit; the service's from the
//! submission's `POST` to the API saying `done` (polled every 20 ms), with the service
//! started once beforehand on a plan of its own (the same cases). Prints each pair, the
//! median ratio and the limit (≤ 1.05×).

use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// Issue 46: a job through the service costs at most 5% more wall time.
const LIMIT: f64 = 1.05;
/// How often the service is asked whether the job is done.
const POLL: Duration = Duration::from_millis(20);

#[derive(Debug, Clone)]
pub struct ServeBenchOptions {
    pub dataset: std::path::PathBuf,
    pub rate: f64,
    pub assistant: String,
    pub runs: usize,
    pub jobs: usize,
}

/// The service, killed when dropped.
struct Service(Child);

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn serve(o: &ServeBenchOptions) -> Result<String> {
    let typist = std::env::current_exe()?;
    let tmp = tempfile::tempdir()?;
    let dir = tmp.path();
    let plan = dir.join("plan.jsonl");
    let ok = |c: &mut Command, what: &str| -> Result<std::process::Output> {
        let out = c.output().with_context(|| format!("cannot start {what}"))?;
        if !out.status.success() {
            bail!(
                "{what} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(out)
    };
    ok(
        Command::new(&typist)
            .args([
                "sample",
                "--seed",
                "1",
                "--rate",
                &o.rate.to_string(),
                "--dataset",
            ])
            .arg(&o.dataset)
            .arg("--out")
            .arg(&plan),
        "typist sample",
    )?;
    let data = dir.join("data");
    std::fs::create_dir_all(&data)?;
    std::fs::write(
        data.join("benchmarks.toml"),
        format!(
            "[[benchmark]]\nname = \"bench\"\nplan = {}\n",
            toml::Value::String(plan.to_string_lossy().into_owned())
        ),
    )?;
    let token = String::from_utf8(
        ok(
            Command::new(&typist)
                .args(["serve", "token", "add", "bench", "--data"])
                .arg(&data),
            "typist serve token add",
        )?
        .stdout,
    )?
    .trim()
    .to_string();
    let mut child = Command::new(&typist)
        .args(["serve", "--data"])
        .arg(&data)
        .args(["--listen", "127.0.0.1:0", "--jobs", &o.jobs.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().context("no stdout")?).read_line(&mut line)?;
    let svc = Service(child);
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .with_context(|| format!("typist serve said {line:?}"))?
        .to_string();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let auth = format!("Bearer {token}");
    let mut rows = Vec::new();
    for run in 0..o.runs {
        let direct = |k: usize| -> Result<f64> {
            let out = dir.join(format!("direct-{run}-{k}"));
            let t = Instant::now();
            ok(
                Command::new(&typist)
                    .args(["run", "--quiet", "--jobs", &o.jobs.to_string(), "--plan"])
                    .arg(&plan)
                    .args(["--assistant", &o.assistant, "--out"])
                    .arg(&out),
                "typist run",
            )?;
            Ok(t.elapsed().as_secs_f64())
        };
        let through = || -> Result<f64> {
            let t = Instant::now();
            let mut r = agent
                .post(format!("{url}/api/submissions"))
                .header("Authorization", &auth)
                .send_json(json!({"benchmark": "bench", "name": format!("run {run}"), "assistant": o.assistant}))?;
            let s: Value = r.body_mut().read_json()?;
            let id = s["id"]
                .as_i64()
                .with_context(|| format!("the service said {s}"))?;
            loop {
                let mut r = agent
                    .get(format!("{url}/api/submissions/{id}"))
                    .header("Authorization", &auth)
                    .call()?;
                let s: Value = r.body_mut().read_json()?;
                match s["state"].as_str() {
                    Some("done") => return Ok(t.elapsed().as_secs_f64()),
                    Some("failed") => bail!("the job failed: {}", s["error"]),
                    _ => std::thread::sleep(POLL),
                }
            }
        };
        // The order alternates, so neither side always runs on a warmer machine.
        let (d, s) = if run % 2 == 0 {
            let d = direct(0)?;
            (d, through()?)
        } else {
            let s = through()?;
            (direct(1)?, s)
        };
        rows.push((d, s));
    }
    drop(svc);
    let mut ratios: Vec<f64> = rows.iter().map(|(d, s)| s / d).collect();
    ratios.sort_by(f64::total_cmp);
    let Some(&median) = ratios.get(ratios.len() / 2) else {
        bail!("--runs: at least 1");
    };
    let mut t = String::from(
        "| run | typist run (s) | through the service (s) | service / run |\n|---|---|---|---|\n",
    );
    for (i, (d, s)) in rows.iter().enumerate() {
        t.push_str(&format!(
            "| {} | {d:.2} | {s:.2} | {:.3}× |\n",
            i + 1,
            s / d
        ));
    }
    t.push_str(&format!(
        "\nmedian service / run {median:.3}× (limit ≤ {LIMIT}×: {}); {} of {} on {}, --jobs {}\n",
        if median <= LIMIT { "met" } else { "NOT met" },
        o.assistant,
        plan_cases(&plan),
        o.dataset.display(),
        o.jobs
    ));
    Ok(t)
}

fn plan_cases(plan: &Path) -> String {
    let n = std::fs::read_to_string(plan)
        .map(|t| t.lines().filter(|l| l.starts_with("{\"case\"")).count())
        .unwrap_or(0);
    format!("{n} cases")
}
