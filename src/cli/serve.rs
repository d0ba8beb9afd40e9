//! `typist serve` (the benchmark service, `typist::hub`), `typist serve token add`, and
//! `typist submit`, its command-line client: a submission sent, waited for with its
//! progress, and its result line and board position printed.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// Where the service keeps its data unless told.
const DEFAULT_DATA: &str = "serve-data";

#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ServeArgs {
    #[command(subcommand)]
    pub command: Option<ServeCommand>,
    /// The service's folder: its database (hub.sqlite), benchmarks.toml and the
    /// benchmarks' pinned plans, and every job's run.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_DATA)]
    pub data: PathBuf,
    /// Address to listen on (127.0.0.1: this machine only; port 0 picks a free port,
    /// printed at start).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8765")]
    pub listen: SocketAddr,
    /// Submissions measured at once.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub workers: usize,
    /// Workers of each job's `typist run` (its --jobs).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub jobs: usize,
    /// How a job is run: local (`typist run` as a child process of the service) or
    /// slurm (a Slurm job array of --slurm-shards tasks, `typist run --shard auto`, merged
    /// when the array ends; sbatch and squeue reach the cluster through SLURM_CONF).
    #[arg(long, value_enum, value_name = "EXECUTOR", default_value = "local")]
    pub executor: ExecutorArg,
    /// With --executor slurm: tasks of each job's array (shards of its plan).
    #[arg(long, value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub slurm_shards: u32,
    /// With --executor slurm: one more option for every sbatch (repeat it), e.g.
    /// --sbatch-arg=--partition=cpu --sbatch-arg=--time=60.
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    pub sbatch_arg: Vec<String>,
}

/// `typist serve --executor`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecutorArg {
    /// `typist run` as a child process of the service.
    Local,
    /// A Slurm job array per job, one task per shard, merged when it ends.
    Slurm,
}

#[derive(clap::Subcommand, Debug)]
pub enum ServeCommand {
    /// The service's API tokens.
    #[command(subcommand)]
    #[command(after_help = "Example:\n  typist serve token add team-a --data serve-data")]
    Token(TokenCommand),
}

#[derive(clap::Subcommand, Debug)]
pub enum TokenCommand {
    /// Make an API token called NAME and print it (only its sha256 is kept: keep it).
    #[command(after_help = "Example:\n  typist serve token add team-a --data serve-data")]
    Add(TokenAddArgs),
}

#[derive(clap::Args, Debug)]
pub struct TokenAddArgs {
    /// Who the token is for (a team, a person); shown beside their submissions.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The service's folder.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_DATA)]
    pub data: PathBuf,
    /// An admin sees every submission, records and reports included.
    #[arg(long)]
    pub admin: bool,
}

pub fn serve(a: ServeArgs) -> Result<ExitCode> {
    if let Some(ServeCommand::Token(TokenCommand::Add(t))) = a.command {
        if t.name.trim().is_empty() || t.name.chars().any(char::is_control) {
            bail!("NAME: a name for the token's holder");
        }
        let db = typist::hub::open_db(&t.data)?;
        let token = typist::hub::new_token()?;
        db.add_token(t.name.trim(), &token, t.admin)?;
        println!("{token}");
        eprintln!(
            "typist serve: token for {:?}{} added to {} (only its sha256 is kept: this is the one copy)",
            t.name.trim(),
            if t.admin { " (admin)" } else { "" },
            t.data.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    // The default run of ./config.toml, for a data folder with no benchmarks.toml.
    let run = typist::config::ConfigFile::load_or_default(None)?.run;
    let default_benchmark = run
        .dataset
        .map(|dataset| typist::hub::benchmarks::DefaultBenchmark {
            dataset,
            rate: run.rate.unwrap_or(0.05),
            seed: run.seed.unwrap_or(1),
        });
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(typist::hub::serve(typist::hub::ServeOptions {
        data: a.data,
        listen: a.listen,
        workers: a.workers,
        jobs: a.jobs,
        default_benchmark,
        executor: match a.executor {
            ExecutorArg::Local => typist::hub::Executor::Local,
            ExecutorArg::Slurm => typist::hub::Executor::Slurm(typist::hub::slurm::SlurmOptions {
                shards: a.slurm_shards,
                sbatch_args: a.sbatch_arg,
            }),
        },
    }))?;
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args, Debug)]
pub struct SubmitArgs {
    /// The service's address (e.g. http://127.0.0.1:8765).
    #[arg(long, value_name = "URL", env = "TYPIST_SERVER")]
    pub server: String,
    /// An API token of the service (typist serve token add).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "TYPIST_TOKEN",
        hide_env_values = true
    )]
    pub token: String,
    /// The benchmark to be measured on.
    #[arg(long, value_name = "NAME", default_value = "default")]
    pub benchmark: String,
    /// An assistant profile the service knows (typist profiles lists them).
    #[arg(long, value_name = "NAME", conflicts_with = "model")]
    pub assistant: Option<String>,
    /// Or a model server over HTTP, measured through typist's host.
    #[arg(long, value_name = "URL", required_unless_present = "assistant")]
    pub model: Option<String>,
    /// With --model: its API (openai, ollama, llamacpp, tgi).
    #[arg(long, value_name = "API", default_value = "openai")]
    pub api: String,
    /// With --model: the model's name sent to it.
    #[arg(long, value_name = "NAME", default_value = "default")]
    pub model_name: String,
    /// The submission's name on the board, seen by every team (default: the assistant,
    /// or `model NAME`).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The editor it is measured in: typist, neovim or vscode.
    #[arg(long, value_name = "EDITOR", default_value = "typist")]
    pub editor: String,
    /// Passes over the plan (1 to 5).
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub passes: u32,
    /// Print the submission's number and return at once, without waiting for its result.
    #[arg(long)]
    pub no_wait: bool,
    /// Print the submission and its board position as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The service's client.
struct Client {
    agent: ureq::Agent,
    server: String,
    token: String,
}

impl Client {
    /// `method path` with `body`: the answer's JSON, or the service's error in words.
    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value> {
        let url = format!("{}{path}", self.server.trim_end_matches('/'));
        let auth = format!("Bearer {}", self.token);
        let resp = match (method, body) {
            ("POST", Some(b)) => self
                .agent
                .post(&url)
                .header("Authorization", &auth)
                .send_json(b),
            _ => self.agent.get(&url).header("Authorization", &auth).call(),
        };
        let mut resp =
            resp.with_context(|| format!("{method} {url}: the service is not reachable"))?;
        let status = resp.status();
        let text = resp.body_mut().read_to_string().unwrap_or_default();
        let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if !status.is_success() {
            let why = v["error"].as_str().map_or(text.clone(), str::to_string);
            bail!("{method} {path}: {status}: {why}");
        }
        Ok(v)
    }
}

pub fn submit(a: SubmitArgs) -> Result<ExitCode> {
    let client = Client {
        agent: ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(120)))
            .http_status_as_error(false)
            .build()
            .into(),
        server: a.server.clone(),
        token: a.token.clone(),
    };
    let mut body = json!({
        "benchmark": a.benchmark,
        "editor": a.editor,
        "passes": a.passes,
    });
    let default_name = match (&a.assistant, &a.model) {
        (Some(name), _) => {
            body["assistant"] = json!(name);
            name.clone()
        }
        (None, Some(url)) => {
            body["model"] = json!({"endpoint": url, "api": a.api, "name": a.model_name});
            // Not the URL: the board shows names to every team.
            format!("model {}", a.model_name)
        }
        (None, None) => bail!("give --assistant NAME or --model URL"),
    };
    body["name"] = json!(a.name.clone().unwrap_or(default_name));
    let s = client.call("POST", "/api/submissions", Some(&body))?;
    let id = s["id"]
        .as_i64()
        .context("the service answered no submission id")?;
    if a.no_wait {
        if a.json {
            println!("{s}");
        } else {
            println!("submission {id} queued on {}", a.benchmark);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut said = String::new();
    let s = loop {
        let s = client.call("GET", &format!("/api/submissions/{id}"), None)?;
        let state = s["state"].as_str().unwrap_or("?").to_string();
        let now = format!(
            "submission {id}: {state} {}/{} records{}",
            s["progress"]["done"],
            s["progress"]["total"],
            s["error"]
                .as_str()
                .map(|e| format!(" (last attempt: {e})"))
                .unwrap_or_default()
        );
        if now != said {
            eprintln!("{now}");
            said = now;
        }
        if state == "done" || state == "failed" {
            break s;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    if s["state"] == "failed" {
        if a.json {
            println!("{}", json!({"submission": s}));
        }
        eprintln!(
            "typist submit: submission {id} failed: {}",
            s["error"].as_str().unwrap_or("no reason given")
        );
        return Ok(ExitCode::from(1));
    }
    let board = client.call(
        "GET",
        &format!("/api/benchmarks/{}/board", a.benchmark),
        None,
    )?;
    let rows = board["rows"].as_array().cloned().unwrap_or_default();
    let row = rows.iter().find(|r| r["submission"] == id).cloned();
    let position = row.as_ref().and_then(|r| r["position"].as_u64());
    if a.json {
        println!(
            "{}",
            json!({"submission": s, "board_position": position, "board_size": rows.len(), "board_row": row})
        );
        return Ok(ExitCode::SUCCESS);
    }
    let r = &s["result"];
    let est = |v: &Value, scale: f64| -> String {
        match (
            v["value"].as_f64(),
            v["ci95"][0].as_f64(),
            v["ci95"][1].as_f64(),
        ) {
            (Some(x), Some(lo), Some(hi)) => {
                format!("{:.3} [{:.3}, {:.3}]", x * scale, lo * scale, hi * scale)
            }
            (Some(x), _, _) => format!("{:.3}", x * scale),
            _ => "–".into(),
        }
    };
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "submission {id} ({}) on {}: integral help {}, exact {} %, empty {:.1} %; board position {} of {}",
        s["name"].as_str().unwrap_or_default(),
        a.benchmark,
        est(&r["integral_help"], 1.0),
        est(&r["exact_share"], 100.0),
        r["empty_rate"].as_f64().unwrap_or(0.0) * 100.0,
        position.map_or("–".into(), |p| p.to_string()),
        rows.len()
    )?;
    Ok(ExitCode::SUCCESS)
}
