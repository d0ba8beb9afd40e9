//! The run's VS Codes, shared by every session of the run through process-wide
//! statics: one per [`Setup`], started by the first session asking for it and again
//! when it has exited; what the stopped ones leave for the manifest (each extension's
//! activation, what typist closed over the document). [`stop_shared`] stops them all.
//! (The statics are here alone, so that an owner of the run's editors can take their
//! place.)

use std::sync::Arc;

use super::{ExtensionState, Instance, Setup};
use crate::editor::error::SessionError;

type Running = Vec<(Setup, Arc<Instance>)>;
static SHARED: tokio::sync::Mutex<Running> = tokio::sync::Mutex::const_new(Vec::new());
/// The extensions of every VS Code the run has stopped, by id.
static SEEN: std::sync::Mutex<Vec<ExtensionState>> = std::sync::Mutex::new(Vec::new());
/// What typist closed that extensions had opened over the document.
static CLOSED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Notes that typist closed `what` (a dialog, a tab, a panel an extension opened), once.
pub fn note_closed(what: String) {
    if let Ok(mut c) = CLOSED.lock()
        && !c.contains(&what)
    {
        tracing::info!("vscode: closed what an extension opened: {what}");
        c.push(what);
    }
}

/// What the run's VS Codes leave for the manifest.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stopped {
    /// Each extension installed, and whether it activated.
    pub extensions: Vec<ExtensionState>,
    /// What typist closed that extensions had opened over the document, sorted.
    pub closed: Vec<String>,
}

/// The run's VS Code for `setup`, started now if there is none or the last one has
/// exited.
pub async fn shared(setup: &Setup) -> Result<Arc<Instance>, SessionError> {
    let mut s = SHARED.lock().await;
    if let Some(at) = s.iter().position(|(k, _)| k == setup) {
        if s[at].1.alive() {
            return Ok(s[at].1.clone());
        }
        let (_, old) = s.remove(at);
        old.kill();
    }
    let i = Arc::new(Instance::start(setup).await?);
    s.push((setup.clone(), i.clone()));
    Ok(i)
}

/// Stops the run's VS Codes (code-server, its extension hosts, Chromium), if any, and
/// returns what each extension did in them and what typist closed (for the manifest).
pub async fn stop_shared() -> Stopped {
    for (_, i) in SHARED.lock().await.drain(..) {
        i.kill();
    }
    Stopped {
        extensions: SEEN
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default(),
        closed: CLOSED
            .lock()
            .map(|mut v| {
                // Sorted: which of two things opened together is seen first is a race.
                v.sort();
                std::mem::take(&mut *v)
            })
            .unwrap_or_default(),
    }
}

/// Keeps what `states` say of the extensions of a VS Code being stopped, for the
/// manifest: an extension activated in any VS Code of the run counts as activated, and
/// its first activation error is kept.
pub(super) fn remember(states: Vec<ExtensionState>) {
    if let Ok(mut seen) = SEEN.lock() {
        for st in states {
            match seen.iter_mut().find(|e| e.id.eq_ignore_ascii_case(&st.id)) {
                Some(e) => {
                    e.activated |= st.activated;
                    if e.activation_error.is_none() {
                        e.activation_error = st.activation_error;
                    }
                }
                None => seen.push(st),
            }
        }
    }
}
