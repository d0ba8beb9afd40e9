//! Managed model services: the HTTP servers a profile needs behind its language server
//! (llama.cpp's `llama-server` with a model, `typist serve-model`), declared in the
//! profile's `[service]` (or several `[[service]]`), started once per run on free
//! 127.0.0.1 ports before the first session, shared by every worker, and stopped at the
//! end: dropping [`Services`] stops them (the normal end, an error and a panic all drop
//! it), [`stop_all_now`] kills them before an immediate exit (a second Ctrl-C), and
//! Linux's parent-death signal (`os::die_with_parent`) covers a SIGKILL of typist. Each
//! service leads its own process group, so a terminal's Ctrl-C reaches typist only, and
//! stopping a service (SIGTERM to its group, then SIGKILL after a grace) stops whatever
//! it started.
//!
//! Placeholders, in the service's args, health URL and model path and in the profile's
//! args, environment, initialization options, settings, request parameters and home and
//! workspace files: `{port}` (the profile's last service), `{port.NAME}` (the service
//! called NAME), `{slots}` (parallel request slots: the run's `--jobs`), `{threads}` (the
//! cores the run may use: its CPU affinity) and `{servers}` (the folder servers and
//! models are installed in).
//!
//! Each service is waited for until its health URL answers (an error if it exits or
//! misses its deadline); the manifest describes each service (command, args, health URL,
//! version, model path and sha256).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::editor::Profile;
use crate::editor::profile::{OneOrMany, ServiceSpec};

/// One readiness probe of a service (its HTTP health or completion check).
const READY_PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// The pause between two readiness probes while a service starts.
const READY_POLL_INTERVAL: Duration = Duration::from_millis(100);
/// How long a service's process group has after SIGTERM before SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(3);
/// The pause between two looks at whether a terminated service has exited.
const TERM_POLL_INTERVAL: Duration = Duration::from_millis(20);

/// Process groups of the services now running (their leaders are not reaped yet, so the
/// ids cannot name another group).
static RUNNING: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// A running service.
struct Running {
    spec: ServiceSpec,
    port: u16,
    /// The port the profiles are given: `port`, or its relay's (`start_relayed`).
    reached_at: u16,
    child: std::process::Child,
    describe: Value,
}

/// The services of one run; dropping it stops them all.
pub struct Services {
    running: Vec<Running>,
    /// The services' output, made with the first service (a run without services
    /// leaves no folder behind, even when killed); named `typist-PID-…` like the
    /// workspaces, so that one left by a killed typist is swept with them.
    logs: Option<tempfile::TempDir>,
}

/// The cores this process may run on: its CPU affinity, so `taskset` and a container's
/// CPU set are honoured; 1 when it cannot be read.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// `{threads}` for a run through `editor`: the cores typist may run on, less one for VS
/// Code, whose page and extension host work while the model answers. llama.cpp's
/// threads wait for each other at every layer, so one that VS Code preempts stalls the
/// rest: on 2 cores, two threads made the answers through VS Code slower at p95 (lsp-ai
/// 4.5 s against 2.3 s with one thread, the same records).
pub fn threads_for(editor: crate::editor::EditorKind) -> usize {
    match editor {
        crate::editor::EditorKind::Vscode => cores().saturating_sub(1).max(1),
        _ => cores(),
    }
}

/// The folder servers and models are installed in (`{servers}`).
fn servers_dir() -> PathBuf {
    crate::editor::profile::server_prefixes()
        .into_iter()
        .find(|p| p.is_dir())
        .and_then(|p| p.canonicalize().ok())
        .unwrap_or_else(|| PathBuf::from(".servers"))
}

/// Whether `program` is one of the servers the install script puts in `{servers}`.
fn in_servers_dir(program: &Path) -> bool {
    program
        .canonicalize()
        .is_ok_and(|p| p.starts_with(servers_dir()))
}

/// What is missing when a service cannot start: callers (doctor) tell "not installed"
/// from "failed" by this type, not by the message.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ServiceError {
    #[error(
        "service {service}: {program} is not installed (scripts/install-servers.sh installs the local model's)"
    )]
    ProgramMissing { service: String, program: String },
    #[error(
        "service {service}: the model {} is not installed (scripts/install-servers.sh installs it)",
        path.display()
    )]
    ModelMissing { service: String, path: PathBuf },
}

impl ServiceError {
    /// Whether `e` (or an error it wraps) says that a service's program or model is not
    /// installed.
    pub fn is_missing(e: &anyhow::Error) -> bool {
        e.chain().any(|c| c.is::<ServiceError>())
    }
}

/// A service that did not start, kept for every profile that needs it.
struct Failure {
    why: String,
    missing: Option<ServiceError>,
}

impl Failure {
    /// The error of `profile`: the same words for each, and the type when it says what
    /// is missing.
    fn of(&self, profile: &str) -> anyhow::Error {
        match &self.missing {
            Some(m) => anyhow::Error::new(m.clone()).context(format!("profile {profile}")),
            None => anyhow::anyhow!("profile {profile}: {}", self.why),
        }
    }
}

fn free_port() -> Result<u16> {
    let l = std::net::TcpListener::bind(("127.0.0.1", 0)).context("no free port on 127.0.0.1")?;
    Ok(l.local_addr()?.port())
}

/// Replaces the placeholders in `s`.
pub fn fill(s: &str, vars: &BTreeMap<String, String>) -> String {
    let mut out = s.to_string();
    for (k, v) in vars {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

fn fill_value(v: &Value, vars: &BTreeMap<String, String>) -> Value {
    match v {
        Value::String(s) => Value::String(fill(s, vars)),
        Value::Array(a) => Value::Array(a.iter().map(|x| fill_value(x, vars)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), fill_value(x, vars)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The profile with every placeholder filled.
pub fn fill_profile(p: &Profile, vars: &BTreeMap<String, String>) -> Profile {
    let mut p = p.clone();
    p.args = p.args.iter().map(|a| fill(a, vars)).collect();
    p.env = p
        .env
        .iter()
        .map(|(k, v)| (k.clone(), fill(v, vars)))
        .collect();
    p.initialization_options = fill_value(&p.initialization_options, vars);
    p.settings = fill_value(&p.settings, vars);
    p.request_params = fill_value(&p.request_params, vars);
    p.home_files = p
        .home_files
        .iter()
        .map(|(k, v)| (k.clone(), fill(v, vars)))
        .collect();
    p.workspace_files = p
        .workspace_files
        .iter()
        .map(|(k, v)| (k.clone(), fill(v, vars)))
        .collect();
    p
}

/// Hex sha256 of a file, read in 1 MiB blocks.
pub fn sha256_file(path: &Path) -> Result<String> {
    use sha2::Digest;
    let mut f =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut h = sha2::Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(crate::digest::hex(&h.finalize()))
}

fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Starts the service's program leading its own process group, its output into `log`,
/// dying with typist.
fn spawn(
    spec: &ServiceSpec,
    program: &Path,
    args: &[String],
    port: u16,
    log: &Path,
) -> Result<std::process::Child> {
    let log_file = std::fs::File::create(log)?;
    let mut cmd = std::process::Command::new(program);
    cmd.args(args)
        .stdin(std::process::Stdio::null())
        .stdout(log_file.try_clone()?)
        .stderr(log_file);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    crate::os::die_with_parent(&mut cmd);
    tracing::info!(service = %spec.name, port, "starting {}", program.display());
    cmd.spawn()
        .with_context(|| format!("service {}: cannot start {}", spec.name, program.display()))
}

/// The first two lines the program prints with `version_args`.
fn version(program: &Path, version_args: &[String]) -> Option<String> {
    let o = std::process::Command::new(program)
        .args(version_args)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    // llama-server prints `version: …` then `built with …`.
    (!lines.is_empty()).then(|| lines.iter().take(2).copied().collect::<Vec<_>>().join("; "))
}

impl Services {
    /// Starts the services `profiles` need (each name once) and returns the profiles with
    /// their placeholders filled; the first service that cannot start is an error (the
    /// ones already started are stopped). `slots`: parallel requests to serve;
    /// `threads`: the cores the services may use (`{threads}`, from [`threads_for`]).
    pub fn start(
        profiles: &[Profile],
        slots: usize,
        threads: usize,
    ) -> Result<(Services, Vec<Profile>)> {
        Services::start_relayed(profiles, slots, threads, &mut |_, port| Ok(port))
    }

    /// As [`Services::start`], but a service that cannot start fails only the profiles
    /// that need it (for `typist doctor`).
    pub fn start_each(
        profiles: &[Profile],
        slots: usize,
        threads: usize,
    ) -> Result<(Services, Vec<Result<Profile>>)> {
        Services::start_each_relayed(profiles, slots, threads, &mut |_, port| Ok(port))
    }

    /// As [`Services::start`], but the profiles (and the services started after it) are
    /// given the port `relay` returns for each service instead of the service's own:
    /// `typist bench model` puts a recording relay there. `relay` is called once per
    /// service started.
    pub fn start_relayed(
        profiles: &[Profile],
        slots: usize,
        threads: usize,
        relay: &mut dyn FnMut(&ServiceSpec, u16) -> Result<u16>,
    ) -> Result<(Services, Vec<Profile>)> {
        let (services, each) = Services::start_each_relayed(profiles, slots, threads, relay)?;
        let mut out = Vec::new();
        for p in each {
            out.push(p?);
        }
        Ok((services, out))
    }

    fn start_each_relayed(
        profiles: &[Profile],
        slots: usize,
        threads: usize,
        relay: &mut dyn FnMut(&ServiceSpec, u16) -> Result<u16>,
    ) -> Result<(Services, Vec<Result<Profile>>)> {
        let mut services = Services {
            running: Vec::new(),
            logs: None,
        };
        let mut vars: BTreeMap<String, String> = BTreeMap::new();
        vars.insert("slots".into(), slots.max(1).to_string());
        vars.insert("threads".into(), threads.max(1).to_string());
        vars.insert("servers".into(), servers_dir().display().to_string());
        // Services that failed, by name: every profile needing one fails the same way.
        let mut failed: BTreeMap<String, Failure> = BTreeMap::new();
        let mut out = Vec::new();
        'profiles: for p in profiles {
            let mut own = vars.clone();
            for spec in p.service.as_ref().map(OneOrMany::list).unwrap_or_default() {
                if let Some(f) = failed.get(&spec.name) {
                    out.push(Err(f.of(&p.name)));
                    continue 'profiles;
                }
                let port = match services.running.iter().find(|r| r.spec.name == spec.name) {
                    Some(r) if r.spec == *spec => r.reached_at,
                    Some(_) => {
                        out.push(Err(anyhow::anyhow!(
                            "profile {}: another profile declares a different service called {:?}",
                            p.name,
                            spec.name
                        )));
                        continue 'profiles;
                    }
                    None => match services
                        .launch(spec, &own)
                        .and_then(|port| relay(spec, port))
                    {
                        Ok(port) => {
                            let r = services.running.last_mut().expect("just launched");
                            r.reached_at = port;
                            port
                        }
                        Err(e) => {
                            let f = Failure {
                                why: format!("{e:#}"),
                                missing: e.chain().find_map(|c| c.downcast_ref()).cloned(),
                            };
                            out.push(Err(f.of(&p.name)));
                            failed.insert(spec.name.clone(), f);
                            continue 'profiles;
                        }
                    },
                };
                own.insert(format!("port.{}", spec.name), port.to_string());
                own.insert("port".into(), port.to_string());
            }
            out.push(Ok(fill_profile(p, &own)));
        }
        Ok((services, out))
    }

    /// Starts one service on a free port and waits until its health URL answers;
    /// returns the port.
    fn launch(&mut self, spec: &ServiceSpec, vars: &BTreeMap<String, String>) -> Result<u16> {
        let program = crate::editor::profile::resolve_program(&spec.command).ok_or_else(|| {
            ServiceError::ProgramMissing {
                service: spec.name.clone(),
                program: spec.command.clone(),
            }
        })?;
        let port = free_port()?;
        let mut vars = vars.clone();
        vars.insert("port".into(), port.to_string());
        let model = spec.model.as_ref().map(|m| PathBuf::from(fill(m, &vars)));
        if let Some(m) = &model
            && !m.is_file()
        {
            return Err(ServiceError::ModelMissing {
                service: spec.name.clone(),
                path: m.clone(),
            }
            .into());
        }
        let args: Vec<String> = spec.args.iter().map(|a| fill(a, &vars)).collect();
        let health = fill(&spec.health, &vars);
        let logs = match &self.logs {
            Some(l) => l,
            None => self
                .logs
                .insert(crate::editor::workspace::scratch_dir("services-")?),
        };
        let log = logs.path().join(format!("{}.log", spec.name));
        let child = spawn(spec, &program, &args, port, &log)?;
        if let Ok(mut r) = RUNNING.lock() {
            r.push(child.id());
        }
        // Pushed before anything can fail, so that dropping `self` stops it.
        self.running.push(Running {
            spec: spec.clone(),
            port,
            reached_at: port,
            child,
            describe: Value::Null,
        });
        let model = match &model {
            Some(path) => json!({"path": path.display().to_string(), "sha256": sha256_file(path)?}),
            None => Value::Null,
        };
        let version = spec
            .version_args
            .as_ref()
            .and_then(|va| version(&program, va));
        self.running.last_mut().expect("just pushed").describe = json!({
            "name": spec.name,
            "command": program.display().to_string(),
            "args": args,
            "health": health,
            "version": version,
            "model": model,
        });
        self.wait_ready(spec, &program, &health, &log)?;
        Ok(port)
    }

    /// Polls the last service's health URL until it answers with success; an error when
    /// the service exits or misses its start-up deadline.
    fn wait_ready(
        &mut self,
        spec: &ServiceSpec,
        program: &Path,
        health: &str,
        log: &Path,
    ) -> Result<()> {
        let deadline = Instant::now() + Duration::from_millis(spec.startup_timeout_ms);
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(READY_PROBE_TIMEOUT))
            .http_status_as_error(false)
            .build()
            .into();
        loop {
            if let Ok(r) = agent.get(health).call()
                && r.status().is_success()
            {
                return Ok(());
            }
            let r = self.running.last_mut().expect("just pushed");
            if let Ok(Some(status)) = r.child.try_wait() {
                forget(r.child.id());
                let name = program
                    .file_name()
                    .map_or(spec.command.clone(), |f| f.to_string_lossy().into_owned());
                let what = match std::os::unix::process::ExitStatusExt::signal(&status) {
                    // A crash at load: most often a binary built for another CPU (the
                    // AMX kernels of a `-march=native` llama.cpp), which the install
                    // script rebuilds and checks.
                    Some(sig) if in_servers_dir(program) => format!(
                        "crashed at load with {} (signal {sig}): run scripts/install-servers.sh, which rebuilds {name} for any x86-64 CPU and checks that it answers",
                        signal_name(sig)
                    ),
                    Some(sig) => format!(
                        "crashed at load with {} (signal {sig}): check that {} runs on this machine with the service's args",
                        signal_name(sig),
                        program.display()
                    ),
                    None => format!("exited before it was ready ({status})"),
                };
                bail!(
                    "service {} ({name}) {what}; its last lines:\n{}",
                    spec.name,
                    tail(log, 15)
                );
            }
            if Instant::now() >= deadline {
                bail!(
                    "service {} was not ready at {health} within {} ms; its last lines:\n{}",
                    spec.name,
                    spec.startup_timeout_ms,
                    tail(log, 15)
                );
            }
            std::thread::sleep(READY_POLL_INTERVAL);
        }
    }

    /// What the manifest records of each service: name, command, args (the port is in
    /// them), health URL, version, model file and its sha256.
    pub fn describe(&self) -> Vec<Value> {
        self.running.iter().map(|r| r.describe.clone()).collect()
    }

    /// The port each running service listens on, by name.
    pub fn ports(&self) -> BTreeMap<String, u16> {
        self.running
            .iter()
            .map(|r| (r.spec.name.clone(), r.port))
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.running.is_empty()
    }

    /// Process ids of the running services (each leads its own process group).
    pub fn pids(&self) -> Vec<u32> {
        self.running.iter().map(|r| r.child.id()).collect()
    }
}

/// SIGKILL to every running service's process group, for an exit that will not unwind
/// (`std::process::exit` after a second Ctrl-C). Their [`Services`] is never dropped.
pub fn stop_all_now() {
    // The leaders are not reaped yet (an id leaves RUNNING when its leader is reaped).
    if let Ok(r) = RUNNING.lock() {
        for pid in r.iter() {
            killpg(*pid, libc::SIGKILL);
        }
    }
}

impl Running {
    /// Whether the service still runs; once it has exited it is reaped here, and its id
    /// leaves RUNNING at once.
    fn alive(&mut self) -> bool {
        let alive = matches!(self.child.try_wait(), Ok(None));
        if !alive {
            forget(self.child.id());
        }
        alive
    }
}

/// The usual name of a signal that ends a process (`SIGSEGV`), else `signal N`.
fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGILL => "SIGILL",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGABRT => "SIGABRT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGHUP => "SIGHUP",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGSYS => "SIGSYS",
        _ => return format!("signal {sig}"),
    };
    name.to_string()
}

fn forget(pid: u32) {
    if let Ok(mut running) = RUNNING.lock() {
        running.retain(|p| *p != pid);
    }
}

/// Callers signal only groups whose leader is not reaped yet, so the id is still theirs.
fn killpg(pid: u32, signal: libc::c_int) {
    crate::os::signal_group(pid, signal);
}

impl Drop for Services {
    fn drop(&mut self) {
        for r in self.running.iter_mut().rev() {
            let pid = r.child.id();
            if !r.alive() {
                continue;
            }
            // The whole group: the service and anything it started.
            killpg(pid, libc::SIGTERM);
            let deadline = Instant::now() + TERM_GRACE;
            while Instant::now() < deadline {
                std::thread::sleep(TERM_POLL_INTERVAL);
                if !r.alive() {
                    break;
                }
            }
            if r.alive() {
                killpg(pid, libc::SIGKILL);
                forget(pid);
                let _ = r.child.wait();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_everywhere() {
        let mut vars = BTreeMap::new();
        vars.insert("port".to_string(), "4242".to_string());
        vars.insert("port.llama".to_string(), "4343".to_string());
        assert_eq!(
            fill("http://127.0.0.1:{port}/x?u={port.llama}", &vars),
            "http://127.0.0.1:4242/x?u=4343"
        );
        let v = fill_value(
            &json!({"a": ["{port}", 1], "b": {"c": "{port.llama}"}}),
            &vars,
        );
        assert_eq!(v, json!({"a": ["4242", 1], "b": {"c": "4343"}}));
        assert_eq!(fill("{unknown}", &vars), "{unknown}");
    }

    fn profile_with_service(command: &str, model: &str) -> Profile {
        let text = format!(
            "name = \"p\"\ncommand = \"@typist\"\nargs = [\"host\"]\ndialect = \"inline\"\n\
             languages = [\"python\"]\nextensions = [\"py\"]\n\
             [service]\nname = \"s\"\ncommand = \"{command}\"\n\
             health = \"http://127.0.0.1:{{port}}/health\"\nmodel = \"{model}\"\n"
        );
        Profile::parse(&text, Path::new("p.toml")).unwrap()
    }

    #[test]
    fn a_missing_program_or_model_is_told_apart_by_type() {
        let (_s, out) =
            Services::start_each(&[profile_with_service("no-such-llama-server", "/x")], 1, 1)
                .unwrap();
        let e = out.into_iter().next().unwrap().unwrap_err();
        assert!(ServiceError::is_missing(&e), "{e:#}");
        assert!(format!("{e:#}").contains("no-such-llama-server is not installed"));
        let (_s, out) =
            Services::start_each(&[profile_with_service("true", "/no/such/model.gguf")], 1, 1)
                .unwrap();
        let e = out.into_iter().next().unwrap().unwrap_err();
        assert!(ServiceError::is_missing(&e), "{e:#}");
        assert!(format!("{e:#}").contains("the model /no/such/model.gguf is not installed"));
        // A program that starts and dies is a failure, not a missing install.
        let model = tempfile::NamedTempFile::new().unwrap();
        let (_s, out) = Services::start_each(
            &[profile_with_service(
                "false",
                &model.path().display().to_string(),
            )],
            1,
            1,
        )
        .unwrap();
        let e = out.into_iter().next().unwrap().unwrap_err();
        assert!(!ServiceError::is_missing(&e), "{e:#}");
    }
}
