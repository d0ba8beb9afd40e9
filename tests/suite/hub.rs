//! The benchmark service (issue 46): `typist serve` started as a process on a free
//! loopback port, its API called over HTTP with bearer tokens, submissions measured by
//! its workers (`typist run` as child processes) and compared with the same run made on
//! the command line; the service killed mid-job and a job's run killed, each resumed.
//! The same on a real PostgreSQL (`--db URL`, `pg_server.rs`), and the database itself
//! on PostgreSQL: migrations run once, a job taken by one service only.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::common::{DATASET, host_profile, ok, typist};
use super::pg_server::PgServer;

/// `typist serve` on 127.0.0.1:0, killed (SIGKILL) when dropped.
pub(super) struct Service {
    child: Child,
    pub(super) url: String,
}

impl Service {
    /// The service on `data`, its database PostgreSQL's at `db` when given.
    fn start(data: &Path, editors: &Path, db: Option<&str>) -> Service {
        let db = db.map(str::to_string);
        Service::start_with(data, editors, move |cmd| {
            if let Some(url) = db {
                cmd.args(["--db", &url]);
            }
        })
    }

    /// The same, its command line (or environment) changed by `more`.
    pub(super) fn start_with(
        data: &Path,
        editors: &Path,
        more: impl FnOnce(&mut std::process::Command),
    ) -> Service {
        let mut cmd = typist();
        cmd.env("TYPIST_EDITORS", editors)
            .args(["serve", "--data"])
            .arg(data)
            .args(["--listen", "127.0.0.1:0", "--jobs", "1"]);
        more(&mut cmd);
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        Service { child, url }
    }

    /// `method path` with `token`: the status and the answer's JSON (or text).
    pub(super) fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (u16, Value) {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let url = format!("{}{path}", self.url);
        let auth = token.map(|t| format!("Bearer {t}"));
        let resp = if method == "POST" {
            let mut r = agent.post(&url);
            if let Some(a) = &auth {
                r = r.header("Authorization", a);
            }
            r.send_json(body.unwrap_or(Value::Null))
        } else {
            let mut r = agent.get(&url);
            if let Some(a) = &auth {
                r = r.header("Authorization", a);
            }
            r.call()
        };
        let mut resp = resp.unwrap();
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string().unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    /// Waits until submission `id` satisfies `done` (a minute at most).
    pub(super) fn wait(&self, id: i64, token: &str, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let (st, s) = self.call("GET", &format!("/api/submissions/{id}"), Some(token), None);
            assert_eq!(st, 200, "{s}");
            if done(&s) {
                return s;
            }
            assert!(Instant::now() < deadline, "submission {id} still {s}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A token made by `typist serve token add`, in PostgreSQL's database at `db` when given
/// (through `TYPIST_DB`, as an operator's environment gives it).
pub(super) fn token(data: &Path, name: &str, db: Option<&str>) -> String {
    let mut cmd = typist();
    if let Some(url) = db {
        cmd.env("TYPIST_DB", url);
    }
    let o = cmd
        .args(["serve", "token", "add", name, "--data"])
        .arg(data)
        .output()
        .unwrap();
    ok(&o);
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

/// A data folder with one benchmark, `small`: the test dataset sampled at 5%.
pub(super) fn data_with_benchmark(dir: &Path) -> PathBuf {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        data.join("benchmarks.toml"),
        format!(
            "[[benchmark]]\nname = \"small\"\ndataset = {:?}\nrate = 0.05\nseed = 1\n",
            DATASET
        ),
    )
    .unwrap();
    data
}

/// Records without their latencies (which differ from run to run), in their order.
pub(super) fn comparable(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| {
            let mut r: Value = serde_json::from_str(l).unwrap();
            r.as_object_mut().unwrap().remove("latency_ms");
            r
        })
        .collect()
}

/// The same plan and assistant through `typist run` on the command line.
pub(super) fn direct_run(dir: &Path, plan: &Path, editors: &Path, assistant: &str) -> Vec<Value> {
    let out = dir.join(format!("direct-{assistant}"));
    ok(&typist()
        .env("TYPIST_EDITORS", editors)
        .args(["run", "--quiet", "--jobs", "1", "--plan"])
        .arg(plan)
        .args(["--assistant", assistant, "--out"])
        .arg(&out)
        .output()
        .unwrap());
    comparable(&std::fs::read_to_string(out.join("records.jsonl")).unwrap())
}

/// Two teams submit through `typist submit` and the API: each submission is measured as
/// `typist run` measures it (the same records), ranked on the board with its rating and
/// the pair's paired p-value; tokens are required, a team sees only its own submission,
/// and a bad submission is refused saying what to change.
#[test]
fn submissions_are_measured_and_ranked_on_the_board() {
    measured_and_ranked(None);
}

/// The same on a real PostgreSQL (`typist serve --db URL`): the service's rows are
/// PostgreSQL's, and no SQLite file is made.
#[test]
fn on_postgres_submissions_are_measured_and_ranked_on_the_board() {
    let pg = PgServer::start();
    measured_and_ranked(Some(&pg.url));
    assert_eq!(
        pg.column("SELECT name FROM tokens ORDER BY id"),
        ["team-a", "team-b"]
    );
    assert_eq!(
        pg.column("SELECT state FROM submissions ORDER BY id"),
        ["done", "done"]
    );
}

fn measured_and_ranked(db: Option<&str>) {
    let tmp = tempfile::tempdir().unwrap();
    let data = data_with_benchmark(tmp.path());
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let (a, b) = (token(&data, "team-a", db), token(&data, "team-b", db));
    assert!(a.starts_with("typ_") && a != b);
    let svc = Service::start(&data, &editors, db);
    assert_eq!(data.join("hub.sqlite").exists(), db.is_none());
    assert_eq!(svc.call("GET", "/api/health", None, None).0, 200);
    let (st, e) = svc.call("GET", "/api/benchmarks", None, None);
    assert_eq!(st, 401, "{e}");
    assert!(e["error"].as_str().unwrap().contains("Bearer"), "{e}");
    assert_eq!(
        svc.call("GET", "/api/benchmarks", Some("typ_nope"), None).0,
        401
    );
    let (st, benches) = svc.call("GET", "/api/benchmarks", Some(&a), None);
    assert_eq!(st, 200);
    let bench = &benches["benchmarks"][0];
    assert_eq!(bench["name"], "small");
    let cases = bench["cases"].as_u64().unwrap();
    assert!(cases > 20, "{bench}");
    for (body, says) in [
        (
            json!({"benchmark": "nope", "name": "x", "assistant": "typist-ngram"}),
            "no benchmark",
        ),
        (
            json!({"benchmark": "small", "name": "", "assistant": "typist-ngram"}),
            "`name`",
        ),
        (
            json!({"benchmark": "small", "name": "x", "assistant": "no-such-profile"}),
            "`assistant`",
        ),
        (
            json!({"benchmark": "small", "name": "x", "extension": "a.vsix"}),
            "multipart/form-data",
        ),
    ] {
        let (st, e) = svc.call("POST", "/api/submissions", Some(&a), Some(body.clone()));
        assert_eq!(st, 422, "{body}: {e}");
        assert!(e["error"].as_str().unwrap().contains(says), "{body}: {e}");
    }
    // `typist submit` waits and prints the result with the board position.
    let submit = |t: &str, assistant: &str| -> Value {
        let o = typist()
            .args(["submit", "--server", &svc.url, "--token", t])
            .args(["--benchmark", "small", "--assistant", assistant, "--json"])
            .output()
            .unwrap();
        ok(&o);
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let ngram = submit(&a, "typist-ngram");
    assert_eq!(ngram["submission"]["state"], "done", "{ngram}");
    assert_eq!(ngram["board_position"], 1, "{ngram}");
    assert_eq!(ngram["board_size"], 1);
    let prev = submit(&b, "typist-previous-line");
    assert_eq!(prev["board_size"], 2, "{prev}");
    let (ia, ib) = (
        ngram["submission"]["id"].as_i64().unwrap(),
        prev["submission"]["id"].as_i64().unwrap(),
    );
    // The same records as the command line's run of the benchmark's plan.
    let plan = data.join("benchmarks/small/plan.jsonl");
    for (id, t, assistant) in [(ia, &a, "typist-ngram"), (ib, &b, "typist-previous-line")] {
        let (st, recs) = svc.call(
            "GET",
            &format!("/api/submissions/{id}/records"),
            Some(t),
            None,
        );
        assert_eq!(st, 200);
        let recs = comparable(recs.as_str().unwrap_or_default());
        assert_eq!(recs.len() as u64, cases);
        assert_eq!(
            recs,
            direct_run(tmp.path(), &plan, &editors, assistant),
            "{assistant}"
        );
    }
    let (st, html) = svc.call(
        "GET",
        &format!("/api/submissions/{ia}/report"),
        Some(&a),
        None,
    );
    assert_eq!(st, 200);
    assert!(html.as_str().unwrap().contains("<html"));
    // Team B sees its own submission only.
    for path in [
        format!("/api/submissions/{ia}"),
        format!("/api/submissions/{ia}/records"),
    ] {
        assert_eq!(svc.call("GET", &path, Some(&b), None).0, 404, "{path}");
    }
    let (_, mine) = svc.call("GET", "/api/submissions", Some(&b), None);
    assert_eq!(mine["submissions"].as_array().unwrap().len(), 1, "{mine}");
    // The board: both, ordered by rating, the pair's wins and paired p-value.
    let (st, board) = svc.call("GET", "/api/benchmarks/small/board", Some(&b), None);
    assert_eq!(st, 200, "{board}");
    let rows = board["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{board}");
    assert!(
        rows[0]["rating"].as_f64() >= rows[1]["rating"].as_f64(),
        "{board}"
    );
    for r in rows {
        let [lo, hi] = [0, 1].map(|i| r["rating_ci95"][i].as_f64().unwrap());
        let x = r["rating"].as_f64().unwrap();
        assert!(lo <= x + 1e-9 && x <= hi + 1e-9, "{r}");
        assert!(r["integral_help"]["value"].is_f64(), "{r}");
    }
    let pair = &board["pairs"][0];
    let n = pair["cases"].as_u64().unwrap();
    assert!(n > 0 && n <= cases, "{pair}");
    assert_eq!(
        pair["wins_a"].as_u64().unwrap()
            + pair["wins_b"].as_u64().unwrap()
            + pair["ties"].as_u64().unwrap(),
        n
    );
    assert!(pair["diff_integral_help"].is_f64(), "{pair}");
    // The one who won more cases is rated higher.
    let (wa, wb) = (
        pair["wins_a"].as_u64().unwrap(),
        pair["wins_b"].as_u64().unwrap(),
    );
    let top = rows[0]["submission"].as_i64().unwrap();
    if wa != wb {
        let winner = if wa > wb {
            pair["a"].as_i64()
        } else {
            pair["b"].as_i64()
        };
        assert_eq!(winner, Some(top), "{board}");
    }
}

/// The service killed (SIGKILL) in the middle of a job: at its next start the job
/// resumes where its records end; then the job's own run killed: the job is retried and
/// resumes again. Its records equal an uninterrupted run's.
#[test]
fn a_job_resumes_after_the_service_and_its_run_are_killed() {
    resumes_after_kills(None);
}

/// The same on a real PostgreSQL: the killed service's connection, and with it its
/// job's lock, gone, the next service queues the job again.
#[test]
fn on_postgres_a_job_resumes_after_the_service_and_its_run_are_killed() {
    let pg = PgServer::start();
    resumes_after_kills(Some(&pg.url));
    assert_eq!(
        pg.column("SELECT state || ' ' || attempts FROM submissions"),
        ["done 2"]
    );
}

fn resumes_after_kills(db: Option<&str>) {
    let tmp = tempfile::tempdir().unwrap();
    let data = data_with_benchmark(tmp.path());
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    // Slow enough to be caught mid-job: 60 ms an answer.
    host_profile(&editors, "slow", &["previous-line", "--delay-ms", "60"], "");
    let t = token(&data, "team-a", db);
    let svc = Service::start(&data, &editors, db);
    let body = json!({"benchmark": "small", "name": "slow", "assistant": "slow"});
    let (st, s) = svc.call("POST", "/api/submissions", Some(&t), Some(body));
    assert_eq!(st, 201, "{s}");
    let id = s["id"].as_i64().unwrap();
    let total = |s: &Value| s["progress"]["total"].as_i64().unwrap_or(0);
    let done = |s: &Value| s["progress"]["done"].as_i64().unwrap_or(0);
    let s = svc.wait(id, &t, |s| done(s) >= 5);
    assert!(
        done(&s) < total(&s),
        "the job ended before it could be killed: {s}"
    );
    drop(svc);
    // The service's run went with it (its parent-death signal): nothing writes now.
    let records = data.join(format!("jobs/{id}/out/records.jsonl"));
    let at_kill = std::fs::read_to_string(&records).unwrap().lines().count();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        std::fs::read_to_string(&records).unwrap().lines().count(),
        at_kill
    );
    let svc = Service::start(&data, &editors, db);
    let s = svc.wait(id, &t, |s| {
        s["state"] == "running" && done(s) > at_kill as i64 + 3
    });
    // The service's stop is not the job's failure: still its first attempt.
    assert_eq!(s["attempts"], 1, "{s}");
    // The job's run killed: retried, and resumed.
    let out = data.join(format!("jobs/{id}/out"));
    let killed = kill_runs_writing(&out);
    assert_eq!(killed, 1, "one run writes {}", out.display());
    let s = svc.wait(id, &t, |s| s["state"] == "done" || s["state"] == "failed");
    assert_eq!(s["state"], "done", "{s}");
    assert_eq!(s["attempts"], 2, "{s}");
    // A second service on the same data folder is refused.
    let mut second = typist();
    if let Some(url) = db {
        second.args(["serve", "--db", url]);
    } else {
        second.arg("serve");
    }
    let o = second
        .env("TYPIST_EDITORS", &editors)
        .args(["--listen", "127.0.0.1:0", "--data"])
        .arg(&data)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("another typist serve uses"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let plan = data.join("benchmarks/small/plan.jsonl");
    let recs = comparable(&std::fs::read_to_string(&records).unwrap());
    assert_eq!(recs, direct_run(tmp.path(), &plan, &editors, "slow"));
}

/// SIGKILLs every `typist run` whose command line names `out`; how many.
fn kill_runs_writing(out: &Path) -> usize {
    let want = out.to_string_lossy().to_string();
    let mut n = 0;
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<String> = cmd
            .split(|&b| b == 0)
            .map(|a| String::from_utf8_lossy(a).to_string())
            .collect();
        // typist's own run (in the job's sandbox: not bwrap, which holds it).
        if args.first().is_some_and(|a| a.ends_with("/typist"))
            && args.get(1).is_some_and(|a| a == "run")
            && args.contains(&want)
        {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            n += 1;
        }
    }
    n
}

/// Ten submissions queued at once (five builds of each of two assistants, two teams)
/// all finish, and the board is right: ten rows, each submission's figures its own run's
/// `score.json`, the builds of one assistant tied with each other (the same records, the
/// same rating) and every pair's wins counted on the benchmark's cases.
#[test]
fn ten_submissions_queued_at_once_all_finish_with_a_right_board() {
    let tmp = tempfile::tempdir().unwrap();
    let data = data_with_benchmark(tmp.path());
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let (a, b) = (token(&data, "team-a", None), token(&data, "team-b", None));
    let svc = Service::start(&data, &editors, None);
    let mut ids = Vec::new();
    for i in 0..10 {
        let (t, assistant) = if i % 2 == 0 {
            (&a, "typist-ngram")
        } else {
            (&b, "typist-previous-line")
        };
        let body =
            json!({"benchmark": "small", "name": format!("build {i}"), "assistant": assistant});
        let (st, s) = svc.call("POST", "/api/submissions", Some(t), Some(body));
        assert_eq!(st, 201, "{s}");
        ids.push((s["id"].as_i64().unwrap(), t.clone(), assistant));
    }
    for (id, t, _) in &ids {
        let s = svc.wait(*id, t, |s| s["state"] == "done" || s["state"] == "failed");
        assert_eq!(s["state"], "done", "{s}");
    }
    let (_, board) = svc.call("GET", "/api/benchmarks/small/board", Some(&a), None);
    let rows = board["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 10, "{board}");
    let positions: Vec<u64> = rows
        .iter()
        .map(|r| r["position"].as_u64().unwrap())
        .collect();
    assert_eq!(positions, (1..=10).collect::<Vec<u64>>());
    let row = |id: i64| rows.iter().find(|r| r["submission"] == id).unwrap();
    for (id, _, assistant) in &ids {
        let r = row(*id);
        assert_eq!(r["assistant"], *assistant, "{r}");
        let score: Value = serde_json::from_str(
            &std::fs::read_to_string(data.join(format!("jobs/{id}/out/score.json"))).unwrap(),
        )
        .unwrap();
        let own = &score["assistants"][assistant];
        assert_eq!(
            r["integral_help"]["value"], own["integral_help"]["value"],
            "{r}"
        );
        assert_eq!(
            r["exact_share"]["value"], own["exact_share"]["value"],
            "{r}"
        );
    }
    // Builds of one assistant: the same rating, and every case between them a tie.
    let rating = |id: i64| row(id)["rating"].as_f64().unwrap();
    let same: Vec<i64> = ids
        .iter()
        .filter(|(_, _, a)| *a == "typist-ngram")
        .map(|(id, _, _)| *id)
        .collect();
    for w in same.windows(2) {
        assert!((rating(w[0]) - rating(w[1])).abs() < 1e-6, "{board}");
    }
    let pairs = board["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 45);
    for p in pairs {
        let assistant_of = |id: &Value| ids.iter().find(|(i, _, _)| *id == *i).unwrap().2;
        if assistant_of(&p["a"]) == assistant_of(&p["b"]) {
            assert_eq!(p["ties"], p["cases"], "{p}");
        }
        // Every pair has its paired difference, whatever the order of its labels
        // (`s10` sorts before `s9`).
        assert!(p["diff_integral_help"].is_f64(), "{p}");
    }
}

/// The schema on PostgreSQL: made by the first connection, recorded as version 1, and
/// neither made again nor refused by the next ones, four of them at once included (over
/// TCP and over the Unix socket); the migrations table and the two tables are there.
#[test]
fn on_postgres_migrations_run_once_and_again_idempotently() {
    use typist::hub::db::{Db, MIGRATIONS};
    let pg = PgServer::start();
    let db = Db::connect(&pg.url).unwrap();
    let all: Vec<i64> = (1..=MIGRATIONS.len() as i64).collect();
    assert_eq!(db.migrations().unwrap(), all);
    db.add_token("team-a", "secret-a", true).unwrap();
    drop(db);
    let again: Vec<_> = (0..4)
        .map(|i| {
            let url = if i % 2 == 0 {
                pg.url.clone()
            } else {
                pg.socket_url()
            };
            std::thread::spawn(move || Db::connect(&url).map(|db| db.migrations()))
        })
        .collect();
    for t in again {
        assert_eq!(t.join().unwrap().unwrap().unwrap(), all);
    }
    assert_eq!(
        pg.column("SELECT count(*) FROM migrations"),
        [MIGRATIONS.len().to_string()]
    );
    assert_eq!(
        pg.column(
            "SELECT table_name FROM information_schema.tables \
             WHERE table_schema = 'public' ORDER BY table_name"
        ),
        ["migrations", "submissions", "tokens"]
    );
    // The data kept: the token made before, an admin.
    let db = Db::connect(&pg.socket_url()).unwrap();
    let a = db.caller("secret-a").unwrap().unwrap();
    assert_eq!((a.name.as_str(), a.admin), ("team-a", true));
}

/// The job queue on PostgreSQL, as on SQLite (`db.rs`'s unit test): taken in order,
/// requeued after a stop, ended. Two services on one database never take the same job,
/// and a service that starts queues again only the jobs no live service holds.
#[test]
fn on_postgres_each_job_is_taken_by_one_service_only() {
    use typist::hub::db::{DONE, Db, RUNNING};
    let pg = PgServer::start();
    let (one, two) = (Db::connect(&pg.url).unwrap(), Db::connect(&pg.url).unwrap());
    one.add_token("team-a", "secret-a", false).unwrap();
    assert!(two.add_token("team-a", "other", false).is_err());
    let a = two.caller("secret-a").unwrap().unwrap();
    assert_eq!((a.name.as_str(), a.admin), ("team-a", false));
    let spec = json!({"assistant": "typist-ngram"});
    let first = one.submit(&a, "first", "default", &spec).unwrap();
    let took = one.take_queued().unwrap().unwrap();
    assert_eq!(
        (took.id, took.state.as_str(), took.attempts),
        (first, RUNNING, 1)
    );
    // Service two starts while one runs the job: the job stays one's.
    assert_eq!(two.requeue_running().unwrap(), 0);
    assert!(two.take_queued().unwrap().is_none());
    // Service one stops (its connection gone): two queues the job again, not counting
    // the interrupted attempt, and takes it.
    drop(one);
    let two_requeued = (0..100)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(20));
            two.requeue_running().unwrap()
        })
        .find(|n| *n > 0);
    assert_eq!(two_requeued, Some(1));
    let again = two.take_queued().unwrap().unwrap();
    assert_eq!((again.id, again.attempts), (first, 1));
    two.finish(first, &json!({"x": 1})).unwrap();
    let s = two.submission(first).unwrap().unwrap();
    assert_eq!((s.state.as_str(), s.result), (DONE, Some(json!({"x": 1}))));
    // Forty jobs, four services taking at once: each job taken once.
    let ids: Vec<i64> = (0..40)
        .map(|i| {
            two.submit(&a, &format!("job {i}"), "default", &spec)
                .unwrap()
        })
        .collect();
    let takers: Vec<_> = (0..4)
        .map(|_| {
            let url = pg.url.clone();
            std::thread::spawn(move || {
                let db = Db::connect(&url).unwrap();
                let mut mine = Vec::new();
                while let Some(s) = db.take_queued().unwrap() {
                    mine.push(s.id);
                    db.fail(s.id, "taken").unwrap();
                }
                mine
            })
        })
        .collect();
    let mut taken: Vec<i64> = takers.into_iter().flat_map(|t| t.join().unwrap()).collect();
    taken.sort();
    assert_eq!(taken, ids);
}

/// A small filesystem of its own mounted on a folder (root: tmpfs), unmounted when
/// dropped.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(at: &Path, size: &str) -> SmallDisk {
        std::fs::create_dir_all(at).unwrap();
        let o = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "cannot mount a small tmpfs on {} (the test needs root): {}",
            at.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        SmallDisk(at.to_path_buf())
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// A job's folder on a disk that fills up mid-run: the job fails with the disk's error
/// in words (after its attempts), and the service goes on to measure the next one.
#[test]
fn a_full_disk_fails_the_job_and_the_service_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let data = data_with_benchmark(tmp.path());
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let t = token(&data, "team-a", None);
    let svc = Service::start(&data, &editors, None);
    // Job 1's folder: 24 KiB, less than its records.
    let _disk = SmallDisk::mount(&data.join("jobs/1"), "24k");
    let body = json!({"benchmark": "small", "name": "full", "assistant": "typist-previous-line"});
    let (st, s) = svc.call("POST", "/api/submissions", Some(&t), Some(body));
    assert_eq!((st, s["id"].as_i64()), (201, Some(1)), "{s}");
    let s = svc.wait(1, &t, |s| s["state"] == "done" || s["state"] == "failed");
    assert_eq!(s["state"], "failed", "{s}");
    let why = s["error"].as_str().unwrap();
    assert!(why.contains("No space left on device"), "{why}");
    // The service goes on.
    let body = json!({"benchmark": "small", "name": "next", "assistant": "typist-previous-line"});
    let (st, s) = svc.call("POST", "/api/submissions", Some(&t), Some(body));
    assert_eq!(st, 201, "{s}");
    let id = s["id"].as_i64().unwrap();
    let s = svc.wait(id, &t, |s| s["state"] == "done" || s["state"] == "failed");
    assert_eq!(s["state"], "done", "{s}");
}

/// A job whose run takes longer than the service's `--job-time` is killed, with
/// everything it started, and failed at once saying why (not retried: it would take as
/// long again); the records it wrote are kept.
#[test]
fn a_job_over_its_time_is_killed_and_failed_saying_so() {
    let tmp = tempfile::tempdir().unwrap();
    let data = data_with_benchmark(tmp.path());
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    // 200 ms an answer: far longer than 2 s for the plan.
    host_profile(
        &editors,
        "slower",
        &["previous-line", "--delay-ms", "200"],
        "",
    );
    let t = token(&data, "team-a", None);
    let svc = Service::start_with(&data, &editors, |c| {
        c.args(["--job-time", "2s"]);
    });
    let body = json!({"benchmark": "small", "name": "slower", "assistant": "slower"});
    let (st, s) = svc.call("POST", "/api/submissions", Some(&t), Some(body));
    assert_eq!(st, 201, "{s}");
    let id = s["id"].as_i64().unwrap();
    let s = svc.wait(id, &t, |s| s["state"] == "done" || s["state"] == "failed");
    assert_eq!(s["state"], "failed", "{s}");
    assert_eq!(s["attempts"], 1, "{s}");
    let why = s["error"].as_str().unwrap();
    assert!(why.contains("--job-time 2s"), "{why}");
    let out = data.join(format!("jobs/{id}/out"));
    assert_eq!(
        kill_runs_writing(&out),
        0,
        "a run still writes {}",
        out.display()
    );
    let kept = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
    assert!(kept.lines().count() >= 1, "{kept}");
    assert!(
        s["progress"]["done"].as_i64().unwrap() < s["progress"]["total"].as_i64().unwrap(),
        "{s}"
    );
}
