//! `typist doctor`: for each profile, is the server installed, does it start, what
//! does it say about itself, and does it answer a probe suggestion. Uses only the
//! `editor` layer, as a user's run would.

use std::path::Path;

use serde::Serialize;

use crate::editor::{
    Conditions, DialectKind, Document, EditorApp, EditorKind, EditorSession, Editors,
    ExtensionState, Profile, SessionError, SessionOptions,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Ok,
    Missing,
    Failed,
    NeedsAuth,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct ServerDesc {
    pub name: Option<String>,
    pub version: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CapsDesc {
    pub inline: bool,
    pub completion: bool,
    pub sync: crate::editor::SyncKind,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProbeDesc {
    pub items: usize,
    pub latency_ms: f64,
    pub top: Vec<String>,
    /// Whether the profile's expected item is in the top 5 (when it names one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_in_top5: Option<bool>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub name: String,
    pub status: Status,
    pub command: Option<String>,
    pub server: ServerDesc,
    pub capabilities: Option<CapsDesc>,
    pub probe: Option<ProbeDesc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<String>,
    /// The real editor the profile was examined in (`neovim 0.12.0-dev-fbb1caf`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub editor: Option<String>,
    /// VS Code: each extension installed, its version, and whether it activated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<ExtensionState>,
    /// An assistant that signs in (`[signin]`): the vault entry its sessions start
    /// from and when it was saved, or why there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vault: Option<String>,
    pub message: String,
}

impl Report {
    /// A profile that could not be examined (its model service did not start): missing
    /// when the service's program is not installed, failed otherwise.
    pub fn failed(profile: &Profile, error: &anyhow::Error) -> Report {
        Report {
            status: if crate::service::ServiceError::is_missing(error) {
                Status::Missing
            } else {
                Status::Failed
            },
            message: format!("{error:#}"),
            ..Report::blank(profile)
        }
    }

    /// A profile not examined yet: failed, with where its program is and nothing else.
    fn blank(profile: &Profile) -> Report {
        Report {
            name: profile.name.clone(),
            status: Status::Failed,
            command: where_is(profile),
            server: ServerDesc::default(),
            capabilities: None,
            probe: None,
            auth: None,
            editor: None,
            extensions: Vec::new(),
            vault: None,
            message: String::new(),
        }
    }
}

/// The server's program as found, or the address of the running server it attaches to.
fn where_is(profile: &Profile) -> Option<String> {
    match &profile.connect {
        Some(a) => Some(a.clone()),
        None => profile.resolve_command().map(|p| p.display().to_string()),
    }
}

/// `typist doctor`'s table: one row per report.
pub fn table(reports: &[Report]) -> String {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::ASCII_MARKDOWN);
    t.set_header([
        "profile",
        "status",
        "server",
        "version",
        "inline",
        "completion",
        "probe items",
        "latency ms",
        "top",
        "message",
    ]);
    for r in reports {
        let yn = |b: bool| if b { "yes" } else { "no" }.to_string();
        let (inline, completion) = r
            .capabilities
            .as_ref()
            .map(|c| (yn(c.inline), yn(c.completion)))
            .unwrap_or_default();
        let (items, latency, top) = r
            .probe
            .as_ref()
            .map(|p| {
                (
                    p.items.to_string(),
                    format!("{:.1}", p.latency_ms),
                    p.top.join(", "),
                )
            })
            .unwrap_or_default();
        let status = serde_json::to_value(r.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let mut message = r.message.replace('\n', " ");
        if message.chars().count() > 80 {
            message = message.chars().take(77).collect::<String>() + "...";
        }
        t.add_row([
            r.name.clone(),
            status,
            r.server.name.clone().unwrap_or_default(),
            r.server.version.clone().unwrap_or_default(),
            inline,
            completion,
            items,
            latency,
            top,
            message,
        ]);
    }
    t.to_string()
}

/// Examines one profile in typist's own client. Never fails: every problem becomes a
/// status and a message.
pub async fn examine(profile: &Profile, transcript_dir: Option<&Path>) -> Report {
    let editors = Editors::new();
    let report = examine_in(&editors, &EditorApp::default(), profile, transcript_dir).await;
    editors.close().await;
    report
}

/// How long doctor looks at VS Code's page for an extension asking to sign in.
const SIGN_IN_WITHIN: std::time::Duration = std::time::Duration::from_secs(3);

/// How long VS Code's extensions have to activate before doctor says they did not.
const EXTENSIONS_WITHIN: std::time::Duration = std::time::Duration::from_secs(15);

/// Examines one profile inside `app`'s editor: typist's own client (what the server
/// says about itself, Copilot's sign-in, the probe), or a real editor (its version,
/// whether the profile's server or extension works inside it, the probe answered
/// through the editor), started from the run's `editors`. Never fails: every problem
/// becomes a status and a message.
pub async fn examine_in(
    editors: &Editors,
    app: &EditorApp,
    profile: &Profile,
    transcript_dir: Option<&Path>,
) -> Report {
    let mut report = Report::blank(profile);
    if let Some(why) = not_examined(app, profile, &mut report) {
        report.message = why;
        return report;
    }
    report.vault = vault_state(editors, profile, app.kind);
    let typist = app.kind == EditorKind::Typist;
    let opts = SessionOptions {
        transcript: transcript_dir
            .filter(|_| typist)
            .map(|d| d.join(format!("{}.jsonl", profile.name))),
        ..Default::default()
    };
    let probed = profile.cold_start();
    let started = EditorSession::start(editors, app, &probed, &Conditions::default(), opts).await;
    let session = match started {
        Ok(s) => s,
        Err(e @ SessionError::Missing { .. }) if !typist => {
            report.status = Status::Missing;
            report.message = e.to_string();
            return report;
        }
        Err(e @ SessionError::NotSignedIn { .. }) => {
            report.status = Status::NeedsAuth;
            report.message = e.to_string();
            return report;
        }
        Err(e) => return did_not_start(report, profile, e.to_string()),
    };
    if typist {
        examine_server(report, session, profile).await
    } else {
        examine_editor(report, session, app, profile).await
    }
}

/// What an answer later than `profile`'s request deadline means for a run, if the
/// probe's was.
fn slow_first_answer(profile: &Profile, probe: &ProbeDesc) -> Option<String> {
    (probe.latency_ms > profile.request_timeout_ms as f64).then(|| {
        format!(
            "its first answer took {:.0} ms, over the profile's request deadline ({} ms): a run's first cases may time out (raise request_timeout_ms, or warm the server up)",
            probe.latency_ms, profile.request_timeout_ms
        )
    })
}

/// The vault entry `profile`'s sessions in `kind` start from, and its state.
fn vault_state(editors: &Editors, profile: &Profile, kind: EditorKind) -> Option<String> {
    profile.signin.as_ref()?;
    Some(match editors.sign_in(profile, kind) {
        Ok(Some(entry)) => match entry.meta() {
            Ok(m) => m.state(),
            Err(e) => format!("{}: unreadable ({e:#})", entry.name()),
        },
        Ok(None) => "none".into(),
        Err(e) => e.to_string(),
    })
}

/// Every entry of the vault and its state, for `typist doctor`.
pub fn vault_entries(editors: &Editors) -> Vec<String> {
    let Some(v) = editors.vault() else {
        return vec!["no config folder for the vault (no HOME, no $TYPIST_CONFIG_DIR)".into()];
    };
    v.list()
        .into_iter()
        .map(|e| match e {
            Ok(m) => m.state(),
            Err(e) => format!("unreadable: {e}"),
        })
        .collect()
}

/// Why `profile` is not examined in `app`'s editor, if it is not (a missing program
/// sets the report's status).
fn not_examined(app: &EditorApp, profile: &Profile, report: &mut Report) -> Option<String> {
    let missing = || format!("{} not found; {}", profile.command, profile.install_hint);
    if app.kind == EditorKind::Typist {
        if report.command.is_some() {
            return None;
        }
        report.status = Status::Missing;
        return Some(missing());
    }
    match profile.plugin_editor() {
        Some(only) if only != app.kind.as_str() => {
            return Some(format!(
                "runs only with --editor {only} (no server of its own)"
            ));
        }
        Some(_) => {}
        None if !app.extensions.is_empty() => {
            return Some("--extension measures an extension alone: this profile has a server (use --profile vscode-extension)".into());
        }
        None if report.command.is_none() => {
            report.status = Status::Missing;
            return Some(missing());
        }
        None => {}
    }
    let shown = if app.kind == EditorKind::Vscode {
        crate::editor::refusals::shows_lines(app.kind, profile.dialect)
    } else {
        matches!(profile.dialect, DialectKind::Inline | DialectKind::Copilot)
    };
    if shown {
        return None;
    }
    Some(if profile.dialect == DialectKind::Completion {
        format!(
            "doctor asks a real editor for line suggestions; the completion dialect's lists run in token plans with --editor {} (check the server itself with --editor typist)",
            app.kind.as_str()
        )
    } else {
        format!(
            "the {} dialect runs with --editor typist only ({} asks textDocument/inlineCompletion)",
            serde_json::json!(profile.dialect).as_str().unwrap_or(""),
            app.kind.as_str()
        )
    })
}

/// typist's own client: what the server says about itself, Copilot's sign-in, the
/// probe.
async fn examine_server(
    mut report: Report,
    mut session: EditorSession,
    profile: &Profile,
) -> Report {
    describe_session(&mut report, &session);
    report.auth = session.auth_status().await;
    let not_signed_in = report.auth.as_deref().is_some_and(|s| {
        matches!(
            s.to_ascii_lowercase().as_str(),
            "notsignedin" | "notauthorized"
        )
    });
    // Copilot: where its sign-in comes from, or why there is none.
    let auth_reason = (profile.dialect == DialectKind::Copilot)
        .then(|| crate::copilot::auth_reason(report.auth.as_deref()));
    let outcome = probe(&mut session, profile, false).await;
    conclude(
        &mut report,
        profile,
        outcome,
        not_signed_in,
        auth_reason.as_deref(),
    );
    session
        .shutdown(crate::editor::options::SHUTDOWN_WAIT)
        .await;
    report
}

/// A real editor: its version, the probe through it, each extension's activation and
/// whether the page asks to sign in.
async fn examine_editor(
    mut report: Report,
    mut session: EditorSession,
    app: &EditorApp,
    profile: &Profile,
) -> Report {
    report.editor = session
        .editor_version()
        .map(|v| format!("{} {v}", app.kind.as_str()));
    let outcome = probe(&mut session, profile, true).await;
    let info = session.server_info().clone();
    report.server = ServerDesc {
        name: info.name,
        version: info.version,
    };
    report.extensions = extensions_settled(&session).await;
    conclude(&mut report, profile, outcome, false, None);
    if let Some(e) = &report.editor {
        report.message = format!("{} (in {e})", report.message);
    }
    judge_extensions(&mut report);
    if !report.extensions.is_empty() {
        sign_in_asked(&mut report, &mut session).await;
    }
    session
        .shutdown(crate::editor::options::SHUTDOWN_WAIT)
        .await;
    report
}

/// The extensions' states once each has activated or failed to, or
/// `EXTENSIONS_WITHIN` has passed (the extension hosts write their logs a moment
/// after the fact).
async fn extensions_settled(session: &EditorSession) -> Vec<ExtensionState> {
    let until = std::time::Instant::now() + EXTENSIONS_WITHIN;
    let mut states = session.extension_states();
    while std::time::Instant::now() < until
        && states
            .iter()
            .any(|x| !x.activated && x.activation_error.is_none())
    {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        states = session.extension_states();
    }
    states
}

/// An extension that did not activate, or failed to, is what is missing.
fn judge_extensions(report: &mut Report) {
    for x in &report.extensions {
        let said = match (&x.activation_error, x.activated) {
            (Some(err), _) => format!("extension {} {} failed to activate: {err}", x.id, x.version),
            (None, false) => format!(
                "extension {} {} did not activate (not signed in, or its activation events did not fire)",
                x.id, x.version
            ),
            (None, true) => format!("extension {} {} activated", x.id, x.version),
        };
        if x.activation_error.is_some() || !x.activated {
            report.status = Status::Failed;
        }
        report.message = format!("{}; {said}", report.message);
    }
}

/// Extensions that activated but ask the user to sign in, as the page shows it.
async fn sign_in_asked(report: &mut Report, session: &mut EditorSession) {
    let within = if report.status == Status::Ok {
        SIGN_IN_WITHIN
    } else {
        std::time::Duration::ZERO
    };
    let asks = session.sign_in_prompts(within).await;
    if asks.is_empty() {
        return;
    }
    if report.status == Status::Ok {
        report.status = Status::NeedsAuth;
    }
    report.auth = Some(asks.join("; "));
    report.message = format!(
        "{}; asks to sign in ({}): typist starts VS Code with a fresh profile each run, so a sign-in made elsewhere is not there; give the extension's token or key in the profile's [vscode] settings where it takes one",
        report.message,
        asks.join("; ")
    );
}

/// The probe: its file opened and its text placed (a real editor opens it empty
/// and is given the text, as typing would; typist's own client opens it with the
/// text), the cursor at its end.
async fn probe(
    session: &mut EditorSession,
    profile: &Profile,
    opened_empty: bool,
) -> Result<ProbeDesc, SessionError> {
    let Some(p) = &profile.probe else {
        return Ok(ProbeDesc {
            items: 0,
            latency_ms: 0.0,
            top: vec![],
            expected_in_top5: None,
        });
    };
    if opened_empty {
        session.open(&p.file, "").await?;
        session.set_text(&p.file, &p.text)?;
    } else {
        session.open(&p.file, &p.text).await?;
    }
    let cursor = Document::position_of(&p.text, p.text.len(), session.encoding());
    let got = session.suggest_when_ready(&p.file, cursor).await?;
    let top = got.value.top(5);
    let expected_in_top5 = p.expect.as_ref().map(|want| got.value.has_in_top(want, 5));
    Ok(ProbeDesc {
        items: got.value.len(),
        latency_ms: (got.latency_ms * 10.0).round() / 10.0,
        top,
        expected_in_top5,
    })
}

/// The report of a server that did not start.
fn did_not_start(mut report: Report, profile: &Profile, message: String) -> Report {
    report.message = message;
    // A rustup proxy exists even when its component is not installed.
    if report.message.contains("Unknown binary") {
        report.status = Status::Missing;
        report.message = format!("{}; {}", first_line(&report.message), profile.install_hint);
    }
    report
}

/// What the server says about itself at `initialize`.
fn describe_session(report: &mut Report, session: &EditorSession) {
    let info = session.server_info().clone();
    report.server = ServerDesc {
        name: info.name,
        version: info.version,
    };
    report.capabilities = session.capabilities().map(|caps| CapsDesc {
        inline: caps.inline,
        completion: caps.completion,
        sync: caps.sync,
    });
}

/// The status and message, from the probe's outcome and the sign-in.
fn conclude(
    report: &mut Report,
    profile: &Profile,
    outcome: Result<ProbeDesc, SessionError>,
    not_signed_in: bool,
    auth_reason: Option<&str>,
) {
    match outcome {
        Ok(p) => {
            report.status = if not_signed_in {
                Status::NeedsAuth
            } else {
                Status::Ok
            };
            report.message = match (&p.expected_in_top5, &profile.probe) {
                (Some(false), Some(pr)) => format!(
                    "answered, but {:?} is not in the top 5",
                    pr.expect.as_deref().unwrap_or("")
                ),
                _ if not_signed_in => "not signed in".into(),
                // Nothing was asked: an "answered" would claim what was not seen.
                _ if profile.probe.is_none() => {
                    "started; not asked (the profile names no [probe])".into()
                }
                _ => "answered".into(),
            };
            if let Some(slow) = slow_first_answer(profile, &p) {
                report.message = format!("{}; {slow}", report.message);
            }
            report.probe = Some(p);
        }
        Err(SessionError::NotSignedIn { message, .. }) => {
            report.status = Status::NeedsAuth;
            report.message = match auth_reason {
                Some(r) => format!("{r}; probe: {message}"),
                None => message,
            };
        }
        Err(e) if not_signed_in => {
            report.status = Status::NeedsAuth;
            report.message = match auth_reason {
                Some(r) => format!("{r}; probe: {e}"),
                None => format!("not signed in; probe: {e}"),
            };
        }
        Err(e) => {
            report.message = match auth_reason {
                Some(r) if crate::copilot::is_network_failure(&e.to_string()) => {
                    format!("{r}, but the network is unreachable; probe: {e}")
                }
                Some(r) => format!("{r}; probe: {e}"),
                None => e.to_string(),
            }
        }
    }
    if let (Some(r), Status::Ok) = (auth_reason, report.status) {
        report.message = format!("{}; {r}", report.message);
    }
}

fn first_line(s: &str) -> &str {
    s.lines()
        .find(|l| l.contains("Unknown binary"))
        .unwrap_or(s)
        .trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jedi() -> Profile {
        Profile::parse(
            include_str!("../editors/jedi-language-server.toml"),
            Path::new("jedi-language-server.toml"),
        )
        .unwrap()
    }

    fn probe(latency_ms: f64) -> ProbeDesc {
        ProbeDesc {
            items: 6,
            latency_ms,
            top: vec!["path".into()],
            expected_in_top5: Some(true),
        }
    }

    #[test]
    fn the_probe_waits_as_long_as_readiness_and_a_late_first_answer_is_told() {
        let p = jedi();
        assert_eq!(p.request_timeout_ms, 10_000);
        // The probe is a cold server's first request: the readiness wait's deadline.
        assert_eq!(p.cold_start().request_timeout_ms, p.readiness.max_wait_ms);
        assert!(p.readiness.max_wait_ms > p.request_timeout_ms);
        let mut long = p.clone();
        long.request_timeout_ms = 60_000;
        assert_eq!(
            long.cold_start().request_timeout_ms,
            60_000,
            "never shortened"
        );

        let mut r = Report::blank(&p);
        conclude(&mut r, &p, Ok(probe(14_200.0)), false, None);
        assert_eq!(r.status, Status::Ok, "{}", r.message);
        assert!(
            r.message.starts_with("answered; its first answer took 14200 ms, over the profile's request deadline (10000 ms)"),
            "{}",
            r.message
        );
        let mut r = Report::blank(&p);
        conclude(&mut r, &p, Ok(probe(3_005.1)), false, None);
        assert_eq!((r.status, r.message.as_str()), (Status::Ok, "answered"));
    }
}
