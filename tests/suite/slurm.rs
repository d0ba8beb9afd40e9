//! The service's Slurm executor (issue 46) on a real one-node Slurm cluster: munged,
//! slurmctld and slurmd from Debian's `slurm-wlm` and `munge`, started in a temporary
//! folder by `scripts/slurm-node.sh` and stopped at the end. A job is a Slurm array of
//! shards merged when it ends: the same records as one `typist run` of the plan, the
//! board's figures its merged `score.json`; a task cancelled mid-run is resumed by the
//! job's retry; a task that fails every time fails the job with its last log line. No
//! Slurm here is a failure, not a skip (scripts/install-servers.sh installs it).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use super::common::host_profile;
use super::hub::{Service, comparable, data_with_benchmark, direct_run, token};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/slurm-node.sh");

/// A one-node cluster in `dir`, stopped (its jobs cancelled, its daemons ended) when
/// dropped.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
}

impl Cluster {
    fn start(dir: &Path) -> Cluster {
        let o = Command::new(SCRIPT)
            .arg("start")
            .arg(dir)
            .output()
            .unwrap_or_else(|e| panic!("{SCRIPT} cannot run: {e}"));
        let cluster = Cluster {
            dir: dir.to_path_buf(),
            conf: dir.join("slurm.conf"),
        };
        assert!(
            o.status.success(),
            "Slurm did not start (install slurm-wlm and munge: scripts/install-servers.sh): {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        cluster
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(SCRIPT).arg("stop").arg(&self.dir).status();
    }
}

fn figures(path: &Path, assistant: &str) -> Value {
    let score: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    score["assistants"][assistant].clone()
}

/// One cluster for the three cases: a job measured as `typist run` measures it, a
/// cancelled task resumed, a failing task failing the job.
#[test]
fn jobs_run_as_slurm_arrays_give_the_same_records() {
    let tmp = tempfile::tempdir().unwrap();
    // The cluster's folder: short, for munge's socket path.
    let cluster = Cluster::start(&tmp.path().join("slurm"));
    let data = data_with_benchmark(tmp.path());
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    // Slow enough to be caught mid-task: 20 ms an answer.
    host_profile(&editors, "slow", &["previous-line", "--delay-ms", "20"], "");
    host_profile(&editors, "doomed", &["previous-line"], "");
    let t = token(&data, "team-a", None);
    let svc = Service::start_with(&data, &editors, |c| {
        c.env("SLURM_CONF", &cluster.conf)
            .args(["--executor", "slurm", "--slurm-shards", "2"]);
    });
    let finished = |s: &Value| s["state"] == "done" || s["state"] == "failed";
    let submit = |name: &str, assistant: &str| -> i64 {
        let body = json!({"benchmark": "small", "name": name, "assistant": assistant});
        let (st, s) = svc.call("POST", "/api/submissions", Some(&t), Some(body));
        assert_eq!(st, 201, "{s}");
        s["id"].as_i64().unwrap()
    };

    // A job through Slurm: two shards merged, the records of one plain run.
    let id = submit("ngram", "typist-ngram");
    let s = svc.wait(id, &t, finished);
    assert_eq!(s["state"], "done", "{s}");
    assert_eq!(s["attempts"], 1, "{s}");
    let job = data.join(format!("jobs/{id}"));
    for i in 0..2 {
        assert_eq!(
            std::fs::read_to_string(job.join(format!("shards/{i}.exit")))
                .unwrap()
                .trim(),
            "0"
        );
        assert!(job.join(format!("shards/{i}/manifest.json")).is_file());
    }
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(job.join("out/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["merged_from"].as_array().unwrap().len(), 2);
    assert_eq!(manifest["status"], "complete", "{manifest}");
    let plan = data.join("benchmarks/small/plan.jsonl");
    let merged = comparable(&std::fs::read_to_string(job.join("out/records.jsonl")).unwrap());
    assert_eq!(s["progress"]["done"].as_u64(), Some(merged.len() as u64));
    assert_eq!(
        merged,
        direct_run(tmp.path(), &plan, &editors, "typist-ngram")
    );
    // The board's row: the merged run's score, which is the plain run's.
    let (st, board) = svc.call("GET", "/api/benchmarks/small/board", Some(&t), None);
    assert_eq!(st, 200, "{board}");
    let row = board["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["submission"] == id)
        .unwrap_or_else(|| panic!("no row of {id}: {board}"))
        .clone();
    let own = figures(&job.join("out/score.json"), "typist-ngram");
    let plain = figures(
        &tmp.path().join("direct-typist-ngram/score.json"),
        "typist-ngram",
    );
    for k in ["integral_help", "exact_share"] {
        assert_eq!(row[k]["value"], own[k]["value"], "{k}: {row}");
        assert_eq!(own[k], plain[k], "{k}");
    }
    assert_eq!(row["assistant"], "typist-ngram");

    // A task cancelled mid-run: the job is retried, the task resumes its shard.
    let slow = submit("slow", "slow");
    // Queued behind it: a job whose profile is gone by the time its tasks run.
    let doomed = submit("doomed", "doomed");
    std::fs::remove_file(editors.join("doomed.toml")).unwrap();
    let s = svc.wait(slow, &t, |s| {
        s["progress"]["done"].as_i64().unwrap_or(0) >= 5 || finished(s)
    });
    assert_eq!(
        s["state"], "running",
        "the job ended before it could be cancelled: {s}"
    );
    let array = std::fs::read_to_string(data.join(format!("jobs/{slow}/slurm.id"))).unwrap();
    let o = Command::new("scancel")
        .env("SLURM_CONF", &cluster.conf)
        .arg(format!("{}_0", array.trim()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = svc.wait(slow, &t, finished);
    assert_eq!(s["state"], "done", "{s}");
    assert_eq!(s["attempts"], 2, "{s}");
    let recs = comparable(
        &std::fs::read_to_string(data.join(format!("jobs/{slow}/out/records.jsonl"))).unwrap(),
    );
    assert_eq!(recs, direct_run(tmp.path(), &plan, &editors, "slow"));

    // A task that fails every time: three attempts, then failed with its last words.
    let s = svc.wait(doomed, &t, finished);
    assert_eq!(s["state"], "failed", "{s}");
    assert_eq!(s["attempts"], 3, "{s}");
    let e = s["error"].as_str().unwrap();
    assert!(e.starts_with("Slurm task "), "{e}");
    assert!(e.contains("exited with") && e.contains("doomed"), "{e}");
    drop(svc);
    // Nothing of the service's is left queued on the cluster.
    std::thread::sleep(Duration::from_millis(100));
    let o = Command::new("squeue")
        .env("SLURM_CONF", &cluster.conf)
        .args(["--noheader", "--format=%i"])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "");
}
