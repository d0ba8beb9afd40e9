//! `typist login --editor vscode --assistant NAME`: the assistant's extension signed in
//! once in the VS Code a run uses (the same code-server and Chromium, the profile's
//! extensions, a tab opened as a session's, on an empty workspace), and what it kept of
//! the sign-in saved as its vault entry (`instance/signin.rs` says where code-server
//! keeps it).
//!
//! Each command (`--command`, else the profile's `[signin] command`) is run from the
//! command palette (by its title; an id is looked up in the installed extensions'
//! manifests); each input box it opens gets the next `--answer` (one per box, in order)
//! or, interactively, a line the person types at the terminal (not echoed for a password
//! box). What VS Code shows on the way is relayed: input boxes' prompts, notifications,
//! dialogs, and the address of any page an extension opens (a new browser target; the
//! person opens a `127.0.0.1` address through an SSH tunnel to this machine: typist
//! never opens a debugging port). Then the extension must no longer ask to sign in
//! (`sign_in_prompts`), and the entry is saved: `browser` (the origin's
//! `secrets.provider`), `user-data` (`serve-web-key-half`), `home` (`[signin] files`).
//! Every answer is registered as a secret before it is typed, so nothing shown or
//! logged holds it.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::instance::CALL;
use super::instance::signin::{KEY_HALF, LOCAL_STORAGE, write_storage_file};
use super::keys::ENTER;
use super::scripts::LOGIN_PAGE;
use super::{VscodeHost, VscodeSession, failed};
use crate::editor::error::{EditorError, SessionError};
use crate::editor::kind::EditorApp;
use crate::editor::options::SessionOptions;
use crate::editor::options::{LoginDone, LoginScript};
use crate::editor::profile::Profile;
use crate::vault::{BROWSER, Entry, HOME, Part, USER_DATA};

/// How long a sign-in may take when the script gives no timeout.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// A command is done when no input box has been open for this long.
const QUIET: Duration = Duration::from_secs(2);
/// How long an answered input box may stay open before its answer counts as refused.
const BOX_CLOSES_WITHIN: Duration = Duration::from_secs(3);
/// How long a scripted sign-in's extension may take to stop asking to sign in.
const SIGNED_IN_WITHIN: Duration = Duration::from_secs(15);

/// What the page shows during a sign-in (`login_page.js`).
#[derive(Debug, Default, serde::Deserialize)]
struct LoginPage {
    #[serde(rename = "box")]
    input: Option<InputBox>,
    notes: Vec<String>,
    dialog: Option<String>,
}

#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
struct InputBox {
    prompt: String,
    title: String,
    placeholder: String,
    password: bool,
}

impl InputBox {
    fn describe(&self) -> String {
        [&self.title, &self.prompt, &self.placeholder]
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(" — ")
    }
}

/// What VS Code showed, for the terminal: each line once, scrubbed of secrets; printed
/// as it comes when the person is at the terminal.
struct Shown {
    lines: Vec<String>,
    interactive: bool,
}

impl Shown {
    fn add(&mut self, line: String) {
        let line = crate::secrets::scrub(&line).into_owned();
        if self.lines.contains(&line) {
            return;
        }
        if self.interactive {
            eprintln!("vscode: {line}");
        }
        tracing::info!("vscode login: {line}");
        self.lines.push(line);
    }
}

fn login_failed(profile: &Profile, m: String) -> SessionError {
    EditorError::Failed(format!("{}: vscode login: {m}", profile.name)).into()
}

/// Signs `profile`'s assistant in, in VS Code, and saves `entry`.
pub async fn login(
    host: &Arc<VscodeHost>,
    app: &EditorApp,
    profile: &Profile,
    entry: &Entry,
    script: LoginScript,
) -> Result<LoginDone, SessionError> {
    let signin = profile
        .signin
        .clone()
        .unwrap_or(crate::editor::profile::Signin {
            files: Vec::new(),
            command: None,
            neovim_status: None,
            github: false,
        });
    if signin.github {
        return Err(login_failed(
            profile,
            "it signs in with GitHub: run `typist login copilot` (typist's own GitHub provider serves that sign-in to every VS Code)".into(),
        ));
    }
    for a in &script.answers {
        crate::secrets::register(a);
    }
    let commands: Vec<String> = if script.commands.is_empty() {
        signin.command.iter().cloned().collect()
    } else {
        script.commands.clone()
    };
    if commands.is_empty() && !script.interactive {
        return Err(login_failed(
            profile,
            "no command to run: give --command (a palette command's title or id) or the profile's [signin] command".into(),
        ));
    }
    let timeout = if script.timeout.is_zero() {
        DEFAULT_TIMEOUT
    } else {
        script.timeout
    };
    let deadline = Instant::now() + timeout;
    let mut shown = Shown {
        lines: Vec::new(),
        interactive: script.interactive,
    };
    let r = async {
        // A VS Code as a run starts it (signed out: no entry), one tab on an empty
        // workspace.
        let mut s = VscodeSession::start(host, profile, app, SessionOptions::default()).await?;
        let r = match s.sign_in(&commands, &script, deadline, &mut shown).await {
            Ok(()) => s.save(entry, &signin.files, &commands).await,
            Err(e) => Err(e),
        };
        s.shutdown().await;
        r
    }
    .await;
    host.close().await;
    let meta = r?;
    Ok(LoginDone {
        meta,
        shown: shown.lines,
    })
}

impl VscodeSession {
    async fn login_page(&mut self) -> LoginPage {
        match self.vs.eval(&self.tab, LOGIN_PAGE).await {
            Ok(v) => serde_json::from_value(v).unwrap_or_default(),
            Err(_) => LoginPage::default(),
        }
    }

    /// The browser's page targets' ids and addresses.
    async fn targets(&self) -> Vec<(String, String)> {
        let Ok(t) = self
            .vs
            .cdp
            .call("Target.getTargets", json!({}), None, CALL)
            .await
        else {
            return Vec::new();
        };
        t["targetInfos"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter(|t| t["type"] == "page")
                    .map(|t| {
                        (
                            t["targetId"].as_str().unwrap_or("").to_string(),
                            t["url"].as_str().unwrap_or("").to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Relays what the page shows now (notifications, a dialog, pages opened) to
    /// `shown`; returns the input box open, if any.
    async fn look(&mut self, known: &mut BTreeSet<String>, shown: &mut Shown) -> Option<InputBox> {
        let p = self.login_page().await;
        for n in p.notes {
            shown.add(format!("notification: {n}"));
        }
        if let Some(d) = p.dialog {
            shown.add(format!("dialog: {d}"));
        }
        let origin = self.vs.url();
        for (id, url) in self.targets().await {
            if known.contains(&id) || url.is_empty() || url == "about:blank" {
                continue;
            }
            known.insert(id);
            if !url.starts_with(&origin) {
                shown.add(format!(
                    "open {url} (an address on 127.0.0.1 of this machine: reach it through an SSH tunnel)"
                ));
            }
        }
        p.input
    }

    /// Runs `commands`, answers the input boxes they open, and waits until the
    /// extension no longer asks to sign in.
    async fn sign_in(
        &mut self,
        commands: &[String],
        script: &LoginScript,
        deadline: Instant,
        shown: &mut Shown,
    ) -> Result<(), SessionError> {
        let mut answers = script.answers.iter().cloned();
        let mut known: BTreeSet<String> = self.targets().await.into_iter().map(|t| t.0).collect();
        for c in commands {
            let title = self.command_title(c);
            shown.add(format!("command: {title}"));
            self.palette(&title).await?;
            let mut quiet_since = Instant::now();
            loop {
                if let Some(b) = self.look(&mut known, shown).await {
                    shown.add(format!("input box: {}", b.describe()));
                    let answer = match answers.next() {
                        Some(a) => a,
                        None if script.interactive => ask(&b).await?,
                        None => {
                            return Err(login_failed(
                                &self.profile,
                                format!(
                                    "VS Code asks {:?} and no --answer is left for it",
                                    b.describe()
                                ),
                            ));
                        }
                    };
                    crate::secrets::register(&answer);
                    self.insert_text(&answer).await?;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    self.press(ENTER, 0).await?;
                    self.box_closed(&b).await?;
                    quiet_since = Instant::now();
                } else if quiet_since.elapsed() >= QUIET {
                    break;
                }
                if Instant::now() >= deadline {
                    return Err(timed_out(&self.profile));
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        // Signed in: the extension no longer asks (it may take a moment to say so; a
        // person finishing a device flow in a browser takes longer).
        let within = if script.interactive {
            deadline.saturating_duration_since(Instant::now())
        } else {
            SIGNED_IN_WITHIN
        };
        let until = Instant::now() + within;
        loop {
            self.look(&mut known, shown).await;
            let asks = self.sign_in_prompts(Duration::ZERO).await;
            if asks.is_empty() {
                return Ok(());
            }
            if Instant::now() >= until {
                return Err(SessionError::NotSignedIn {
                    server: self.profile.name.clone(),
                    message: format!("after the sign-in, VS Code still shows {}", asks.join("; ")),
                });
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// Waits until the input box answered is gone (or another one shows); one still
    /// open means VS Code refused the answer (its validation message is the error).
    async fn box_closed(&mut self, answered: &InputBox) -> Result<(), SessionError> {
        let until = Instant::now() + BOX_CLOSES_WITHIN;
        loop {
            let p = self.login_page().await;
            match p.input {
                None => return Ok(()),
                Some(b) if b.title != answered.title || b.placeholder != answered.placeholder => {
                    return Ok(());
                }
                Some(b) if Instant::now() >= until => {
                    return Err(login_failed(
                        &self.profile,
                        format!("VS Code did not take the answer: {}", b.describe()),
                    ));
                }
                Some(_) => {}
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A palette command's title: `c` itself, or, when it is a command id, the title an
    /// installed extension gives it (`contributes.commands`).
    fn command_title(&self, c: &str) -> String {
        if c.contains(' ') || !c.contains('.') {
            return c.to_string();
        }
        let exts = self.vs.dir.join("extensions");
        let Ok(rd) = std::fs::read_dir(&exts) else {
            return c.to_string();
        };
        for e in rd.flatten() {
            let Ok(text) = std::fs::read_to_string(e.path().join("package.json")) else {
                continue;
            };
            let Ok(m) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            if let Some(cmds) = m["contributes"]["commands"].as_array()
                && let Some(t) = cmds
                    .iter()
                    .find(|x| x["command"] == c)
                    .and_then(|x| x["title"].as_str())
            {
                let cat = x_category(cmds, c);
                return match cat {
                    Some(cat) => format!("{cat}: {t}"),
                    None => t.to_string(),
                };
            }
        }
        c.to_string()
    }

    /// Saves what the sign-in left as `entry`: the origin's kept localStorage, the key
    /// half, and the profile's `[signin] files` under the `HOME`.
    async fn save(
        &mut self,
        entry: &Entry,
        files: &[String],
        commands: &[String],
    ) -> Result<crate::vault::Meta, SessionError> {
        let storage = self.vs.origin_storage().await?;
        if storage.is_empty() && files.is_empty() {
            return Err(login_failed(
                &self.profile,
                "the extension kept nothing of the sign-in in VS Code's secret storage, and the profile names no [signin] files".into(),
            ));
        }
        let tmp = tempfile::tempdir().map_err(SessionError::file(&std::env::temp_dir()))?;
        let ls = tmp.path().join(LOCAL_STORAGE);
        write_storage_file(&ls, &storage).map_err(SessionError::file(&ls))?;
        let user = self.vs.dir.join("user-data");
        let home = self.vs.dir.join("home");
        let mut parts = vec![Part {
            name: HOME,
            root: &home,
            paths: files.to_vec(),
        }];
        if !storage.is_empty() {
            parts.push(Part {
                name: BROWSER,
                root: tmp.path(),
                paths: vec![LOCAL_STORAGE.into()],
            });
            parts.push(Part {
                name: USER_DATA,
                root: &user,
                paths: vec![KEY_HALF.into()],
            });
            if !Path::new(&user).join(KEY_HALF).is_file() {
                return Err(login_failed(
                    &self.profile,
                    format!(
                        "code-server left no {KEY_HALF}: the secret storage could not be read back"
                    ),
                ));
            }
        }
        entry
            .save(&parts, commands.to_vec())
            .map_err(|e| login_failed(&self.profile, format!("cannot save the vault entry: {e:#}")))
    }
}

/// The `category` a manifest gives command `c`, if any.
fn x_category(cmds: &[Value], c: &str) -> Option<String> {
    cmds.iter()
        .find(|x| x["command"] == c)
        .and_then(|x| x["category"].as_str())
        .map(String::from)
}

fn timed_out(profile: &Profile) -> SessionError {
    EditorError::Timeout(format!(
        "{}: vscode login did not finish in time",
        profile.name
    ))
    .into()
}

/// Asks the person at the terminal for an input box's answer (not echoed for a
/// password box).
async fn ask(b: &InputBox) -> Result<String, SessionError> {
    let prompt = b.describe();
    let password = b.password;
    tokio::task::spawn_blocking(move || {
        use std::io::{BufRead, Write};
        eprint!("{prompt}: ");
        let _ = std::io::stderr().flush();
        let stty = |arg: &str| {
            let _ = std::process::Command::new("stty")
                .arg(arg)
                .stdin(std::process::Stdio::inherit())
                .stderr(std::process::Stdio::null())
                .status();
        };
        if password {
            stty("-echo");
        }
        let mut line = String::new();
        let r = std::io::stdin().lock().read_line(&mut line);
        if password {
            stty("echo");
            eprintln!();
        }
        r.map(|_| line.trim_end_matches(['\n', '\r']).to_string())
    })
    .await
    .map_err(|e| failed(format!("vscode login: {e}")))?
    .map_err(|e| failed(format!("vscode login: reading the answer: {e}")))
}
