//! Managed model services: the HTTP servers a profile needs behind its language server
//! (llama.cpp's `llama-server` with a model, `typist serve-model`), declared in the
//! profile's `[service]` (or several `[[service]]`), started once per run on free
//! 127.0.0.1 ports before the first session, shared by every worker, and stopped at the
//! end (also on Ctrl-C, an error or a panic: dropping [`Services`] kills them; Linux's
//! parent-death signal covers a SIGKILL of typist).
//!
//! Placeholders, in the service's args and health URL and in the profile's args,
//! environment, initialization options, settings, request parameters and home and
//! workspace files: `{port}` (the profile's last service), `{port.NAME}` (the service
//! called NAME), `{slots}` (parallel request slots: the run's `--jobs`) and `{servers}`
//! (the folder servers and models are installed in).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::editor::Profile;
use crate::editor::profile::OneOrMany;
#[cfg(doc)]
use crate::editor::profile::ServiceSpec;

/// A running service.
struct Running {
    spec: crate::editor::profile::ServiceSpec,
    port: u16,
    child: std::process::Child,
    describe: Value,
}

/// The services of one run; dropping it stops them all.
pub struct Services {
    running: Vec<Running>,
    _logs: tempfile::TempDir,
}

/// The folder servers and models are installed in (`{servers}`).
fn servers_dir() -> PathBuf {
    crate::editor::profile::server_prefixes()
        .into_iter()
        .find(|p| p.is_dir())
        .and_then(|p| p.canonicalize().ok())
        .unwrap_or_else(|| PathBuf::from(".servers"))
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
    p.env = p.env.iter().map(|(k, v)| (k.clone(), fill(v, vars))).collect();
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

fn sha256_file(path: &Path) -> Result<String> {
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
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

impl Services {
    /// Starts the services `profiles` need (each name once) and returns the profiles with
    /// their placeholders filled. `slots`: parallel requests the services should serve.
    pub fn start(profiles: &[Profile], slots: usize) -> Result<(Services, Vec<Profile>)> {
        let logs = tempfile::Builder::new().prefix("typist-services-").tempdir()?;
        let mut services = Services {
            running: Vec::new(),
            _logs: logs,
        };
        let mut vars: BTreeMap<String, String> = BTreeMap::new();
        vars.insert("slots".into(), slots.max(1).to_string());
        vars.insert("servers".into(), servers_dir().display().to_string());
        let mut out = Vec::new();
        for p in profiles {
            let mut own = vars.clone();
            for spec in p.service.as_ref().map(OneOrMany::list).unwrap_or_default() {
                let port = match services.running.iter().find(|r| r.spec.name == spec.name) {
                    Some(r) if r.spec == *spec => r.port,
                    Some(_) => bail!(
                        "profile {}: two different services are called {:?}",
                        p.name,
                        spec.name
                    ),
                    None => services.launch(spec, &own)?,
                };
                own.insert(format!("port.{}", spec.name), port.to_string());
                own.insert("port".into(), port.to_string());
                vars.insert(format!("port.{}", spec.name), port.to_string());
            }
            out.push(fill_profile(p, &own));
        }
        Ok((services, out))
    }

    fn launch(
        &mut self,
        spec: &crate::editor::profile::ServiceSpec,
        vars: &BTreeMap<String, String>) -> Result<u16> {
        let program = crate::editor::profile::resolve_program(&spec.command).with_context(|| {
            format!(
                "service {}: {} is not installed (scripts/install-servers.sh installs the local model's)",
                spec.name, spec.command
            )
        })?;
        let port = free_port()?;
        let mut vars = vars.clone();
        vars.insert("port".into(), port.to_string());
        let args: Vec<String> = spec.args.iter().map(|a| fill(a, &vars)).collect();
        let health = fill(&spec.health, &vars);
        let log = self._logs.path().join(format!("{}.log", spec.name));
        let log_file = std::fs::File::create(&log)?;
        let mut cmd = std::process::Command::new(&program);
        cmd.args(&args)
            .stdin(std::process::Stdio::null())
            .stdout(log_file.try_clone()?)
            .stderr(log_file);
        own_group_dying_with_parent(&mut cmd);
        tracing::info!(service = %spec.name, port, "starting {}", program.display());
        let child = cmd
            .spawn()
            .with_context(|| format!("service {}: cannot start {}", spec.name, program.display()))?;
        let model = match &spec.model {
            Some(m) => {
                let path = PathBuf::from(fill(m, &vars));
                json!({"path": path.display().to_string(), "sha256": sha256_file(&path)?})
            }
            None => Value::Null,
        };
        let version = spec.version_args.as_ref().and_then(|va| {
            let o = std::process::Command::new(&program).args(va).output().ok()?;
            let text = String::from_utf8_lossy(&o.stdout).to_string()
                + &String::from_utf8_lossy(&o.stderr);
            text.lines()
                .find(|l| !l.trim().is_empty())
                .map(|l| l.trim().to_string())
        });
        self.running.push(Running {
            spec: spec.clone(),
            port,
            child,
            describe: json!({
                "name": spec.name,
                "command": program.display().to_string(),
                "args": args,
                "port": port,
                "version": version,
                "model": model,
            }),
        });
        let deadline = Instant::now() + Duration::from_millis(spec.startup_timeout_ms);
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(2)))
            .http_status_as_error(false)
            .build()
            .into();
        loop {
            if let Ok(r) = agent.get(&health).call()
                && r.status().is_success()
            {
                return Ok(port);
            }
            let r = self.running.last_mut().expect("just pushed");
            if let Ok(Some(status)) = r.child.try_wait() {
                bail!(
                    "service {} exited before it was ready ({status}); its last lines:\n{}",
                    spec.name,
                    tail(&log, 15)
                );
            }
            if Instant::now() >= deadline {
                bail!(
                    "service {} was not ready at {health} within {} ms; its last lines:\n{}",
                    spec.name,
                    spec.startup_timeout_ms,
                    tail(&log, 15)
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// What the manifest records of each service: command, args, port, version, model
    /// file and its sha256.
    pub fn describe(&self) -> Vec<Value> {
        self.running.iter().map(|r| r.describe.clone()).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.running.is_empty()
    }
}

/// The child leads its own process group and gets SIGKILL when typist dies, even by
/// SIGKILL (Linux's parent-death signal).
fn own_group_dying_with_parent(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    #[cfg(target_os = "linux")]
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

impl Drop for Services {
    fn drop(&mut self) {
        for r in self.running.iter_mut().rev() {
            let pid = r.child.id() as i32;
            if matches!(r.child.try_wait(), Ok(None)) {
                // SAFETY: signals the service's own process group, which it leads (it is
                // alive: not reaped, so the pid is not reused).
                unsafe {
                    libc::killpg(pid, libc::SIGTERM);
                }
                let deadline = Instant::now() + Duration::from_secs(3);
                while matches!(r.child.try_wait(), Ok(None)) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(20));
                }
                if matches!(r.child.try_wait(), Ok(None)) {
                    // SAFETY: as above.
                    unsafe {
                        libc::killpg(pid, libc::SIGKILL);
                    }
                    let _ = r.child.wait();
                }
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
        let v = fill_value(&json!({"a": ["{port}", 1], "b": {"c": "{port.llama}"}}), &vars);
        assert_eq!(v, json!({"a": ["4242", 1], "b": {"c": "4343"}}));
        assert_eq!(fill("{unknown}", &vars), "{unknown}");
    }
}
