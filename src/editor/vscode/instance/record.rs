//! `typist record --editor vscode`: code-server started for the person (on 127.0.0.1,
//! password authentication; they open its address in their own browser, through an SSH
//! tunnel when it runs elsewhere) with typist's recorder extension
//! (`src/editor/vscode/typist-recorder`, packed by the install script) and nothing of
//! theirs: its user data, extensions and `HOME` are in a scratch folder. The recorder
//! writes the same log as Neovim's (`neovim/recorder.lua`); it ends with the command
//! Typist: Stop Recording, with Ctrl-C on typist's terminal (typist asks the recorder to
//! write each file's last text and waits for it), or with code-server's exit (the log
//! kept unchecked).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use super::extensions::install;
use super::launch::{Scratch, random_password, start_code_server, version_of};
use super::{INSTALL_HINT, Setup, code_server_program, packed_vsix};
use crate::editor::error::{EditorError, SessionError};
use crate::editor::options::{RecordLog, RecordOptions};

/// How long the recorder has to write the last texts after typist asked it to end.
const END_WITHIN: Duration = Duration::from_secs(10);
/// The pause between two looks at the log.
const POLL: Duration = Duration::from_millis(200);
/// Seconds code-server keeps a window's extension host after the window went.
const GRACE_S: u32 = 60;
/// The line the recorder ends its log with.
const END_LINE: &str = "{\"ev\":\"end\"";

/// typist's recorder extension, as the install script packs it.
pub fn recorder_vsix() -> Option<PathBuf> {
    packed_vsix("typist-recorder")
}

/// How the recording ended.
enum Ended {
    /// The recorder wrote its end (the command, or typist asked on Ctrl-C).
    Recorder,
    /// code-server exited first.
    Exited(String),
    /// Ctrl-C with no window recording, or twice, or the recorder did not answer.
    Stopped(&'static str),
}

/// Runs code-server for the person until the recording ends; the recorder's log.
pub async fn record(opts: &RecordOptions) -> Result<RecordLog, SessionError> {
    let code_server = code_server_program().ok_or_else(|| SessionError::Missing {
        server: "vscode".into(),
        command: "code-server".into(),
        hint: INSTALL_HINT.into(),
    })?;
    let vsix = recorder_vsix().ok_or_else(|| SessionError::Missing {
        server: "vscode".into(),
        command: ".servers/vscode/typist-recorder.vsix".into(),
        hint: "run scripts/install-servers.sh (it packs typist's VS Code extensions, the recorder among them)".into(),
    })?;
    let root = std::path::absolute(&opts.workspace).map_err(SessionError::file(&opts.workspace))?;
    let mut open = Vec::new();
    for f in &opts.files {
        let p = if f.is_absolute() {
            f.clone()
        } else {
            root.join(f)
        };
        let rel = p.strip_prefix(&root).map_err(|_| {
            EditorError::Failed(format!(
                "{}: not inside the workspace {}",
                f.display(),
                root.display()
            ))
        })?;
        if !p.is_file() {
            return Err(EditorError::Failed(format!(
                "{}: no such file (VS Code opens only files that exist: create it first, or open it from VS Code's explorer)",
                f.display()
            ))
            .into());
        }
        open.push(rel.to_string_lossy().to_string());
    }
    let setup = Setup {
        extensions: vec![vsix.display().to_string()],
        settings: json!({
            "workbench.startupEditor": "none",
            "extensions.autoCheckUpdates": false,
            "extensions.autoUpdate": false,
            "telemetry.telemetryLevel": "off",
        }),
        signin: None,
        github: false,
    };
    let s = Scratch::make(&setup)?;
    install(
        &code_server,
        &s.base_args,
        &s.env,
        &s.dir,
        &s.exts,
        &setup.extensions[0],
    )
    .await?;
    let version = version_of(&code_server, &s.env, &s.dir).await?;
    let log = s.dir.join("record.jsonl");
    std::fs::write(&log, "").map_err(SessionError::file(&log))?;
    let control = s.dir.join("record.end");
    let t0 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let d = |p: &Path| p.display().to_string();
    let env = vec![
        ("TYPIST_RECORD_LOG".to_string(), d(&log)),
        ("TYPIST_RECORD_ROOT".to_string(), d(&root)),
        ("TYPIST_RECORD_CONTROL".to_string(), d(&control)),
        ("TYPIST_RECORD_T0".to_string(), t0.to_string()),
        (
            "TYPIST_RECORD_OPEN".to_string(),
            serde_json::to_string(&open).unwrap_or_else(|_| "[]".into()),
        ),
    ];
    let password = random_password()?;
    // A window gone (its tab closed, the tunnel cut) lets its extension host go a minute
    // later, and another window takes over the recording.
    let args = [
        format!("--bind-addr=127.0.0.1:{}", opts.port),
        format!("--reconnection-grace-time={GRACE_S}"),
    ];
    let (server, port) = start_code_server(&code_server, &s, &password, &args, &env).await?;
    let url = format!(
        "http://127.0.0.1:{port}/?folder={}",
        super::super::launch::urlencode(&d(&root))
    );
    eprintln!(
        "typist record: VS Code {version} is ready for you at\n  {url}\n  password: {password}\nOpen it in your browser (from another machine: ssh -L {port}:127.0.0.1:{port} to this one first). End the recording with the command Typist: Stop Recording (F1), or Ctrl-C here."
    );
    let ended = wait_for_end(&log, &control, server.exit.clone()).await?;
    match &ended {
        Ended::Recorder => {}
        Ended::Exited(why) => tracing::warn!("code-server (recording) exited: {why}"),
        Ended::Stopped(why) => tracing::warn!("recording stopped: {why}"),
    }
    drop(server);
    let text = std::fs::read_to_string(&log).map_err(SessionError::file(&log))?;
    drop(s);
    Ok(RecordLog {
        log: text,
        editor: format!("vscode {version}"),
    })
}

/// Waits until the recording ends: the recorder's end line in `log`, code-server's exit
/// (`exit`), or Ctrl-C (`control` written for the recorder to end, at most
/// `END_WITHIN` waited for it; at once when no window records or on a second Ctrl-C).
async fn wait_for_end(
    log: &Path,
    control: &Path,
    mut exit: tokio::sync::watch::Receiver<Option<crate::lsp::ExitInfo>>,
) -> Result<Ended, SessionError> {
    let mut seen = 0u64;
    let mut asked: Option<Instant> = None;
    let mut interrupt =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
            .map_err(|e| EditorError::Failed(format!("cannot watch for Ctrl-C: {e}")))?;
    Ok(loop {
        if ended_in(log, &mut seen) {
            break Ended::Recorder;
        }
        if let Some(at) = asked
            && at.elapsed() > END_WITHIN
        {
            break Ended::Stopped("the recorder did not write its end within 10 s");
        }
        tokio::select! {
            _ = tokio::time::sleep(POLL) => {}
            r = exit.wait_for(Option::is_some) => {
                let why = r
                    .ok()
                    .and_then(|e| e.as_ref().map(|e| e.status.to_string()))
                    .unwrap_or_default();
                break if ended_in(log, &mut seen) {
                    Ended::Recorder
                } else {
                    Ended::Exited(why)
                };
            }
            c = interrupt.recv() => {
                if c.is_none() || asked.is_some() {
                    break Ended::Stopped("Ctrl-C twice");
                }
                if !recording(&log.with_extension("jsonl.owner")) {
                    break Ended::Stopped("no window was recording");
                }
                eprintln!("typist record: ending: the recorder writes each file's last text (Ctrl-C again to stop at once)");
                std::fs::write(control, "end").map_err(SessionError::file(control))?;
                asked = Some(Instant::now());
            }
        }
    })
}

/// Whether a window records: the owner file names a live extension host's process.
fn recording(owner: &Path) -> bool {
    std::fs::read_to_string(owner)
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .is_some_and(crate::os::alive)
}

/// Whether the log has gained its end line since `seen` (its length when last read).
fn ended_in(log: &Path, seen: &mut u64) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(log) else {
        return false;
    };
    let Ok(len) = f.metadata().map(|m| m.len()) else {
        return false;
    };
    if len <= *seen {
        return false;
    }
    // From a little before what was read, where the end line may have begun.
    let from = seen.saturating_sub(END_LINE.len() as u64);
    let mut tail = Vec::new();
    if f.seek(SeekFrom::Start(from)).is_err() || f.read_to_end(&mut tail).is_err() {
        return false;
    }
    *seen = len;
    memchr::memmem::find(&tail, END_LINE.as_bytes()).is_some()
}
