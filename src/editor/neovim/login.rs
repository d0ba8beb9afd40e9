//! `typist login --editor neovim`: the plugin signed in once in a Neovim started as a
//! run's are (the same program, the profile's plugin, the same sandbox, a sandboxed
//! `HOME`), and the files its `[signin] files` name saved as the vault entry.
//!
//! Scripted (`--command`, `--answer`, or the profile's `[signin] command`): the answers
//! are put in Neovim's typeahead (`nvim_feedkeys`, with a few `<Esc>` after them so that
//! a prompt with no answer left is cancelled, never waited on) and the commands run in
//! the same Lua call, so that each `input()`/`inputsecret()`/`vim.ui.input()` the
//! commands open reads the next answer as if typed; what was not read is taken out of
//! the typeahead before the call returns (never run as normal-mode keys). Then the
//! profile's `neovim_status` is asked until it says signed in, an error is shown, or
//! the timeout passes. What Neovim said (its message history) comes back with every
//! answer scrubbed.
//!
//! Interactive: `nvim --clean -n -i NONE` on the person's terminal, with the same
//! environment, the plugin sourced and the sign-in command run (`-c`); once the person
//! quits, a headless Neovim with the same `HOME` asks the status.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rmpv::Value as Mp;

use super::launch::Sandbox;
use super::protocol::mp_to_json;
use super::{NeovimSession, program};
use crate::editor::error::{EditorError, SessionError};
use crate::editor::kind::EditorApp;
use crate::editor::options::SessionOptions;
use crate::editor::options::{LoginDone, LoginScript};
use crate::editor::profile::Profile;
use crate::editor::workspace;
use crate::vault::{self, Entry, Part};

/// How often the status is asked while the sign-in settles.
const STATUS_POLL: Duration = Duration::from_millis(100);
/// `<Esc>`s fed after the answers: a prompt left with no answer is cancelled.
const GUARD_ESCAPES: usize = 4;

/// Runs the commands with the answers in the typeahead; returns the message history,
/// the commands' errors and how many keys were left unread.
const RUN: &str = r#"
local cmds, answers, guards = ...
vim.cmd('silent! messages clear')
local keys = ''
for _, a in ipairs(answers) do keys = keys .. a .. '\r' end
keys = keys .. string.rep('\27', guards)
vim.api.nvim_feedkeys(keys, 'nt', false)
local errs = {}
for _, c in ipairs(cmds) do
  local ok, e = pcall(vim.cmd, c)
  if not ok then errs[#errs + 1] = tostring(e) end
end
local left = 0
while vim.fn.getchar(0) ~= 0 do left = left + 1 end
local said, errors = {}, {}
for _, m in ipairs(typist.messages()) do
  said[#said + 1] = m[2]
  if ({ emsg = true, echoerr = true, lua_error = true, rpc_error = true })[m[1]] then
    errors[#errors + 1] = m[2]
  end
end
for _, e in ipairs(errs) do
  e = e:gsub('^.-Vim%(?%w*%)?:', '')
  if not vim.tbl_contains(said, e) then
    errors[#errors + 1] = e
    said[#said + 1] = e
  elseif not vim.tbl_contains(errors, e) then
    errors[#errors + 1] = e
  end
end
return { said, errors, math.max(left - guards, 0) }
"#;

/// The profile's status chunk: `true`, or why not.
pub(super) const STATUS: &str = r#"
local chunk = ...
local f, err = loadstring(chunk, '[signin] neovim_status')
if not f then return "its [signin] neovim_status does not compile: " .. tostring(err) end
local ok, r = pcall(f)
if not ok then return "its [signin] neovim_status failed: " .. tostring(r) end
if r == true then return true end
if r == nil or r == false then return 'the plugin says it is not signed in' end
return tostring(r)
"#;

fn failed(m: String) -> SessionError {
    EditorError::Failed(m).into()
}

/// `typist login --editor neovim --assistant NAME`: see the module's comment.
pub async fn login(
    app: &EditorApp,
    profile: &Profile,
    entry: &Entry,
    script: LoginScript,
) -> Result<LoginDone, SessionError> {
    let signin = profile.signin.as_ref().ok_or_else(|| {
        failed(format!(
            "{}: its profile has no [signin]: it does not sign in",
            profile.name
        ))
    })?;
    if signin.github {
        return Err(failed(format!(
            "{}: signs in with GitHub: run `typist login copilot`",
            profile.name
        )));
    }
    if signin.files.is_empty() {
        return Err(failed(format!(
            "{}: its profile's [signin] names no files: typist cannot tell what of the sign-in to keep (add `files = [...]`, relative to HOME)",
            profile.name
        )));
    }
    for a in &script.answers {
        crate::secrets::register(a);
    }
    let commands = if script.commands.is_empty() {
        signin.command.iter().cloned().collect()
    } else {
        script.commands.clone()
    };
    let (ws, shown) = if script.interactive {
        interactive(app, profile, &commands, script.timeout).await?
    } else {
        if commands.is_empty() {
            return Err(failed(format!(
                "{}: no sign-in command: give --command, or sign in at a terminal (its profile's [signin] has no command)",
                profile.name
            )));
        }
        scripted(app, profile, &commands, &script).await?
    };
    let home = ws.path().join("home");
    let meta = entry
        .save(
            &[Part {
                name: vault::HOME,
                root: &home,
                paths: signin.files.clone(),
            }],
            commands,
        )
        .map_err(|e| failed(format!("{}: cannot save the sign-in: {e:#}", entry.name())))?;
    if entry.files(vault::HOME).is_empty() {
        let _ = entry.remove();
        return Err(failed(format!(
            "{}: the plugin says it is signed in, but none of its [signin] files ({}) exists under HOME: nothing to keep",
            profile.name,
            signin.files.join(", ")
        )));
    }
    Ok(LoginDone { meta, shown })
}

/// A login's Neovim: the run's, with a sandboxed `HOME` whatever the profile says.
fn login_profile(profile: &Profile) -> Profile {
    let mut p = profile.clone();
    p.sandbox_home = true;
    p
}

/// The commands run in an embedded Neovim with the answers typed into their prompts;
/// returns the session's folder (its `home`) and what Neovim showed.
async fn scripted(
    app: &EditorApp,
    profile: &Profile,
    commands: &[String],
    script: &LoginScript,
) -> Result<(tempfile::TempDir, Vec<String>), SessionError> {
    let deadline = Instant::now() + script.timeout;
    let chunk = status_chunk(profile);
    let mut s =
        NeovimSession::start(&login_profile(profile), app, SessionOptions::default()).await?;
    let args = vec![
        Mp::Array(commands.iter().map(|c| Mp::from(c.as_str())).collect()),
        Mp::Array(
            script
                .answers
                .iter()
                .map(|a| Mp::from(a.as_str()))
                .collect(),
        ),
        Mp::from(GUARD_ESCAPES as i64),
    ];
    let within = deadline.saturating_duration_since(Instant::now());
    let ran = s
        .call(
            "nvim_exec_lua",
            vec![Mp::from(RUN), Mp::Array(args)],
            within.max(Duration::from_secs(1)),
        )
        .await?;
    let ran = mp_to_json(&ran);
    let texts = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|e| e.as_str())
                    .flat_map(lines)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut shown = texts(&ran[0]);
    let errors = texts(&ran[1]);
    if ran[2].as_i64().unwrap_or(0) > 0 {
        shown.push(format!(
            "({} typed characters were not read by any prompt)",
            ran[2]
        ));
    }
    // The sign-in may settle later (a token exchanged in the background): asked until
    // it says signed in, an error is shown, or the time is up.
    let why = loop {
        let status = s.lua(STATUS, vec![Mp::from(chunk.as_str())]).await?;
        let why = match status {
            Mp::Boolean(true) => None,
            other => Some(other.as_str().unwrap_or("not signed in").to_string()),
        };
        let Some(why) = why else { break None };
        if !errors.is_empty() || Instant::now() >= deadline {
            break Some(why);
        }
        tokio::time::sleep(STATUS_POLL).await;
    };
    let dir = s.into_folder().await;
    if let Some(why) = why {
        let said = if shown.is_empty() {
            String::new()
        } else {
            format!(" (neovim showed: {})", shown.join(" | "))
        };
        return Err(SessionError::NotSignedIn {
            server: profile.name.clone(),
            message: format!("{}{said}", scrub(&why)),
        });
    }
    Ok((dir, shown))
}

/// The profile's status chunk, or one that says signed in once the files exist.
fn status_chunk(profile: &Profile) -> String {
    let signin = profile.signin.as_ref();
    if let Some(c) = signin.and_then(|s| s.neovim_status.clone()) {
        return c;
    }
    let files: Vec<String> = signin
        .map(|s| s.files.iter().map(|f| format!("{f:?}")).collect())
        .unwrap_or_default();
    format!(
        "for _, f in ipairs({{{}}}) do if vim.uv.fs_stat(vim.env.HOME .. '/' .. f) then return true end end return 'none of its [signin] files exists'",
        files.join(", ")
    )
}

fn scrub(s: &str) -> String {
    crate::secrets::scrub(s).into_owned()
}

fn lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(scrub)
        .collect()
}

/// The person signs in at the terminal in `nvim` (not embedded), with the run's
/// environment; the status is then asked by a headless Neovim with the same `HOME`.
async fn interactive(
    app: &EditorApp,
    profile: &Profile,
    commands: &[String],
    timeout: Duration,
) -> Result<(tempfile::TempDir, Vec<String>), SessionError> {
    let nvim = program().ok_or_else(|| SessionError::Missing {
        server: "neovim".into(),
        command: "nvim".into(),
        hint: super::launch::INSTALL_HINT.into(),
    })?;
    let profile = login_profile(profile);
    let app = super::launch::with_profile_plugin(app, &profile);
    let ws = workspace::prepare(&profile, &SessionOptions::default())?;
    let sandbox = Sandbox::of(&ws)?;
    let config = app.config.clone().map(PathBuf::from);
    let mut args = nvim_args(&[], config.as_deref());
    for c in commands {
        args.push("-c".into());
        args.push(c.clone());
    }
    let status = tokio::process::Command::new(&nvim)
        .args(&args)
        .envs(sandbox.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&ws.root)
        .status()
        .await
        .map_err(|e| failed(format!("cannot start {}: {e}", nvim.display())))?;
    if !status.success() {
        tracing::info!(%status, "neovim (interactive sign-in) ended");
    }
    status_after(&nvim, &profile, &ws, &sandbox, config.as_deref(), timeout).await?;
    let workspace::Workspace { dir, signin, .. } = ws;
    drop(signin);
    Ok((dir, Vec::new()))
}

/// Neovim's arguments with no user configuration, swap or shada file, `first` before
/// them, and the plugin's `config` sourced.
fn nvim_args(first: &[&str], config: Option<&Path>) -> Vec<String> {
    let mut args: Vec<String> = first
        .iter()
        .chain(&["--clean", "-n", "-i", "NONE"])
        .map(|s| s.to_string())
        .collect();
    if let Some(c) = config {
        args.push("-c".into());
        args.push(format!("source {}", vim_escape(c)));
    }
    args
}

/// After the person's `nvim` has ended: a headless Neovim with the same `HOME` and the
/// plugin loaded asks the profile's status; not signed in is `NotSignedIn` in the
/// plugin's words.
async fn status_after(
    nvim: &Path,
    profile: &Profile,
    ws: &workspace::Workspace,
    sandbox: &Sandbox,
    config: Option<&Path>,
    timeout: Duration,
) -> Result<(), SessionError> {
    let chunk = status_chunk(profile);
    let chunk_file = ws.dir.path().join("status.lua");
    std::fs::write(
        &chunk_file,
        format!(
            "local chunk = {chunk:?}\n{}",
            STATUS.replace("local chunk = ...", "")
        ),
    )
    .map_err(SessionError::file(&chunk_file))?;
    let mut check = nvim_args(&["--headless"], config);
    check.push("-c".into());
    check.push(format!(
        "lua local s = dofile({:?}) io.stdout:write(s == true and '\\nSIGNED-IN\\n' or ('\\nNOT:' .. tostring(s) .. '\\n'))",
        chunk_file.display().to_string()
    ));
    check.push("-c".into());
    check.push("qa!".into());
    let out = tokio::time::timeout(
        timeout.max(Duration::from_secs(10)),
        tokio::process::Command::new(nvim)
            .args(&check)
            .envs(sandbox.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&ws.root)
            .stdin(std::process::Stdio::null())
            .output(),
    )
    .await
    .map_err(|_| failed("neovim: the status check did not end".into()))?
    .map_err(|e| failed(format!("cannot start {}: {e}", nvim.display())))?;
    let said = String::from_utf8_lossy(&out.stdout);
    if said.lines().any(|l| l == "SIGNED-IN") {
        return Ok(());
    }
    let why = said
        .lines()
        .find_map(|l| l.strip_prefix("NOT:"))
        .unwrap_or("the status check said nothing");
    Err(SessionError::NotSignedIn {
        server: profile.name.clone(),
        message: scrub(why),
    })
}

/// A path for an Ex command (`:source`).
fn vim_escape(p: &Path) -> String {
    p.display()
        .to_string()
        .replace('\\', "\\\\")
        .replace(' ', "\\ ")
}
