//! `typist login copilot`: the language server's own device flow, run in a scratch
//! `HOME` over `lsp::Client`, and what it stored kept in typist's config folder
//! ([`super::store`]). Above the editor layer: it starts the server with the editor's
//! answers to the server's requests. The sign-in files themselves (where they are,
//! their copy into a session's sandbox) are [`super`]'s, below the editor.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::{APP_ID, is_network_failure};
use crate::editor::Profile;
use crate::lsp::{Client, ClientOptions, LspError};

fn unreachable(detail: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "the network is unreachable: the Copilot server could not reach GitHub to sign in ({detail}); nothing was stored"
    )
}

/// `typist login copilot`: the server's device flow, in a scratch `HOME`; on success the
/// server's files are kept in [`store`]. `wait`: how long the sign-in request may take
/// before the network is taken as unreachable (the user's confirmation has its own
/// deadline, the code's expiry).
pub async fn login(profile: &Profile, wait: Duration) -> Result<String> {
    let program = profile.resolve_command().with_context(|| {
        format!(
            "{} is not installed: {}",
            profile.command, profile.install_hint
        )
    })?;
    let entry = github_entry()?;
    // Named `typist-PID-…` like the workspaces: swept if typist is killed meanwhile.
    let tmp = crate::editor::workspace::scratch_dir("login-")?;
    let config = tmp.path().join("home").join(".config");
    let client = start_server(profile, &program, tmp.path(), &config).await?;
    let signed_in = sign_in(&client, wait).await;
    // What the server says now, with the network.
    let check = match &signed_in {
        Ok(_) => client
            .request("checkStatus", Some(json!({})), wait)
            .await
            .unwrap_or(Value::Null),
        Err(_) => Value::Null,
    };
    let _ = client.shutdown().await;
    let user = signed_in?;
    let now = check.get("status").and_then(Value::as_str).unwrap_or("");
    if !matches!(now, "OK" | "MaybeOK") {
        bail!("the server does not report a sign-in after the flow (checkStatus: {check})");
    }
    let user = check
        .get("user")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or(user)
        .unwrap_or_else(|| "?".into());
    keep(
        &config.join("github-copilot"),
        &tmp.path().join("home"),
        &entry,
        "device flow",
    )?;
    Ok(format!(
        "signed in to GitHub Copilot as {user}; kept in the vault as {} ({}): every Copilot session (the language server, copilot.lua, VS Code's `github` sign-in) gets a copy",
        entry.name(),
        entry.dir().display()
    ))
}

/// The vault entry of the GitHub sign-in.
fn github_entry() -> Result<crate::vault::Entry> {
    let (a, e) = super::GITHUB_ENTRY;
    crate::vault::Vault::open()?.entry(a, e)
}

/// `typist login copilot --token-stdin`: a GitHub OAuth token kept as copilot.vim keeps
/// it (`apps.json`, which the language server reads and migrates), unchecked: offline
/// nothing can check it, and the first session's status says whether GitHub takes it.
pub fn keep_token(token: &str) -> Result<String> {
    let token = token.trim();
    if token.len() < 20 || token.contains(char::is_whitespace) {
        bail!("that is not a GitHub OAuth token (gho_…/ghu_…, one line on standard input)");
    }
    if token.starts_with("ghp_") || token.starts_with("github_pat_") {
        bail!(
            "a personal access token: Copilot refuses them; sign in with `typist login copilot` (the device flow) or paste the OAuth token (gho_…/ghu_…) a Copilot plugin keeps"
        );
    }
    crate::secrets::register(token);
    let entry = github_entry()?;
    let tmp = crate::editor::workspace::scratch_dir("login-")?;
    let home = tmp.path().join("home");
    let dir = home.join(".config").join("github-copilot");
    std::fs::create_dir_all(&dir)?;
    let apps = json!({ format!("github.com:{APP_ID}"): {
        "user": "",
        "oauth_token": token,
        "githubAppId": APP_ID,
    }});
    std::fs::write(dir.join("apps.json"), serde_json::to_vec_pretty(&apps)?)?;
    keep(&dir, &home, &entry, "token from standard input")?;
    Ok(format!(
        "kept the GitHub token in the vault as {} ({}), not checked (offline it cannot be): every Copilot session (the language server, copilot.lua, VS Code's `github` sign-in) gets a copy; `typist doctor --profile copilot` asks GitHub",
        entry.name(),
        entry.dir().display()
    ))
}

/// Starts the server with `HOME` and the XDG folders inside `dir` (its files go to
/// `config`), and initializes it.
async fn start_server(
    profile: &Profile,
    program: &Path,
    dir: &Path,
    config: &Path,
) -> Result<Client> {
    let home = dir.join("home");
    std::fs::create_dir_all(&home)?;
    std::fs::create_dir_all(config)?;
    let h = home.display().to_string();
    let env = vec![
        ("HOME".to_string(), h.clone()),
        ("XDG_CONFIG_HOME".to_string(), config.display().to_string()),
        ("XDG_CACHE_HOME".to_string(), format!("{h}/.cache")),
        ("XDG_DATA_HOME".to_string(), format!("{h}/.local/share")),
    ];
    let client = Client::spawn(
        program,
        &profile.args,
        &env,
        dir,
        ClientOptions {
            name: profile.name.clone(),
            transcript: None,
            handlers: crate::editor::answers::editor_handlers(profile.settings.clone(), None),
        },
    )?;
    let init = json!({
        "processId": std::process::id(),
        "clientInfo": {"name": "typist", "version": env!("CARGO_PKG_VERSION")},
        "capabilities": {"window": {"showDocument": {"support": true}}},
        "initializationOptions": profile.initialization_options,
    });
    client
        .request(
            "initialize",
            Some(init),
            Duration::from_millis(profile.init_timeout_ms),
        )
        .await?;
    client.notify("initialized", Some(json!({})));
    client.notify(
        "workspace/didChangeConfiguration",
        Some(json!({"settings": profile.settings})),
    );
    Ok(client)
}

/// `signIn`, and the device flow when the server asks for it; the user it names, if
/// any.
async fn sign_in(client: &Client, wait: Duration) -> Result<Option<String>> {
    let answer = match client.request("signIn", Some(json!({})), wait).await {
        Ok(v) => v,
        Err(LspError::Rpc { message, .. }) if is_network_failure(&message) => {
            return Err(unreachable(&message));
        }
        Err(LspError::Timeout { .. }) => {
            return Err(unreachable(&format!(
                "no answer to the sign-in request within {} s",
                wait.as_secs()
            )));
        }
        Err(e) => bail!("sign-in failed: {e}"),
    };
    let status = answer.get("status").and_then(Value::as_str).unwrap_or("");
    let user = answer
        .get("user")
        .and_then(Value::as_str)
        .map(str::to_string);
    match status {
        "PromptUserDeviceFlow" => Ok(device_flow(client, &answer).await?.or(user)),
        "AlreadySignedIn" | "OK" => Ok(user),
        _ => bail!("unexpected sign-in answer: {answer}"),
    }
}

/// Shows the user the code and waits for their confirmation; the user the server
/// names, if any.
async fn device_flow(client: &Client, answer: &Value) -> Result<Option<String>> {
    let code = answer
        .get("userCode")
        .and_then(Value::as_str)
        .unwrap_or("?");
    let uri = answer
        .get("verificationUri")
        .and_then(Value::as_str)
        .unwrap_or("https://github.com/login/device");
    let expires = answer
        .get("expiresIn")
        .and_then(Value::as_u64)
        .unwrap_or(900);
    eprintln!(
        "To sign in to GitHub Copilot, open {uri} and enter the code {code} (it expires in {} min). Waiting…",
        expires.div_ceil(60)
    );
    let deadline = Duration::from_secs(expires + 30);
    let confirmed = match answer.get("command") {
        Some(cmd) => {
            client
                .request(
                    "workspace/executeCommand",
                    Some(json!({
                        "command": cmd.get("command").cloned().unwrap_or(Value::Null),
                        "arguments": cmd.get("arguments").cloned().unwrap_or(json!([])),
                    })),
                    deadline,
                )
                .await
        }
        None => {
            client
                .request("signInConfirm", Some(json!({"userCode": code})), deadline)
                .await
        }
    };
    let confirmed = match confirmed {
        Ok(v) => v,
        Err(e) => {
            let text = e.to_string();
            if is_network_failure(&text) {
                return Err(unreachable(&text));
            }
            bail!("sign-in not confirmed: {text}");
        }
    };
    Ok(confirmed
        .get("user")
        .and_then(Value::as_str)
        .map(str::to_string))
}

/// Saves the server's files from `from` (a `github-copilot` folder under `home`) as the
/// vault's GitHub entry, replacing it whole.
fn keep(from: &Path, home: &Path, entry: &crate::vault::Entry, how: &str) -> Result<()> {
    if !super::has_sign_in_files(from) {
        bail!("the server reported a sign-in but wrote no credentials file");
    }
    entry.save(
        &[crate::vault::Part {
            name: crate::vault::HOME,
            root: home,
            paths: vec![".config/github-copilot".into()],
        }],
        vec![how.to_string()],
    )?;
    Ok(())
}
