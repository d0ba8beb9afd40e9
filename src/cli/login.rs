//! `typist login` and `typist logout`: an assistant signed in once and kept in the
//! vault (`src/vault.rs`), listed, removed.

use std::io::{BufRead, IsTerminal};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::args::{LoginArgs, LoginTarget, LogoutArgs};
use super::runtime;
use typist::editor::editors::GITHUB_ENTRY;
use typist::editor::login::LoginScript;
use typist::editor::{EditorApp, Editors, profile};
use typist::vault::Vault;

/// Copilot's sign-in request may take this long by default before the network is
/// taken as unreachable; an editor's whole sign-in, this long.
const COPILOT_WAIT_S: u64 = 30;
const EDITOR_WAIT_S: u64 = 300;

pub fn login(a: LoginArgs) -> Result<ExitCode> {
    if a.list {
        return list(a.json);
    }
    if let Some(LoginTarget::Copilot) = a.target {
        return copilot(&a);
    }
    let (Some(name), Some(kind)) = (&a.assistant, a.editor) else {
        bail!("name the editor too: typist login --editor neovim|vscode --assistant NAME");
    };
    let p = profile::find_profile(name, a.editors.as_deref())?;
    if p.signin.is_none() {
        bail!(
            "{name}: its profile ({}) has no [signin] section: say there what the assistant keeps (`files`) and how it signs in (`command`) (docs/signin.md)",
            p.source.display()
        );
    }
    let answers = answers(&a.answers)?;
    for t in &answers {
        typist::secrets::register(t);
    }
    let interactive = answers.is_empty() && std::io::stdin().is_terminal();
    let script = LoginScript {
        commands: a.commands.clone(),
        answers,
        interactive,
        timeout: Duration::from_secs(a.timeout.unwrap_or(EDITOR_WAIT_S)),
    };
    let app = EditorApp {
        kind,
        ..Default::default()
    };
    let rt = runtime()?;
    let editors = Editors::new();
    let done = rt.block_on(async {
        let done = typist::editor::login::login(&editors, &app, &p, script).await;
        editors.close().await;
        done
    });
    let done = done.map_err(|e| anyhow::anyhow!("{e}"))?;
    for s in &done.shown {
        eprintln!("  {} showed: {s}", kind.as_str());
    }
    let entry = Vault::open()?.entry(&done.meta.assistant, &done.meta.editor)?;
    out!(
        "signed {} in, in {}; kept in the vault as {} ({}), saved {}: every session of {} in {} starts from a copy",
        p.name,
        kind.as_str(),
        done.meta.name(),
        entry.dir().display(),
        done.meta.saved_at,
        p.name,
        kind.as_str()
    );
    Ok(ExitCode::SUCCESS)
}

/// `--answer` values, `-` read as the next line of standard input.
fn answers(given: &[String]) -> Result<Vec<String>> {
    let mut stdin = std::io::stdin().lock();
    given
        .iter()
        .map(|a| {
            if a != "-" {
                return Ok(a.clone());
            }
            let mut line = String::new();
            stdin
                .read_line(&mut line)
                .context("--answer -: cannot read standard input")?;
            let line = line.trim_end_matches(['\n', '\r']).to_string();
            if line.is_empty() {
                bail!("--answer -: standard input had no line to answer with");
            }
            Ok(line)
        })
        .collect()
}

fn copilot(a: &LoginArgs) -> Result<ExitCode> {
    let wait = Duration::from_secs(a.timeout.unwrap_or(COPILOT_WAIT_S));
    let done = if a.token_stdin {
        let mut token = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut token)
            .context("cannot read the token from standard input")?;
        typist::copilot::login::keep_token(token.trim())?
    } else {
        let p = profile::find_profile(&a.profile, a.editors.as_deref())?;
        runtime()?.block_on(typist::copilot::login::login(&p, wait))?
    };
    out!("{done}");
    Ok(ExitCode::SUCCESS)
}

fn list(json: bool) -> Result<ExitCode> {
    let vault = Vault::open()?;
    let entries = vault.list();
    if json {
        let rows: Vec<serde_json::Value> = entries
            .iter()
            .map(|e| match e {
                Ok(m) => serde_json::json!({
                    "entry": m.name(),
                    "saved_at": m.saved_at,
                    "written_back_at": m.written_back_at,
                    "how": m.how,
                }),
                Err(e) => serde_json::json!({"error": e}),
            })
            .collect();
        out!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"vault": vault.root(), "entries": rows})
            )?
        );
        return Ok(ExitCode::SUCCESS);
    }
    if entries.is_empty() {
        out!(
            "the vault ({}) is empty: sign an assistant in with `typist login copilot` or `typist login --editor neovim|vscode --assistant NAME`",
            vault.root().display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::NOTHING);
    t.set_header(["entry", "saved", "written back", "how"]);
    for e in &entries {
        match e {
            Ok(m) => t.add_row([
                m.name(),
                m.saved_at.clone(),
                m.written_back_at.clone().unwrap_or_else(|| "-".into()),
                if m.how.is_empty() {
                    "-".into()
                } else {
                    m.how.join("; ")
                },
            ]),
            Err(e) => t.add_row([e.clone(), "unreadable".into(), String::new(), String::new()]),
        };
    }
    out!("{t}");
    out!("vault: {}", vault.root().display());
    Ok(ExitCode::SUCCESS)
}

pub fn logout(a: LogoutArgs) -> Result<ExitCode> {
    let vault = Vault::open()?;
    let entry = match (&a.target, &a.assistant, a.editor) {
        (Some(LoginTarget::Copilot), _, _) => vault.entry(GITHUB_ENTRY.0, GITHUB_ENTRY.1)?,
        (None, Some(name), Some(kind)) => vault.entry(name, kind.as_str())?,
        _ => bail!(
            "say which: typist logout copilot, or typist logout --editor neovim|vscode --assistant NAME"
        ),
    };
    if entry.remove()? {
        out!("removed {} from the vault", entry.name());
        Ok(ExitCode::SUCCESS)
    } else {
        let names: Vec<String> = vault
            .list()
            .into_iter()
            .filter_map(|e| e.ok().map(|m| m.name()))
            .collect();
        let wanted = entry.name();
        let hint = profile::did_you_mean(&wanted, names.iter().map(String::as_str))
            .map(|n| format!("; did you mean `{n}`?"))
            .unwrap_or_default();
        eprintln!(
            "typist: {wanted} is not in the vault ({}){hint}; `typist login --list` shows what is",
            vault.root().display()
        );
        Ok(ExitCode::from(1))
    }
}
