//! The run's VS Codes, owned by the run's editors host (`editor/editors.rs`): one per
//! [`Setup`], started by the first session asking for it and again when it has
//! exited; what the stopped ones leave for the manifest (each extension's activation,
//! what typist closed over the document). [`VscodeHost::close`] stops them all.

use std::sync::{Arc, Mutex};

use super::{ExtensionState, Instance, Setup};
use crate::editor::error::SessionError;
use crate::editor::extensions::Closed;

/// The VS Codes of one run, and what the stopped ones left.
#[derive(Default)]
pub struct VscodeHost {
    running: tokio::sync::Mutex<Vec<(Setup, Arc<Instance>)>>,
    /// The extensions of every VS Code the run has stopped, by id.
    seen: Mutex<Vec<ExtensionState>>,
    /// What typist closed that extensions had opened over the document.
    closed: Mutex<Vec<String>>,
}

impl VscodeHost {
    /// The run's VS Code for `setup`, started now if there is none or the last one has
    /// exited.
    pub async fn instance(&self, setup: &Setup) -> Result<Arc<Instance>, SessionError> {
        let mut s = self.running.lock().await;
        if let Some(at) = s.iter().position(|(k, _)| k == setup) {
            if s[at].1.alive() {
                return Ok(s[at].1.clone());
            }
            let (_, old) = s.remove(at);
            self.stop(&old).await;
        }
        let i = Arc::new(Instance::start(setup).await?);
        s.push((setup.clone(), i.clone()));
        Ok(i)
    }

    /// Notes that typist closed `what` (a dialog, a tab, a panel an extension opened),
    /// once.
    pub fn note_closed(&self, what: String) {
        if let Ok(mut c) = self.closed.lock()
            && !c.contains(&what)
        {
            tracing::info!("vscode: closed what an extension opened: {what}");
            c.push(what);
        }
    }

    /// Stops the run's VS Codes (code-server, its extension hosts, Chromium), if any,
    /// and returns what each extension did in them and what typist closed.
    pub async fn close(&self) -> Closed {
        let running: Vec<_> = self.running.lock().await.drain(..).collect();
        for (_, i) in running {
            self.stop(&i).await;
        }
        Closed {
            extensions: self
                .seen
                .lock()
                .map(|mut v| std::mem::take(&mut *v))
                .unwrap_or_default(),
            closed: self
                .closed
                .lock()
                .map(|mut v| {
                    // Sorted: which of two things opened together is seen first is a
                    // race.
                    v.sort();
                    std::mem::take(&mut *v)
                })
                .unwrap_or_default(),
            vault: Vec::new(),
        }
    }

    /// Stops `i`, keeping what its extensions did first: an extension activated in any
    /// VS Code of the run counts as activated, and its first activation error is kept;
    /// and writes back what it changed of its sign-in (the browser's storage read back
    /// while it still runs, the files once it has stopped).
    async fn stop(&self, i: &Instance) {
        i.read_back_storage().await;
        let states = i.extension_states();
        if let Ok(mut seen) = self.seen.lock() {
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
        i.kill();
        i.write_back_signin();
    }
}
