//! The drill's folder, its host profiles, and typist run in it as a child process, as a
//! user would; what the children leave behind (processes, workspaces) is counted.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::options::DrillOptions;
use super::report::DrillReport;

/// The pause between two looks for processes a drill left behind.
const SWEEP_INTERVAL: Duration = Duration::from_millis(50);
/// How long processes killed by a drill have to disappear before they count as leftovers.
const SWEEP_GRACE: Duration = Duration::from_secs(3);
/// The same through VS Code: code-server's server process ends once its parent's
/// channel closes, which took over 3 s on the loaded 2-core machine (the SIGKILL test
/// of `tests/suite/vscode.rs` gives it 10 s too).
const SWEEP_GRACE_VSCODE: Duration = Duration::from_secs(10);

const HOST_LANGUAGES: &str = "languages = [\"python\", \"javascript\", \"typescript\"]\nextensions = [\"py\", \"js\", \"ts\", \"mjs\", \"cjs\"]\n";

fn write_profile(editors: &Path, name: &str, host_args: &[String], timeout_ms: u64) -> Result<()> {
    let toml = format!(
        "name = \"{name}\"\ncommand = \"@typist\"\nargs = {host_args:?}\ndialect = \"inline\"\n{HOST_LANGUAGES}request_timeout_ms = {timeout_ms}\nrestart_after_timeouts = 3\n"
    );
    std::fs::write(editors.join(format!("{name}.toml")), toml)
        .with_context(|| format!("cannot write the drill's profile in {}", editors.display()))
}

/// Whether a process's start-up environment (`/proc/PID/environ`: `NAME=value` entries
/// separated by NULs) has a `TMPDIR` that is `tmp` or a folder inside it.
fn holds_tmpdir(environ: &[u8], tmp: &Path) -> bool {
    let tmp = tmp.as_os_str().as_encoded_bytes();
    environ.split(|&b| b == 0).any(|v| {
        v.strip_prefix(b"TMPDIR=")
            .and_then(|d| d.strip_prefix(tmp))
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(b"/"))
    })
}

/// This process and its ancestors: the shell or wrapper that started `typist drill --keep
/// DIR` names the drill's folder too, and is no leftover of it.
fn own_line() -> Vec<u32> {
    let mut line = vec![std::process::id()];
    while let Some(&pid) = line.last() {
        let parent = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                let (_, rest) = s.rsplit_once(')')?;
                rest.split_whitespace().nth(1)?.parse::<u32>().ok()
            })
            .filter(|&p| p >= 1 && !line.contains(&p));
        match parent {
            // PID 1 may be the wrapper too (a container's `sh -c 'typist drill …'`).
            Some(1) => {
                line.push(1);
                break;
            }
            Some(p) => line.push(p),
            None => break,
        }
    }
    line
}

/// The drill's folder and typist run inside it as a child process.
pub(super) struct Drill {
    pub(super) exe: PathBuf,
    /// Every process started for the drill names this folder on its command line.
    pub(super) dir: PathBuf,
    /// The children's `TMPDIR`: what is left in it is a leftover workspace.
    pub(super) tmp: PathBuf,
    pub(super) opts: DrillOptions,
    /// The removed temporary folder, when `--keep` is not given.
    _holder: Option<tempfile::TempDir>,
}

impl Drill {
    /// Makes the drill's folder (`opts.keep` or a temporary one) with `tmp/` and
    /// `editors/` in it.
    pub(super) fn new(opts: &DrillOptions) -> Result<Drill> {
        let exe = std::env::current_exe().context("cannot find typist's own executable")?;
        let mut holder = None;
        let dir = match &opts.keep {
            Some(d) => {
                std::fs::create_dir_all(d)
                    .with_context(|| format!("cannot create {}", d.display()))?;
                d.canonicalize()?
            }
            None => holder
                .insert(tempfile::Builder::new().prefix("typist-drill-").tempdir()?)
                .path()
                .canonicalize()?,
        };
        let tmp = dir.join("tmp");
        for d in [&tmp, &dir.join("editors")] {
            std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
        }
        Ok(Drill {
            exe,
            dir,
            tmp,
            opts: opts.clone(),
            _holder: holder,
        })
    }

    /// The two host profiles: `drill-faults` with the fault mix logged to `log`, and
    /// `drill-plain` without faults.
    pub(super) fn write_profiles(&self, log: &Path) -> Result<()> {
        let editors = self.dir.join("editors");
        let host = |extra: &[String]| -> Vec<String> {
            let mut a: Vec<String> = ["host", "--backend", "ngram"].map(String::from).to_vec();
            a.extend_from_slice(extra);
            a
        };
        write_profile(
            &editors,
            "drill-faults",
            &host(&[
                "--fault-mix".into(),
                self.opts.fault_mix.to_string(),
                "--fault-seed".into(),
                self.opts.seed.to_string(),
                "--fault-log".into(),
                log.display().to_string(),
            ]),
            300,
        )?;
        // No faults; the log flag only marks the drill's servers for the process search.
        write_profile(
            &editors,
            "drill-plain",
            &host(&[
                "--fault-log".into(),
                self.dir.join("plain.jsonl").display().to_string(),
            ]),
            5_000,
        )
    }

    /// Samples the drill's plan with `typist sample`; returns its path.
    pub(super) fn sample_plan(&self) -> Result<PathBuf> {
        let plan = self.dir.join("plan.jsonl");
        self.finish(
            &[
                "sample".into(),
                "--dataset".into(),
                self.opts.dataset.display().to_string(),
                "--rate".into(),
                self.opts.rate.to_string(),
                "--seed".into(),
                self.opts.seed.to_string(),
                "--out".into(),
                plan.display().to_string(),
            ],
            "sampling the drill's plan",
        )?;
        Ok(plan)
    }

    pub(super) fn typist(&self) -> Command {
        let mut c = Command::new(&self.exe);
        c.env("TMPDIR", &self.tmp)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c
    }

    pub(super) fn run_args(&self, plan: &Path, assistant: &str, out: &Path) -> Vec<String> {
        [
            "run",
            "--config",
            "/dev/null",
            "--quiet",
            "--no-latency",
            "--max-restarts",
            "1000000",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([
            "--dataset".into(),
            self.opts.dataset.display().to_string(),
            "--plan".into(),
            plan.display().to_string(),
            "--editors".into(),
            self.dir.join("editors").display().to_string(),
            "--assistant".into(),
            assistant.into(),
            "--jobs".into(),
            self.opts.jobs.to_string(),
            "--out".into(),
            out.display().to_string(),
        ])
        .chain(match self.opts.editor {
            crate::editor::EditorKind::Typist => vec![],
            e => vec![
                "--editor".into(),
                e.as_str().into(),
                "--key-interval-ms".into(),
                self.opts.key_interval_ms.to_string(),
            ],
        })
        .collect()
    }

    /// Runs typist to its end; exit 0 and 3 (an assistant that answered nothing) are runs
    /// that finished.
    pub(super) fn finish(&self, args: &[String], what: &str) -> Result<()> {
        let o = self
            .typist()
            .args(args)
            .output()
            .with_context(|| format!("cannot start {}", self.exe.display()))?;
        if !matches!(o.status.code(), Some(0 | 3)) {
            bail!(
                "{what}: typist {} ended with {}: {}",
                args.join(" "),
                o.status,
                String::from_utf8_lossy(&o.stderr).trim()
            );
        }
        Ok(())
    }

    /// Processes still running that were started for this drill: their command line
    /// names the drill's folder, or their environment's `TMPDIR` is the children's or a
    /// folder in it (inherited by everything typist starts; Neovim gets one in its
    /// session's folder, and what it starts inherits the children's again).
    fn leftovers(&self) -> Vec<(u32, String)> {
        let marker = self.dir.display().to_string();
        let mine = own_line();
        let mut out = Vec::new();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return out;
        };
        for e in entries.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if mine.contains(&pid) {
                continue;
            }
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| {
                    s.rsplit_once(')')
                        .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
                })
                .unwrap_or(true);
            let inherited = || {
                let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
                holds_tmpdir(&env, &self.tmp)
            };
            if !zombie && (cmd.contains(&marker) || inherited()) {
                out.push((pid, cmd));
            }
        }
        out
    }

    /// Waits up to the editor's grace for the drill's processes to end, then kills and
    /// counts the rest.
    pub(super) fn sweep_leftovers(&self, report: &mut DrillReport) {
        let grace = if self.opts.editor == crate::editor::EditorKind::Vscode {
            SWEEP_GRACE_VSCODE
        } else {
            SWEEP_GRACE
        };
        let deadline = Instant::now() + grace;
        let mut left = self.leftovers();
        while !left.is_empty() && Instant::now() < deadline {
            std::thread::sleep(SWEEP_INTERVAL);
            left = self.leftovers();
        }
        for (pid, cmd) in &left {
            report
                .examples
                .push(format!("left running: pid {pid}: {cmd}"));
            crate::os::signal(*pid, libc::SIGKILL);
        }
        report.leftover_processes += left.len() as u64;
    }

    pub(super) fn count_workspaces(&self, report: &mut DrillReport) {
        let n = std::fs::read_dir(&self.tmp)
            .map(|d| d.flatten().count())
            .unwrap_or(0);
        report.leftover_workspaces += n as u64;
        if n > 0 {
            report
                .examples
                .push(format!("{n} folder(s) left in {}", self.tmp.display()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{holds_tmpdir, own_line};
    use std::path::Path;

    #[test]
    fn the_drills_own_line_of_parents_is_never_a_leftover() {
        let line = own_line();
        assert_eq!(line[0], std::process::id());
        let parent = std::os::unix::process::parent_id();
        assert!(parent == 0 || line.contains(&parent), "{line:?}");
        assert!(line.iter().filter(|&&p| p == 1).count() <= 1, "{line:?}");
    }

    #[test]
    fn a_process_is_the_drills_when_its_tmpdir_is_the_drills_or_inside_it() {
        let tmp = Path::new("/d/tmp");
        let env = |v: &str| format!("HOME=/h\0{v}\0PATH=/bin\0").into_bytes();
        assert!(holds_tmpdir(&env("TMPDIR=/d/tmp"), tmp));
        assert!(holds_tmpdir(&env("TMPDIR=/d/tmp/typist-9-neovim/run"), tmp));
        assert!(!holds_tmpdir(&env("TMPDIR=/d/tmpx"), tmp));
        assert!(!holds_tmpdir(&env("TMPDIR=/tmp"), tmp));
        assert!(!holds_tmpdir(&env("XTMPDIR=/d/tmp"), tmp));
        assert!(!holds_tmpdir(b"", tmp));
    }
}
