//! `typist doctor`: for each profile, is the server installed, does it start, what
//! does it say about itself, and does it answer a probe suggestion. Uses only the
//! `editor` layer, as a user's run would.

use std::path::Path;

use serde::Serialize;

use crate::editor::typist::TypistSession;
use crate::editor::{
    Conditions, DialectKind, Document, EditorApp, EditorKind, EditorSession, PositionEncoding,
    Profile, SessionError, SessionOptions,
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
    pub extensions: Vec<crate::editor::vscode::instance::ExtensionState>,
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

/// Examines one profile. Never fails: every problem becomes a status and a message.
pub async fn examine(profile: &Profile, transcript_dir: Option<&Path>) -> Report {
    let mut report = Report::blank(profile);
    if report.command.is_none() {
        report.status = Status::Missing;
        report.message = format!("{} not found; {}", profile.command, profile.install_hint);
        return report;
    }
    let opts = SessionOptions {
        transcript: transcript_dir.map(|d| d.join(format!("{}.jsonl", profile.name))),
        ..Default::default()
    };
    let mut session = match TypistSession::start(profile, &Conditions::default(), opts).await {
        Ok(s) => s,
        Err(e) => return did_not_start(report, profile, e.to_string()),
    };
    describe_session(&mut report, &session);
    report.auth = session.auth_status().await;
    let not_signed_in = report.auth.as_deref().is_some_and(|s| {
        matches!(
            s.to_ascii_lowercase().as_str(),
            "notsignedin" | "notauthorized"
        )
    });
    // Copilot: where its sign-in comes from, or why there is none.
    let auth_reason = (profile.dialect == crate::editor::DialectKind::Copilot)
        .then(|| crate::copilot::auth_reason(report.auth.as_deref()));
    let outcome = probe(&mut session, profile).await;
    conclude(
        &mut report,
        profile,
        outcome,
        not_signed_in,
        auth_reason.as_deref(),
    );
    let _ = tokio::time::timeout(crate::editor::options::SHUTDOWN_WAIT, session.shutdown()).await;
    report
}

/// How long doctor looks at VS Code's page for an extension asking to sign in.
const SIGN_IN_WITHIN: std::time::Duration = std::time::Duration::from_secs(3);

/// How long VS Code's extensions have to activate before doctor says they did not.
const EXTENSIONS_WITHIN: std::time::Duration = std::time::Duration::from_secs(15);

/// Examines one profile inside `app`'s editor: typist's own client as [`examine`]
/// does, or a real Neovim (its version, whether the profile's server attaches inside
/// it, and the probe answered through Neovim's inline completion).
pub async fn examine_in(
    app: &EditorApp,
    profile: &Profile,
    transcript_dir: Option<&Path>,
) -> Report {
    if app.kind == EditorKind::Typist {
        return examine(profile, transcript_dir).await;
    }
    let mut report = Report::blank(profile);
    match profile.plugin_editor() {
        Some(only) if only != app.kind.as_str() => {
            report.message = format!("runs only with --editor {only} (no server of its own)");
            return report;
        }
        Some(_) => {}
        None if !app.extensions.is_empty() => {
            report.message = "--extension measures an extension alone: this profile has a server (use --profile vscode-extension)".into();
            return report;
        }
        None if report.command.is_none() => {
            report.status = Status::Missing;
            report.message = format!("{} not found; {}", profile.command, profile.install_hint);
            return report;
        }
        None => {}
    }
    let shown = if app.kind == EditorKind::Vscode {
        crate::editor::refusals::shows_lines(app.kind, profile.dialect)
    } else {
        matches!(profile.dialect, DialectKind::Inline | DialectKind::Copilot)
    };
    if !shown {
        report.message = if profile.dialect == DialectKind::Completion {
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
        };
        return report;
    }
    let mut session = match EditorSession::start(
        app,
        profile,
        &Conditions::default(),
        SessionOptions::default(),
    )
    .await
    {
        Ok(s) => s,
        Err(e @ SessionError::Missing { .. }) => {
            report.status = Status::Missing;
            report.message = e.to_string();
            return report;
        }
        Err(e) => return did_not_start(report, profile, e.to_string()),
    };
    report.editor = session
        .editor_version()
        .map(|v| format!("{} {v}", app.kind.as_str()));
    let outcome = probe_in(&mut session, profile).await;
    let info = session.server_info().clone();
    report.server = ServerDesc {
        name: info.name,
        version: info.version,
    };
    // The extension hosts write their logs a moment after the fact.
    let until = std::time::Instant::now() + EXTENSIONS_WITHIN;
    report.extensions = session.extension_states();
    while std::time::Instant::now() < until
        && report
            .extensions
            .iter()
            .any(|x| !x.activated && x.activation_error.is_none())
    {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        report.extensions = session.extension_states();
    }
    conclude(&mut report, profile, outcome, false, None);
    if let Some(e) = &report.editor {
        report.message = format!("{} (in {e})", report.message);
    }
    // An extension that did not activate, or failed to, is what is missing.
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
    // Extensions that activated but ask the user to sign in, as the page shows it.
    if !report.extensions.is_empty() {
        let within = if report.status == Status::Ok {
            SIGN_IN_WITHIN
        } else {
            std::time::Duration::ZERO
        };
        let asks = session.sign_in_prompts(within).await;
        if !asks.is_empty() {
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
    }
    session
        .shutdown(crate::editor::options::SHUTDOWN_WAIT)
        .await;
    report
}

/// The probe through a real editor: the probe's file opened empty, its text placed,
/// the cursor at its end.
async fn probe_in(
    session: &mut EditorSession,
    profile: &Profile,
) -> Result<ProbeDesc, SessionError> {
    let Some(p) = &profile.probe else {
        return Ok(ProbeDesc {
            items: 0,
            latency_ms: 0.0,
            top: vec![],
            expected_in_top5: None,
        });
    };
    session.open(&p.file, "").await?;
    session.set_text(&p.file, &p.text)?;
    let cursor = Document::position_of(&p.text, p.text.len(), PositionEncoding::Utf8);
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
fn describe_session(report: &mut Report, session: &TypistSession) {
    let info = session.server_info().clone();
    report.server = ServerDesc {
        name: info.name,
        version: info.version,
    };
    let caps = session.capabilities().clone();
    report.capabilities = Some(CapsDesc {
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

async fn probe(session: &mut TypistSession, profile: &Profile) -> Result<ProbeDesc, SessionError> {
    let Some(p) = &profile.probe else {
        return Ok(ProbeDesc {
            items: 0,
            latency_ms: 0.0,
            top: vec![],
            expected_in_top5: None,
        });
    };
    session.open(&p.file, &p.text)?;
    let cursor = session
        .end_of(&p.file)
        .ok_or_else(|| SessionError::NotOpen(p.file.clone()))?;
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

fn first_line(s: &str) -> &str {
    s.lines()
        .find(|l| l.contains("Unknown binary"))
        .unwrap_or(s)
        .trim()
}
