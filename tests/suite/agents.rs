//! Real third-party agents driven end to end offline: tabby-agent and lsp-ai in front
//! of `typist serve-model` (the n-gram baseline over HTTP, started by the run itself from
//! the profiles' `[service]`), replaying the same plan as
//! typist's own host computing the same baseline directly. Where an agent's answers
//! differ from the direct ones, the difference is the agent's doing (what context it
//! sends, how it post-processes): the test prints the comparison and checks the facts
//! about each agent's requests that explain it.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{DATASET, ok, typist};
use serde_json::Value;

fn installed(name: &str) -> bool {
    typist::editor::profile::find_profile(name, None)
        .unwrap()
        .resolve_command()
        .is_some()
}

/// The agents' own profiles, their managed `typist serve-model` logging its requests.
fn editors(dir: &Path, log: &Path) -> std::path::PathBuf {
    let e = dir.join("editors");
    std::fs::create_dir_all(&e).unwrap();
    std::fs::write(
        e.join("direct.toml"),
        "name = \"direct\"\ncommand = \"@typist\"\nargs = [\"host\", \"--backend\", \"ngram\", \"--ngram-context\", \"document\"]\ndialect = \"inline\"\nlanguages = [\"python\", \"javascript\"]\nextensions = [\"py\", \"js\"]\n",
    )
    .unwrap();
    let src = |n: &str| {
        std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("editors")
                .join(format!("{n}.toml")),
        )
        .unwrap()
    };
    let logged = |n: &str| {
        let from = r#"args = ["serve-model", "--port", "{port}"]"#;
        let text = src(n);
        assert!(text.contains(from), "{n} starts serve-model");
        text.replace(
            from,
            &format!(
                r#"args = ["serve-model", "--port", "{{port}}", "--log-requests", {:?}]"#,
                log.display().to_string()
            ),
        )
    };
    std::fs::write(e.join("tabby-agent.toml"), logged("tabby-agent")).unwrap();
    std::fs::write(e.join("lsp-ai.toml"), logged("lsp-ai")).unwrap();
    e
}

fn predictions(out: &Path) -> BTreeMap<(String, String), Value> {
    std::fs::read_to_string(out.join("records.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|r| {
            (
                (
                    r["assistant"].as_str().unwrap().to_string(),
                    r["case"].as_str().unwrap().to_string(),
                ),
                r,
            )
        })
        .collect()
}

#[test]
fn agents_in_front_of_serve_model_against_the_direct_baseline() {
    for agent in ["tabby-agent", "lsp-ai"] {
        assert!(
            installed(agent),
            "{agent} is not installed (scripts/install-servers.sh installs it)"
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("requests.jsonl");
    // No model server started here: the profiles' own [service] starts one (shared by
    // both agents, the same spec) and stops it at the end.
    let editors = editors(tmp.path(), &log);
    let out = tmp.path().join("out");
    let o = typist()
        .args([
            "run",
            "--config",
            "/dev/null",
            "--quiet",
            "--no-latency",
            "--dataset",
            DATASET,
            "--rate",
            "0.03",
            "--seed",
            "7",
        ])
        .args([
            "--assistant",
            "direct",
            "--assistant",
            "tabby-agent",
            "--assistant",
            "lsp-ai",
            "--editors",
        ])
        .arg(&editors)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    ok(&o);
    let recs = predictions(&out);
    let cases: Vec<String> = recs
        .keys()
        .filter(|(a, _)| a == "direct")
        .map(|(_, c)| c.clone())
        .collect();
    assert!(cases.len() > 50);
    for agent in ["tabby-agent", "lsp-ai"] {
        let (mut same, mut differ, mut agent_empty, mut direct_empty, mut errors) = (0, 0, 0, 0, 0);
        let mut examples = vec![];
        for c in &cases {
            let d = &recs[&("direct".to_string(), c.clone())];
            let a = &recs[&(agent.to_string(), c.clone())];
            match (
                a["outcome"].as_str().unwrap(),
                d["outcome"].as_str().unwrap(),
            ) {
                ("error" | "timeout", _) => errors += 1,
                ("empty", "suggestion") => agent_empty += 1,
                ("suggestion", "empty") => direct_empty += 1,
                _ if a["predicted"] == d["predicted"] => same += 1,
                _ => {
                    differ += 1;
                    if examples.len() < 4 {
                        examples.push(format!(
                            "{c}: direct {} | {agent} {}",
                            d["predicted"], a["predicted"]
                        ));
                    }
                }
            }
        }
        eprintln!(
            "{agent}: {} cases: {same} same as direct, {differ} different, {agent_empty} empty where direct answered, {direct_empty} answered where direct was empty, {errors} errors\n  {}",
            cases.len(),
            examples.join("\n  ")
        );
        assert_eq!(errors, 0, "{agent} failed cases");
        assert!(same > 0, "{agent} reproduces the baseline on some lines");
    }
    // The facts behind the differences: what each agent sent to the model.
    let reqs: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let tabby: Vec<&Value> = reqs
        .iter()
        .filter(|r| r["body"]["segments"].is_object())
        .collect();
    assert!(
        !tabby.is_empty(),
        "tabby-agent called /v1/completions with segments"
    );
    let max_prefix_lines = tabby
        .iter()
        .map(|r| {
            r["body"]["segments"]["prefix"]
                .as_str()
                .unwrap()
                .lines()
                .count()
        })
        .max()
        .unwrap();
    eprintln!(
        "tabby-agent: {} requests, longest prefix sent: {max_prefix_lines} lines",
        tabby.len()
    );
    assert!(
        max_prefix_lines <= 21,
        "tabby-agent truncates the prefix to about 20 lines"
    );
    let lsp_ai: Vec<&Value> = reqs
        .iter()
        .filter(|r| {
            r["body"]["prompt"]
                .as_str()
                .is_some_and(|p| p.starts_with("<fim_prefix>"))
        })
        .collect();
    assert!(!lsp_ai.is_empty(), "lsp-ai sent FIM prompts");
    let longest = lsp_ai
        .iter()
        .map(|r| r["body"]["prompt"].as_str().unwrap().chars().count())
        .max()
        .unwrap();
    eprintln!(
        "lsp-ai: {} requests, longest prompt: {longest} characters",
        lsp_ai.len()
    );
}
