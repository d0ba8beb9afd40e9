//! The web pages' sessions (docs/service.md#the-web-pages): the service's key, the
//! signed session cookie and form tokens, the check of a request's origin, and how a
//! page or its error is answered.

use std::path::Path;

use askama::Template;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use hmac::{KeyInit, Mac};

use super::api::ApiError;
use super::db::Caller;
use super::state::Hub;

/// How long a session lasts.
pub(super) const SESSION_SECS: u64 = 12 * 3600;
pub(super) const SESSION_COOKIE: &str = "typist_session";
pub(super) const LOGIN_COOKIE: &str = "typist_login";

pub(super) type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// The service's key for sessions and form tokens: `secret.key` in `data`, made (32
/// random bytes, readable by the service's user only) when missing.
pub fn load_key(data: &Path) -> anyhow::Result<Vec<u8>> {
    use anyhow::Context;
    let path = data.join("secret.key");
    let read = super::layout::open_regular(&path).and_then(|mut f| {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut bytes).map(|_| bytes)
    });
    match read {
        Ok(k) if k.len() >= 32 => return Ok(k),
        Ok(_) => anyhow::bail!(
            "{} is shorter than 32 bytes: remove it (every session ends) and start again",
            path.display()
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
    let key = super::token::new_token()?.into_bytes();
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    f.write_all(&key)?;
    Ok(key)
}

pub(super) fn mac(key: &[u8], parts: &[&str]) -> String {
    let mut m = <HmacSha256 as KeyInit>::new_from_slice(key).expect("HMAC takes any key");
    for p in parts {
        m.update(p.as_bytes());
        m.update(b"\0");
    }
    crate::digest::hex(&m.finalize().into_bytes())
}

/// Compares two tokens in time that does not depend on where they differ.
pub(super) fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

pub(super) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

pub(super) fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// A logged-in person: who, and their session's form token.
pub(super) struct Session {
    pub(super) who: Caller,
    pub(super) csrf: String,
}

/// The session the request's cookie names, when it is valid: signed by the service,
/// not expired, and its token still the one the database holds.
pub(super) fn session(hub: &Hub, headers: &HeaderMap) -> Option<Session> {
    let value = cookie(headers, SESSION_COOKIE)?;
    let mut it = value.split('.');
    let (id, expires, sig) = (it.next()?, it.next()?, it.next()?);
    let (id_n, exp_n): (i64, u64) = (id.parse().ok()?, expires.parse().ok()?);
    if exp_n < now_secs() {
        return None;
    }
    let (who, sha) = hub.db.token(id_n).ok()??;
    if !same(sig, &mac(&hub.key, &["session", id, expires, &sha])) {
        return None;
    }
    Some(Session {
        who,
        csrf: mac(&hub.key, &["csrf", value]),
    })
}

/// The benchmarks' names, for the pages' menus.
pub(super) fn bench_names(hub: &Hub) -> Vec<&str> {
    hub.benchmarks.iter().map(|b| b.name.as_str()).collect()
}

/// A page's answer: HTML, or a redirect.
pub(super) type Page = Result<Response, PageError>;

/// An error shown as a page.
pub(super) struct PageError(pub(super) StatusCode, pub(super) String);

impl From<ApiError> for PageError {
    fn from(e: ApiError) -> Self {
        PageError(e.0, e.1)
    }
}

impl From<anyhow::Error> for PageError {
    fn from(e: anyhow::Error) -> Self {
        tracing::error!("hub: {e:#}");
        PageError(StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}"))
    }
}

impl From<askama::Error> for PageError {
    fn from(e: askama::Error) -> Self {
        PageError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
    }
}

#[derive(Template)]
#[template(path = "hub_error.html")]
pub(super) struct ErrorPage<'a> {
    who: Option<&'a str>,
    csrf: &'a str,
    benchmarks: Vec<&'a str>,
    status: String,
    message: &'a str,
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let page = ErrorPage {
            who: None,
            csrf: "",
            benchmarks: Vec::new(),
            status: self.0.to_string(),
            message: &self.1,
        };
        (self.0, html(page.render().unwrap_or_default())).into_response()
    }
}

/// An HTML answer, with headers that keep it from being framed or sniffed, and its
/// scripts to the page's own.
pub(super) fn html(body: String) -> Response {
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(
                    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'",
                ),
            ),
            (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        body,
    )
        .into_response()
}

pub(super) fn login_redirect() -> Response {
    Redirect::to("/login").into_response()
}

/// A state-changing request from elsewhere (its `Origin` another site's) is refused,
/// whatever it carries.
pub(super) fn same_origin(headers: &HeaderMap) -> Result<(), PageError> {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return Ok(());
    };
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let bare = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .unwrap_or(origin);
    if bare != host {
        return Err(PageError(
            StatusCode::FORBIDDEN,
            format!("a form sent from {origin} is refused: use the service's own pages"),
        ));
    }
    Ok(())
}

pub(super) fn forgery() -> PageError {
    PageError(
        StatusCode::FORBIDDEN,
        "the form's token is missing or not this session's (a form from another site, or an old page): open the page again and send it from there".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_signed_for_its_token_and_a_form_token_for_its_session() {
        let key = b"0123456789abcdef0123456789abcdef";
        let a = mac(key, &["session", "1", "99", "sha-a"]);
        assert_eq!(a.len(), 64);
        assert_ne!(a, mac(key, &["session", "1", "99", "sha-b"]));
        assert_ne!(
            a,
            mac(
                b"another key, as long as the first",
                &["session", "1", "99", "sha-a"]
            )
        );
        // Parts are kept apart: "1" + "99" is not "19" + "9".
        assert_ne!(a, mac(key, &["session", "19", "9", "sha-a"]));
        assert!(same(&a, &a.clone()));
        assert!(!same(&a, &a[..63]));
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("x=1; typist_session=1.2.3"),
        );
        assert_eq!(cookie(&h, SESSION_COOKIE), Some("1.2.3"));
        let mut h = HeaderMap::new();
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://evil.example"),
        );
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:8765"));
        assert!(same_origin(&h).is_err());
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://127.0.0.1:8765"),
        );
        assert!(same_origin(&h).is_ok());
    }
}
