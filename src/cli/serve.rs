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
/// The variable `--db` is read from when not given.
const DB_ENV: &str = "TYPIST_DB";

#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ServeArgs {
    #[command(subcommand)]
    pub command: Option<ServeCommand>,
    /// The service's folder: its database (hub.sqlite), benchmarks.toml and the
    /// benchmarks' pinned plans, and every job's run.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_DATA)]
    pub data: PathBuf,
    /// The database in PostgreSQL instead of DIR/hub.sqlite:
    /// postgres://USER[:PASSWORD]@HOST:PORT/DATABASE (no TLS yet).
    #[arg(long, value_name = "URL", env = DB_ENV, hide_env_values = true)]
    pub db: Option<String>,
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
    /// The longest an attempt at a job may run with the local executor (e.g. 90m, 12h):
    /// then its run is killed and the job failed, saying so (not retried).
    #[arg(long, value_name = "DURATION", default_value = "12h", value_parser = humantime::parse_duration)]
    pub job_time: std::time::Duration,
    /// Run jobs outside the sandbox (bubblewrap): only for a service that measures
    /// nothing but its own profiles and trusted model endpoints; uploads are then
    /// refused.
    #[arg(long)]
    pub no_sandbox: bool,
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
    /// Inside a job's sandbox (the service starts it): forwards the job's model
    /// endpoint while the run goes, and ends with the run's status.
    #[command(hide = true)]
    #[command(
        after_help = "Example:\n  typist serve job --forward 127.0.0.1:18080=/data/jobs/7/net/model.sock -- typist run ..."
    )]
    Job(JobArgs),
}

#[derive(clap::Args, Debug)]
pub struct JobArgs {
    /// ADDR=SOCKET: listen on ADDR and carry each connection to the Unix socket.
    #[arg(long, value_name = "ADDR=SOCKET")]
    pub forward: Vec<String>,
    /// The program to run, and its arguments.
    #[arg(last = true, required = true, value_name = "PROGRAM")]
    pub program: Vec<String>,
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
    /// The service's PostgreSQL database, as its `typist serve --db` (default: SQLite in
    /// DIR).
    #[arg(long, value_name = "URL", env = DB_ENV, hide_env_values = true)]
    pub db: Option<String>,
    /// An admin sees every submission, records and reports included.
    #[arg(long)]
    pub admin: bool,
}

/// `--db`'s URL checked before anything starts: a bad one is an error naming the flag.
fn checked_db(url: Option<&str>) -> Result<Option<&str>> {
    if let Some(u) = url {
        typist::hub::db_postgres::check_url(u)
            .map_err(|e| anyhow::anyhow!("--db (or {DB_ENV}): {e:#}"))?;
    }
    Ok(url)
}

pub fn serve(a: ServeArgs) -> Result<ExitCode> {
    if let Some(ServeCommand::Job(j)) = &a.command {
        let code = typist::hub::forward::run_job(
            &j.forward,
            std::path::Path::new(&j.program[0]),
            &j.program[1..],
        )?;
        return Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)));
    }
    if let Some(ServeCommand::Token(TokenCommand::Add(t))) = a.command {
        if t.name.trim().is_empty() || t.name.chars().any(char::is_control) {
            bail!("NAME: a name for the token's holder");
        }
        let db = typist::hub::open_db(&t.data, checked_db(t.db.as_deref())?)?;
        let token = typist::hub::new_token()?;
        db.add_token(t.name.trim(), &token, t.admin)?;
        println!("{token}");
        eprintln!(
            "typist serve: token for {:?}{} added to {} (only its sha256 is kept: this is the one copy)",
            t.name.trim(),
            if t.admin { " (admin)" } else { "" },
            match &t.db {
                Some(url) => typist::hub::db_postgres::hide_password(url),
                None => t.data.display().to_string(),
            }
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
        db: checked_db(a.db.as_deref())?.map(str::to_string),
        listen: a.listen,
        workers: a.workers,
        jobs: a.jobs,
        default_benchmark,
        sandbox: !a.no_sandbox,
        job_time: a.job_time,
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
#[command(group(clap::ArgGroup::new("what").required(true)))]
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
    #[arg(long, value_name = "NAME", group = "what")]
    pub assistant: Option<String>,
    /// Or a model server over HTTP, measured through typist's host.
    #[arg(long, value_name = "URL", group = "what")]
    pub model: Option<String>,
    /// Or a VS Code extension to upload, measured alone in VS Code (sets --editor
    /// vscode).
    #[arg(long, value_name = "FILE.vsix", group = "what")]
    pub extension: Option<PathBuf>,
    /// Or a Neovim plugin to upload (its folder, or a zip of it), measured in Neovim
    /// (sets --editor neovim); with --neovim-namespace.
    #[arg(
        long,
        value_name = "DIR|ZIP",
        group = "what",
        requires = "neovim_namespace"
    )]
    pub neovim_plugin: Option<PathBuf>,
    /// With --neovim-plugin: the Lua file in it that Neovim loads.
    #[arg(long, value_name = "FILE", default_value = "init.lua")]
    pub neovim_config: String,
    /// With --neovim-plugin: the extmark namespaces its ghost text is drawn in
    /// (comma-separated).
    #[arg(long, value_name = "NAMES")]
    pub neovim_namespace: Option<String>,
    /// Or an LSP server's profile to upload (TOML), with its program in --archive.
    #[arg(long, value_name = "FILE.toml", group = "what")]
    pub profile: Option<PathBuf>,
    /// With --profile: a zip of the server's program, unpacked beside the profile
    /// (its `command` a path inside it).
    #[arg(long, value_name = "FILE.zip", requires = "profile")]
    pub archive: Option<PathBuf>,
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
    /// The editor it is measured in: typist, neovim or vscode (default: typist, or the
    /// uploaded extension's or plugin's editor).
    #[arg(long, value_name = "EDITOR")]
    pub editor: Option<String>,
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

/// A request's body: JSON, or a multipart form of `(name, file name, bytes)` parts
/// (no file name: a text field).
enum Body {
    Json(Value),
    Form(Vec<(String, Option<String>, Vec<u8>)>),
}

/// A `multipart/form-data` body of `parts`: its content type and bytes.
fn multipart(parts: &[(String, Option<String>, Vec<u8>)]) -> Result<(String, Vec<u8>)> {
    let boundary = format!(
        "typist-{}",
        typist::hub::new_token()?.get(4..28).unwrap_or("b")
    );
    let mut out = Vec::new();
    for (name, file, bytes) in parts {
        out.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        match file {
            Some(f) => out.extend_from_slice(
                format!(
                    "Content-Disposition: form-data; name=\"{name}\"; filename=\"{}\"\r\nContent-Type: application/octet-stream\r\n\r\n",
                    f.replace(['"', '\r', '\n'], "_")
                )
                .as_bytes(),
            ),
            None => out.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes(),
            ),
        }
        out.extend_from_slice(bytes);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    Ok((format!("multipart/form-data; boundary={boundary}"), out))
}

/// A folder zipped in memory (files and their modes; links refused), for an upload.
fn zip_folder(dir: &std::path::Path) -> Result<Vec<u8>> {
    use std::io::Write as _;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let mut stack = vec![dir.to_path_buf()];
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).with_context(|| format!("cannot read {}", d.display()))? {
            let e = e?;
            let t = e.file_type()?;
            if t.is_symlink() {
                bail!(
                    "{}: a link; the upload takes files and folders only",
                    e.path().display()
                );
            } else if t.is_dir() {
                stack.push(e.path());
            } else {
                files.push(e.path());
            }
        }
    }
    files.sort();
    for f in files {
        let rel = f.strip_prefix(dir)?.to_string_lossy().into_owned();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&f)?.permissions().mode();
        w.start_file(
            rel,
            zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated)
                .unix_permissions(mode & 0o755),
        )?;
        w.write_all(&std::fs::read(&f).with_context(|| format!("cannot read {}", f.display()))?)?;
    }
    Ok(w.finish()?.into_inner())
}

/// The service's client.
struct Client {
    agent: ureq::Agent,
    server: String,
    token: String,
}

impl Client {
    /// `method path` with `body`: the answer's JSON, or the service's error in words.
    fn call(&self, method: &str, path: &str, body: Option<&Body>) -> Result<Value> {
        let url = format!("{}{path}", self.server.trim_end_matches('/'));
        let auth = format!("Bearer {}", self.token);
        let resp = match (method, body) {
            ("POST", Some(Body::Json(b))) => self
                .agent
                .post(&url)
                .header("Authorization", &auth)
                .send_json(b),
            ("POST", Some(Body::Form(parts))) => {
                let (kind, bytes) = multipart(parts)?;
                self.agent
                    .post(&url)
                    .header("Authorization", &auth)
                    .header("Content-Type", &kind)
                    .send(&bytes[..])
            }
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
    let read = |p: &std::path::Path| {
        std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))
    };
    let file_name = |p: &std::path::Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let uploads = a.extension.is_some() || a.neovim_plugin.is_some() || a.profile.is_some();
    let editor = a.editor.clone().unwrap_or_else(|| {
        if a.extension.is_some() {
            "vscode".into()
        } else if a.neovim_plugin.is_some() {
            "neovim".into()
        } else {
            "typist".into()
        }
    });
    let body = if uploads {
        let mut parts: Vec<(String, Option<String>, Vec<u8>)> = vec![
            ("benchmark".into(), None, a.benchmark.clone().into_bytes()),
            ("editor".into(), None, editor.into_bytes()),
            ("passes".into(), None, a.passes.to_string().into_bytes()),
        ];
        let default_name = if let Some(x) = &a.extension {
            parts.push(("extension".into(), Some(file_name(x)), read(x)?));
            file_name(x).trim_end_matches(".vsix").to_string()
        } else if let Some(p) = &a.neovim_plugin {
            let bytes = if p.is_dir() { zip_folder(p)? } else { read(p)? };
            parts.push((
                "neovim_plugin".into(),
                Some(format!("{}.zip", file_name(p))),
                bytes,
            ));
            parts.push((
                "neovim_config".into(),
                None,
                a.neovim_config.clone().into_bytes(),
            ));
            parts.push((
                "neovim_namespace".into(),
                None,
                a.neovim_namespace.clone().unwrap_or_default().into_bytes(),
            ));
            file_name(p)
        } else if let Some(p) = &a.profile {
            parts.push(("profile".into(), Some(file_name(p)), read(p)?));
            if let Some(z) = &a.archive {
                let bytes = if z.is_dir() { zip_folder(z)? } else { read(z)? };
                parts.push(("archive".into(), Some(file_name(z)), bytes));
            }
            file_name(p).trim_end_matches(".toml").to_string()
        } else {
            unreachable!("an upload is given")
        };
        parts.push((
            "name".into(),
            None,
            a.name.clone().unwrap_or(default_name).into_bytes(),
        ));
        Body::Form(parts)
    } else {
        let mut body = json!({
            "benchmark": a.benchmark,
            "editor": editor,
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
            (None, None) => bail!("give --assistant NAME, --model URL or code to upload"),
        };
        body["name"] = json!(a.name.clone().unwrap_or(default_name));
        Body::Json(body)
    };
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
