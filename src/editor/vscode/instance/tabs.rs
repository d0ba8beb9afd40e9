//! The browser's tabs over DevTools: a tab opened and attached, closed, a script
//! evaluated in its page, and Chromium's one login to code-server.

use std::time::Instant;

use serde_json::{Value, json};

use super::super::cdp::CdpError;
use super::{CALL, Instance, PAGE_POLL, PAGE_WITHIN, failed};
use crate::editor::error::{EditorError, SessionError};

/// code-server's login page has loaded its form.
const LOGIN_FORM: &str = include_str!("login_form.js");
/// Called with the password: types it into the login form and submits it.
const LOGIN_SUBMIT: &str = include_str!("login_submit.js");
/// The login page has gone and the next page is parsed.
const LOGIN_DONE: &str = include_str!("login_done.js");

impl Instance {
    /// A new tab, attached: its session id.
    pub async fn new_tab(&self) -> Result<(String, String), SessionError> {
        let t = self
            .cdp
            .call(
                "Target.createTarget",
                json!({"url": "about:blank"}),
                None,
                CALL,
            )
            .await
            .map_err(|e| self.error("Target.createTarget", e))?;
        let target = t["targetId"].as_str().unwrap_or("").to_string();
        let a = self
            .cdp
            .call(
                "Target.attachToTarget",
                json!({"targetId": target, "flatten": true}),
                None,
                CALL,
            )
            .await
            .map_err(|e| self.error("Target.attachToTarget", e))?;
        let session = a["sessionId"].as_str().unwrap_or("").to_string();
        Ok((target, session))
    }

    pub async fn close_tab(&self, target: &str) {
        let _ = self
            .cdp
            .call(
                "Target.closeTarget",
                json!({"targetId": target}),
                None,
                CALL,
            )
            .await;
    }

    /// The error of a DevTools command, naming VS Code's end when it has ended.
    pub fn error(&self, what: &str, e: CdpError) -> SessionError {
        match self.ended() {
            Some(why) => EditorError::Exited(format!("vscode: {why}")).into(),
            None if matches!(e, CdpError::Closed) => {
                EditorError::Exited(format!("vscode: chromium: {what}: {e}")).into()
            }
            None => failed(format!("vscode: chromium: {what}: {e}")),
        }
    }

    /// Evaluates `expr` in a page and returns its value (by value).
    pub async fn eval(&self, session: &str, expr: &str) -> Result<Value, SessionError> {
        let r = self
            .cdp
            .call(
                "Runtime.evaluate",
                json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
                Some(session),
                CALL,
            )
            .await
            .map_err(|e| self.error("Runtime.evaluate", e))?;
        if let Some(ex) = r.get("exceptionDetails") {
            return Err(failed(format!(
                "vscode: page script failed: {}",
                ex["exception"]["description"]
                    .as_str()
                    .unwrap_or(&ex.to_string())
            )));
        }
        Ok(r["result"]["value"].clone())
    }

    /// Logs Chromium in once: code-server's login page, the password typed into its
    /// form; the session cookie then serves every tab. `storage`: localStorage entries
    /// of the origin set on the login page first, before any workbench loads (the
    /// sign-in, `signin.rs`).
    pub(super) async fn login(
        &self,
        password: &str,
        storage: &std::collections::BTreeMap<String, String>,
    ) -> Result<(), SessionError> {
        let (target, s) = self.new_tab().await?;
        let url = format!("{}/login", self.url());
        self.cdp
            .call("Page.navigate", json!({"url": url}), Some(&s), CALL)
            .await
            .map_err(|e| self.error("Page.navigate", e))?;
        let deadline = Instant::now() + PAGE_WITHIN;
        while self.eval(&s, LOGIN_FORM).await? != Value::Bool(true) {
            if Instant::now() >= deadline {
                return Err(failed(
                    "vscode: code-server's login page did not load".into(),
                ));
            }
            tokio::time::sleep(PAGE_POLL).await;
        }
        super::signin::set_storage(self, &s, storage).await?;
        let submit = format!("({LOGIN_SUBMIT})({})", json!(password));
        self.eval(&s, &submit).await?;
        loop {
            if let Ok(Value::Bool(true)) = self.eval(&s, LOGIN_DONE).await {
                break;
            }
            if Instant::now() >= deadline {
                return Err(failed("vscode: the login to code-server failed".into()));
            }
            tokio::time::sleep(PAGE_POLL).await;
        }
        self.close_tab(&target).await;
        Ok(())
    }
}
