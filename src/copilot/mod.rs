//! GitHub Copilot's sign-in, for users who have it: `typist login copilot` runs the
//! language server's own device flow and keeps what the server stored in typist's config
//! folder; every Copilot session gets a copy of it in its sandbox `HOME`; an existing
//! sign-in of the user's own is found and used too.
//!
//! This file holds the sign-in files (where they are, their copy into a sandbox) and
//! names nothing of the editor or LSP: the editor's workspace calls it. The device flow
//! is [`login`]'s, above the editor layer.
//!
//! What `@github/copilot-language-server` 1.539 reads (from its `dist/main.js`):
//! - environment variables first: `GH_COPILOT_TOKEN` (ignored when it holds `=`), then
//!   `GITHUB_COPILOT_TOKEN`, then `GITHUB_TOKEN` when `CODESPACES=true`. Sessions inherit
//!   typist's environment, so these reach the server as they are.
//! - then its folder `$XDG_CONFIG_HOME/github-copilot` (when that variable is absolute),
//!   else `$HOME/.config/github-copilot`: `auth.db` (SQLite, tokens in plain text), and
//!   the older `apps.json` / `hosts.json` (copilot.vim, older servers), which it migrates
//!   into `auth.db` on start.
//!
//! Sign-in requests: `signIn` answers `{status: "PromptUserDeviceFlow", userCode,
//! verificationUri, expiresIn, command}` (or `AlreadySignedIn`); running `command` through
//! `workspace/executeCommand` waits for the user's confirmation and answers `{status:
//! "OK", user}`. Offline, `signIn` fails at once with error 1001 ("Could not log in with
//! device flow on https://github.com/: getaddrinfo ENOTFOUND github.com").
//!
//! `auth_reason` is what `doctor` says about the sign-in.

pub mod login;

use std::path::{Path, PathBuf};

/// The files of the server's folder that hold a sign-in.
const FILES: [&str; 5] = [
    "auth.db",
    "auth.db-wal",
    "auth.db-shm",
    "apps.json",
    "hosts.json",
];

pub use crate::vault::config_dir;

/// The vault entry (assistant, editor) that holds the GitHub sign-in.
pub const GITHUB_ENTRY: (&str, &str) = ("copilot", "github");
/// The GitHub app id Copilot's plugins sign in as (the key of `apps.json`).
pub const APP_ID: &str = "Iv1.b507a08c87ecfe98";

/// Where `typist login copilot` keeps the server's `github-copilot` folder: the home
/// part of the vault's GitHub entry (before the vault, `<config>/copilot/github-copilot`,
/// still read when the vault has none).
pub fn store() -> Option<PathBuf> {
    let (a, e) = GITHUB_ENTRY;
    let in_vault = crate::vault::Vault::open()
        .ok()?
        .entry(a, e)
        .ok()?
        .dir()
        .join(crate::vault::HOME)
        .join(".config")
        .join("github-copilot");
    let legacy = config_dir()?.join("copilot").join("github-copilot");
    if !has_sign_in_files(&in_vault) && has_sign_in_files(&legacy) {
        return Some(legacy);
    }
    Some(in_vault)
}

/// The GitHub OAuth token of a `github-copilot` folder: `apps.json`'s or `hosts.json`'s
/// `oauth_token`, else the newest `gho_`/`ghu_` token written in `auth.db`'s WAL or
/// `auth.db` (SQLite keeps it as plain text where no desktop keyring encrypts it).
pub fn github_token(dir: &Path) -> Option<String> {
    for f in ["apps.json", "hosts.json"] {
        let Ok(text) = std::fs::read_to_string(dir.join(f)) else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        let found = v.as_object().and_then(|o| {
            o.values()
                .filter_map(|x| x.get("oauth_token").and_then(|t| t.as_str()))
                .find(|t| !t.is_empty())
                .map(str::to_string)
        });
        if found.is_some() {
            return found;
        }
    }
    for f in ["auth.db-wal", "auth.db"] {
        let Ok(bytes) = std::fs::read(dir.join(f)) else {
            continue;
        };
        if let Some(t) = last_token_in(&bytes) {
            return Some(t);
        }
    }
    None
}

/// The last `gho_`/`ghu_` token (the prefix and at least 36 more letters and digits) in
/// `bytes`.
fn last_token_in(bytes: &[u8]) -> Option<String> {
    let mut found = None;
    let mut i = 0;
    while i + 4 <= bytes.len() {
        let p = &bytes[i..i + 4];
        if p == b"gho_" || p == b"ghu_" {
            let n = bytes[i + 4..]
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric())
                .count();
            if n >= 36 {
                found = Some(String::from_utf8_lossy(&bytes[i..i + 4 + n]).into_owned());
                i += 4 + n;
                continue;
            }
        }
        i += 1;
    }
    found
}

/// The user's own `github-copilot` folder, where the server itself looks.
pub fn user_dir() -> Option<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from)
        && x.is_absolute()
    {
        return Some(x.join("github-copilot"));
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(PathBuf::from(home).join(".config").join("github-copilot"))
}

/// A sign-in typist can give the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credentials {
    /// An environment variable the server reads itself.
    Env(&'static str),
    /// A folder of the server's files: typist's own (`typist login copilot`) or the
    /// user's.
    Folder { path: PathBuf, typist: bool },
}

impl std::fmt::Display for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credentials::Env(v) => write!(f, "${v}"),
            Credentials::Folder { path, typist: true } => {
                write!(f, "typist login copilot ({})", path.display())
            }
            Credentials::Folder {
                path,
                typist: false,
            } => write!(f, "your own sign-in ({})", path.display()),
        }
    }
}

pub(super) fn has_sign_in_files(dir: &Path) -> bool {
    // auth.db alone may be an empty store (the server creates it on every start); the
    // server's own check says whether it holds a token.
    FILES.iter().any(|f| dir.join(f).is_file())
}

fn env_token(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| !v.is_empty())
}

/// The sign-in the server will use, in its own order: environment variables, then the
/// folder typist copies into the sandbox (typist's own before the user's).
pub fn find() -> Option<Credentials> {
    if env_token("GH_COPILOT_TOKEN").is_some_and(|t| !t.contains('=')) {
        return Some(Credentials::Env("GH_COPILOT_TOKEN"));
    }
    if env_token("GITHUB_COPILOT_TOKEN").is_some() {
        return Some(Credentials::Env("GITHUB_COPILOT_TOKEN"));
    }
    if std::env::var("CODESPACES").as_deref() == Ok("true") && env_token("GITHUB_TOKEN").is_some() {
        return Some(Credentials::Env("GITHUB_TOKEN"));
    }
    folder()
}

/// The folder whose files go into a session's sandbox.
fn folder() -> Option<Credentials> {
    if let Some(s) = store()
        && has_sign_in_files(&s)
    {
        return Some(Credentials::Folder {
            path: s,
            typist: true,
        });
    }
    if let Some(u) = user_dir()
        && has_sign_in_files(&u)
    {
        return Some(Credentials::Folder {
            path: u,
            typist: false,
        });
    }
    None
}

pub(super) fn copy_files(from: &Path, to: &Path) -> std::io::Result<usize> {
    std::fs::create_dir_all(to)?;
    let mut n = 0;
    for f in FILES {
        let src = from.join(f);
        if src.is_file() {
            std::fs::copy(&src, to.join(f))?;
            // The tokens in it (`oauth_token`) are secrets from now on.
            if let Ok(v) = std::fs::read_to_string(&src)
                .map_err(|_| ())
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).map_err(|_| ()))
            {
                crate::secrets::register_value(&v);
            }
            n += 1;
        }
    }
    Ok(n)
}

/// Copies the sign-in folder into a sandbox `HOME` (where the server looks with
/// `XDG_CONFIG_HOME=HOME/.config`). Returns where it came from, if anywhere.
pub fn seed_home(home: &Path) -> std::io::Result<Option<Credentials>> {
    let Some(found) = folder() else {
        return Ok(None);
    };
    if let Credentials::Folder { path, .. } = &found {
        copy_files(path, &home.join(".config").join("github-copilot"))?;
    }
    Ok(Some(found))
}

/// What `doctor` says about the sign-in, given the server's local `checkStatus`.
pub fn auth_reason(status: Option<&str>) -> String {
    let found = find();
    let signed_in = status.is_some_and(|s| {
        matches!(
            s.to_ascii_lowercase().as_str(),
            "ok" | "maybeok" | "alreadysignedin"
        )
    });
    match (found, signed_in) {
        (Some(c), true) => format!("signed in ({}) through {c}", status.unwrap_or("")),
        (Some(c), false) => format!(
            "the server did not accept the sign-in from {c} ({}); run `typist login copilot`",
            status.unwrap_or("no status")
        ),
        (None, _) => format!(
            "not signed in: no $GH_COPILOT_TOKEN or $GITHUB_COPILOT_TOKEN, and no sign-in in {} or {}; run `typist login copilot`",
            store().map_or("typist's config folder".into(), |p| p.display().to_string()),
            user_dir().map_or("~/.config/github-copilot".into(), |p| p
                .display()
                .to_string()),
        ),
    }
}

/// Node's and the server's words for a network that cannot be reached.
pub fn is_network_failure(message: &str) -> bool {
    [
        "ENOTFOUND",
        "EAI_AGAIN",
        "ENETUNREACH",
        "EHOSTUNREACH",
        "ECONNREFUSED",
        "ECONNRESET",
        "ETIMEDOUT",
        "getaddrinfo",
        "tunneling socket could not be established",
        "socket hang up",
        "network",
    ]
    .iter()
    .any(|w| message.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_read_from_apps_json_or_found_in_auth_db() {
        let t = tempfile::tempdir().unwrap();
        let tok = format!("gho_{}", "a1".repeat(18));
        std::fs::write(
            t.path().join("apps.json"),
            format!(r#"{{"github.com:{APP_ID}":{{"user":"u","oauth_token":"{tok}"}}}}"#),
        )
        .unwrap();
        assert_eq!(github_token(t.path()).as_deref(), Some(tok.as_str()));
        let u = tempfile::tempdir().unwrap();
        let newer = format!("ghu_{}", "b2".repeat(18));
        let mut db = b"SQLite format 3\0....".to_vec();
        db.extend_from_slice(tok.as_bytes());
        db.extend_from_slice(b"\x01\x02");
        db.extend_from_slice(newer.as_bytes());
        std::fs::write(u.path().join("auth.db"), db).unwrap();
        assert_eq!(github_token(u.path()).as_deref(), Some(newer.as_str()));
        assert_eq!(last_token_in(b"gho_short"), None);
    }

    #[test]
    fn network_failures_are_told_apart() {
        assert!(is_network_failure(
            "Could not log in with device flow on https://github.com/: getaddrinfo ENOTFOUND github.com"
        ));
        assert!(is_network_failure(
            "tunneling socket could not be established, cause=connect ECONNREFUSED 127.0.0.1:9"
        ));
        assert!(!is_network_failure("Not authenticated: NotSignedIn"));
    }
}
