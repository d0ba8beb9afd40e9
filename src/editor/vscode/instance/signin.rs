//! A VS Code that starts signed in: the vault entry of its assistant copied in before
//! code-server starts, and what the extensions changed of it written back when it
//! stops (`src/vault.rs`).
//!
//! code-server 4.139 keeps every extension's `context.secrets` in the *browser's*
//! localStorage of the page's origin, key `secrets.provider`, AES-GCM encrypted with a
//! key that is a client half (stored inside the value) XOR a 32-byte server half that
//! code-server reads from `<user-data-dir>/serve-web-key-half` (its `/mint-key` route);
//! a value that does not decrypt is deleted. So an entry's parts go: `user-data`
//! (`serve-web-key-half`) into the user-data folder and `home` into the `HOME` before
//! code-server starts; `browser` (`local-storage.json`: the origin's localStorage
//! entries typist keeps) into the origin's localStorage on code-server's login page,
//! before any workbench loads. The origin's port is picked per run: the values are set
//! through the page, so no fixed origin is needed. When the VS Code stops, the origin's
//! localStorage is read back from a page of the origin into `local-storage.json`, and
//! every part is written back (only files that changed; see `Entry::write_back`).
//!
//! With `[signin] github`, the entry is the GitHub sign-in of `typist login copilot`:
//! its token is written, mode 0600, to the file typist's own `github` authentication
//! provider serves (`fixtures/vscode/typist-github-auth`).

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde_json::{Value, json};

use super::{CALL, Instance, PAGE_POLL, PAGE_WITHIN, Setup, failed};
use crate::editor::error::SessionError;
use crate::editor::signin::SessionSignIn;
use crate::vault::{BROWSER, HOME, USER_DATA};

/// The file of the `browser` part: a JSON object of localStorage key → value.
pub const LOCAL_STORAGE: &str = "local-storage.json";
/// The localStorage keys of the origin typist keeps: VS Code's secret storage.
pub const KEPT_KEYS: &[&str] = &["secrets.provider"];
/// The file of the user-data part: the server's half of the secret storage's key.
pub const KEY_HALF: &str = "serve-web-key-half";
/// Where typist's `github` provider reads its session, relative to `HOME`.
pub const GITHUB_SESSION: &str = ".config/typist-vscode/github-session.json";

/// What an instance was given of its sign-in: the copies (written back on stop) and the
/// localStorage entries to set before the workbench loads.
pub(super) struct Seeded {
    pub signin: Option<SessionSignIn>,
    pub storage: BTreeMap<String, String>,
}

/// Copies `setup`'s entry into the scratch folder `dir` (`user-data`, `home`, and the
/// browser part into `browser/`), before code-server starts.
pub(super) fn seed(setup: &Setup, dir: &Path) -> Result<Seeded, SessionError> {
    let Some(entry) = &setup.signin else {
        return Ok(Seeded {
            signin: None,
            storage: BTreeMap::new(),
        });
    };
    let mut s = SessionSignIn::new(entry.clone());
    let home = dir.join("home");
    s.seed(USER_DATA, &dir.join("user-data"))?;
    s.seed(HOME, &home)?;
    let browser = dir.join("browser");
    s.seed(BROWSER, &browser)?;
    let storage = read_storage_file(&browser.join(LOCAL_STORAGE));
    if setup.github {
        let token = crate::copilot::github_token(&home.join(".config/github-copilot")).ok_or_else(
            || SessionError::NotSignedIn {
                server: entry.assistant.clone(),
                message: format!(
                    "the GitHub sign-in {} holds no token; run `typist login copilot`",
                    entry.name()
                ),
            },
        )?;
        crate::secrets::register(&token);
        write_github_session(&home, &token)?;
    }
    Ok(Seeded {
        signin: Some(s),
        storage,
    })
}

fn read_storage_file(p: &Path) -> BTreeMap<String, String> {
    std::fs::read(p)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Writes the session typist's `github` provider serves into `home` (mode 0600).
fn write_github_session(home: &Path, token: &str) -> Result<(), SessionError> {
    let p = home.join(GITHUB_SESSION);
    let dir = p.parent().unwrap_or(home);
    std::fs::create_dir_all(dir).map_err(SessionError::file(dir))?;
    let body = json!({
        "id": "typist",
        "accessToken": token,
        "account": {"id": "typist", "label": "typist"},
        "scopes": ["read:user", "user:email", "repo", "workflow"],
    });
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&p)
        .map_err(SessionError::file(&p))?;
    f.write_all(body.to_string().as_bytes())
        .map_err(SessionError::file(&p))
}

/// Sets `items` in the localStorage of the page attached as `session` (the origin's).
pub(super) async fn set_storage(
    i: &Instance,
    session: &str,
    items: &BTreeMap<String, String>,
) -> Result<(), SessionError> {
    if items.is_empty() {
        return Ok(());
    }
    let expr = format!(
        "(() => {{ const o = {}; for (const k of Object.keys(o)) localStorage.setItem(k, o[k]); return true; }})()",
        json!(items)
    );
    i.eval(session, &expr).await.map(|_| ())
}

/// The localStorage entries of a page attached as `session` that typist keeps.
async fn kept_storage(
    i: &Instance,
    session: &str,
) -> Result<BTreeMap<String, String>, SessionError> {
    let expr = format!(
        "(() => {{ const out = {{}}; for (const k of {}) {{ const v = localStorage.getItem(k); if (v !== null) out[k] = v; }} return out; }})()",
        json!(KEPT_KEYS)
    );
    let v = i.eval(session, &expr).await?;
    Ok(serde_json::from_value(v).unwrap_or_default())
}

impl Instance {
    /// The origin's localStorage entries typist keeps, read from a tab of its own on a
    /// page of the origin (code-server's `/healthz`, which needs no workbench).
    pub async fn origin_storage(&self) -> Result<BTreeMap<String, String>, SessionError> {
        let (target, s) = self.new_tab().await?;
        let r = async {
            self.cdp
                .call(
                    "Page.navigate",
                    json!({"url": format!("{}/healthz", self.url())}),
                    Some(&s),
                    CALL,
                )
                .await
                .map_err(|e| self.error("Page.navigate", e))?;
            let deadline = std::time::Instant::now() + PAGE_WITHIN;
            let here = format!("location.origin === {}", json!(self.url()));
            while self.eval(&s, &here).await? != Value::Bool(true) {
                if std::time::Instant::now() >= deadline {
                    return Err(failed(
                        "vscode: a page of code-server's origin did not load".into(),
                    ));
                }
                tokio::time::sleep(PAGE_POLL).await;
            }
            kept_storage(self, &s).await
        }
        .await;
        self.close_tab(&target).await;
        r
    }

    /// Before this VS Code stops: the origin's localStorage read back into the browser
    /// part's copy (when the browser still answers), so what the extensions stored goes
    /// back with [`Instance::write_back_signin`].
    pub async fn read_back_storage(&self) {
        let has = self.signin.lock().map(|s| s.is_some()).unwrap_or(false);
        if !has || !self.alive() {
            return;
        }
        match self.origin_storage().await {
            Ok(items) => {
                let p = self.dir.join("browser").join(LOCAL_STORAGE);
                if let Err(e) = write_storage_file(&p, &items) {
                    tracing::warn!("vscode: cannot keep the browser's storage: {e}");
                }
            }
            Err(e) => tracing::warn!("vscode: cannot read the browser's storage back: {e}"),
        }
    }

    /// Writes back what this VS Code changed of its sign-in (after it stopped).
    pub fn write_back_signin(&self) {
        if let Ok(mut s) = self.signin.lock()
            && let Some(mut s) = s.take()
        {
            s.write_back();
        }
    }
}

/// Writes `items` as the browser part's `local-storage.json` (sorted, pretty: the same
/// bytes for the same entries, so an unchanged storage is not written back).
pub fn write_storage_file(p: &Path, items: &BTreeMap<String, String>) -> std::io::Result<()> {
    for v in items.values() {
        crate::secrets::register(v);
    }
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(p)?;
    f.write_all(&serde_json::to_vec_pretty(items).unwrap_or_default())
}
