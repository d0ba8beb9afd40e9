//! The service's web pages (docs/service.md): log in with an API token, submit (the
//! same form the API takes, uploads included), follow a submission's progress (the page
//! asks for its state every second), open its report and records, see each benchmark's
//! board and compare any two of its submissions.
//!
//! A person logs in once with their token: the service answers with a session cookie
//! (HttpOnly, SameSite=Strict) that names the token and when it expires, signed with the
//! service's own key (`secret.key` in the data folder, made at the first start, never
//! shown). The token itself is not kept in the browser. Every form that changes
//! anything (log in, log out, submit) carries a token against cross-site request
//! forgery: signed by the same key for that session (for the login form, for a cookie
//! set with the form). A request whose `Origin` is not the service's own is refused as
//! well.

use std::path::Path;
use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::{FromRequest, Multipart, Path as UrlPath, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use hmac::{KeyInit, Mac};
use serde::Deserialize;
use serde_json::Value;

use super::api::{ApiError, accept, read_form};
use super::db::{Caller, Submission};
use super::state::Hub;

/// How long a session lasts.
const SESSION_SECS: u64 = 12 * 3600;
const SESSION_COOKIE: &str = "typist_session";
const LOGIN_COOKIE: &str = "typist_login";

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

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

fn mac(key: &[u8], parts: &[&str]) -> String {
    let mut m = <HmacSha256 as KeyInit>::new_from_slice(key).expect("HMAC takes any key");
    for p in parts {
        m.update(p.as_bytes());
        m.update(b"\0");
    }
    m.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Compares two tokens in time that does not depend on where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
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
struct Session {
    who: Caller,
    csrf: String,
}

/// The session the request's cookie names, when it is valid: signed by the service,
/// not expired, and its token still the one the database holds.
fn session(hub: &Hub, headers: &HeaderMap) -> Option<Session> {
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

/// A page's answer: HTML, or a redirect.
type Page = Result<Response, PageError>;

/// An error shown as a page.
struct PageError(StatusCode, String);

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
struct ErrorPage<'a> {
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
fn html(body: String) -> Response {
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

fn login_redirect() -> Response {
    Redirect::to("/login").into_response()
}

/// A state-changing request from elsewhere (its `Origin` another site's) is refused,
/// whatever it carries.
fn same_origin(headers: &HeaderMap) -> Result<(), PageError> {
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

fn forgery() -> PageError {
    PageError(
        StatusCode::FORBIDDEN,
        "the form's token is missing or not this session's (a form from another site, or an old page): open the page again and send it from there".into(),
    )
}

pub fn router(hub: Arc<Hub>) -> Router {
    Router::new()
        .route("/", get(home))
        .route("/login", get(login_page).post(login))
        .route("/logout", post(logout))
        .route(
            "/submit",
            get(submit_page)
                .post(submit)
                .layer(axum::extract::DefaultBodyLimit::max(
                    super::api::UPLOAD_BODY,
                )),
        )
        .route("/submissions/{id}", get(submission))
        .route("/submissions/{id}/state", get(submission_state))
        .route("/submissions/{id}/report", get(report))
        .route("/submissions/{id}/records", get(records))
        .route("/benchmarks/{name}", get(board))
        .route("/benchmarks/{name}/compare", get(compare))
        .with_state(hub)
}

#[derive(Template)]
#[template(path = "hub_login.html")]
struct LoginPage<'a> {
    who: Option<&'a str>,
    csrf: &'a str,
    benchmarks: Vec<&'a str>,
    error: Option<&'a str>,
}

/// The login form, with a fresh login cookie and the form token signed for it.
fn login_form(hub: &Hub, error: Option<&str>, status: StatusCode) -> Page {
    let nonce = super::token::new_token()?;
    let csrf = mac(&hub.key, &["login", &nonce]);
    let page = LoginPage {
        who: None,
        csrf: &csrf,
        benchmarks: Vec::new(),
        error,
    };
    let mut r = html(page.render()?);
    *r.status_mut() = status;
    r.headers_mut().append(
        header::SET_COOKIE,
        HeaderValue::from_str(&format!(
            "{LOGIN_COOKIE}={nonce}; HttpOnly; SameSite=Strict; Path=/login; Max-Age=3600"
        ))
        .map_err(|e| anyhow::anyhow!("{e}"))?,
    );
    Ok(r)
}

async fn login_page(State(hub): State<Arc<Hub>>, headers: HeaderMap) -> Page {
    if session(&hub, &headers).is_some() {
        return Ok(Redirect::to("/").into_response());
    }
    login_form(&hub, None, StatusCode::OK)
}

#[derive(Deserialize)]
struct LoginForm {
    #[serde(default)]
    token: String,
    #[serde(default)]
    csrf: String,
}

async fn login(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    axum::Form(f): axum::Form<LoginForm>,
) -> Page {
    same_origin(&headers)?;
    let nonce = cookie(&headers, LOGIN_COOKIE).unwrap_or_default();
    if nonce.is_empty() || !same(&f.csrf, &mac(&hub.key, &["login", nonce])) {
        return Err(forgery());
    }
    let Some(who) = hub.db.caller(f.token.trim())? else {
        return login_form(&hub, Some("unknown token"), StatusCode::UNAUTHORIZED);
    };
    let (_, sha) = hub
        .db
        .token(who.id)?
        .ok_or_else(|| anyhow::anyhow!("token {} vanished", who.id))?;
    let expires = (now_secs() + SESSION_SECS).to_string();
    let id = who.id.to_string();
    let sig = mac(&hub.key, &["session", &id, &expires, &sha]);
    let mut r = Redirect::to("/").into_response();
    r.headers_mut().append(
        header::SET_COOKIE,
        HeaderValue::from_str(&format!(
            "{SESSION_COOKIE}={id}.{expires}.{sig}; HttpOnly; SameSite=Strict; Path=/; Max-Age={SESSION_SECS}"
        ))
        .map_err(|e| anyhow::anyhow!("{e}"))?,
    );
    r.headers_mut().append(
        header::SET_COOKIE,
        HeaderValue::from_static("typist_login=; Path=/login; Max-Age=0"),
    );
    tracing::info!(who = %who.name, "hub: logged in");
    Ok(r)
}

#[derive(Deserialize)]
struct CsrfForm {
    #[serde(default)]
    csrf: String,
}

async fn logout(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    axum::Form(f): axum::Form<CsrfForm>,
) -> Page {
    same_origin(&headers)?;
    let Some(s) = session(&hub, &headers) else {
        return Ok(login_redirect());
    };
    if !same(&f.csrf, &s.csrf) {
        return Err(forgery());
    }
    let mut r = Redirect::to("/login").into_response();
    r.headers_mut().append(
        header::SET_COOKIE,
        HeaderValue::from_static("typist_session=; Path=/; Max-Age=0"),
    );
    Ok(r)
}

fn bench_names(hub: &Hub) -> Vec<&str> {
    hub.benchmarks.iter().map(|b| b.name.as_str()).collect()
}

#[derive(Template)]
#[template(path = "hub_home.html")]
struct HomePage<'a> {
    who: Option<&'a str>,
    csrf: &'a str,
    benchmarks: Vec<&'a str>,
    subs: Vec<Submission>,
}

async fn home(State(hub): State<Arc<Hub>>, headers: HeaderMap) -> Page {
    let Some(s) = session(&hub, &headers) else {
        return Ok(login_redirect());
    };
    let subs = hub
        .db
        .submissions()?
        .into_iter()
        .filter(|x| s.who.admin || x.token_id == s.who.id)
        .rev()
        .collect();
    Ok(html(
        HomePage {
            who: Some(&s.who.name),
            csrf: &s.csrf,
            benchmarks: bench_names(&hub),
            subs,
        }
        .render()?,
    ))
}

#[derive(Template)]
#[template(path = "hub_submit.html")]
struct SubmitPage<'a> {
    who: Option<&'a str>,
    csrf: &'a str,
    benchmarks: Vec<&'a str>,
    profiles: Vec<String>,
    error: Option<&'a str>,
    max_mib: usize,
}

fn submit_form(hub: &Hub, s: &Session, error: Option<&str>, status: StatusCode) -> Page {
    let profiles = crate::editor::profile::all_profiles(None)
        .map(|ps| ps.into_iter().map(|p| p.name).collect())
        .unwrap_or_default();
    let mut r = html(
        SubmitPage {
            who: Some(&s.who.name),
            csrf: &s.csrf,
            benchmarks: bench_names(hub),
            profiles,
            error,
            max_mib: super::upload::MAX_UPLOAD >> 20,
        }
        .render()?,
    );
    *r.status_mut() = status;
    Ok(r)
}

async fn submit_page(State(hub): State<Arc<Hub>>, headers: HeaderMap) -> Page {
    let Some(s) = session(&hub, &headers) else {
        return Ok(login_redirect());
    };
    submit_form(&hub, &s, None, StatusCode::OK)
}

async fn submit(State(hub): State<Arc<Hub>>, req: Request) -> Page {
    same_origin(req.headers())?;
    let Some(s) = session(&hub, req.headers()) else {
        return Ok(login_redirect());
    };
    let form = Multipart::from_request(req, &())
        .await
        .map_err(|e| PageError(StatusCode::BAD_REQUEST, format!("the form: {e}")))?;
    let (mut v, files) = read_form(form).await?;
    let token = v
        .as_object_mut()
        .and_then(|o| o.remove("csrf"))
        .and_then(|t| t.as_str().map(str::to_string))
        .unwrap_or_default();
    if !same(&token, &s.csrf) {
        return Err(forgery());
    }
    match accept(&hub, &s.who, v, files) {
        Ok(sub) => Ok(Redirect::to(&format!("/submissions/{}", sub.id)).into_response()),
        Err(e) if e.0.is_client_error() => submit_form(&hub, &s, Some(&e.1), e.0),
        Err(e) => Err(e.into()),
    }
}

/// Submission `id` if the session may see it (else: not found).
fn visible(hub: &Hub, s: &Session, id: &str) -> Result<Submission, PageError> {
    Ok(super::api::visible(hub, &s.who, id)?)
}

/// A figure of the summary (`{value, ci95}`) in words, times `scale`.
fn figure(v: &Value, scale: f64, digits: usize) -> String {
    match (
        v["value"].as_f64(),
        v["ci95"][0].as_f64(),
        v["ci95"][1].as_f64(),
    ) {
        (Some(x), Some(lo), Some(hi)) => format!(
            "{:.digits$} [{:.digits$}, {:.digits$}]",
            x * scale,
            lo * scale,
            hi * scale
        ),
        (Some(x), _, _) => format!("{:.digits$}", x * scale),
        _ => match v.as_f64() {
            Some(x) => format!("{:.digits$}", x * scale),
            None => "–".into(),
        },
    }
}

/// The headline figures of a result (a `score.json` entry, or a board row's fields).
fn figures(r: &Value) -> Vec<(String, String)> {
    vec![
        ("integral help".into(), figure(&r["integral_help"], 1.0, 3)),
        ("exact %".into(), figure(&r["exact_share"], 100.0, 1)),
        ("empty %".into(), figure(&r["empty_rate"], 100.0, 1)),
        ("errors %".into(), figure(&r["error_rate"], 100.0, 1)),
        ("latency ms (median)".into(), latency(&r["latency_ms"])),
        (
            "records".into(),
            r["records"].as_u64().map_or("–".into(), |n| n.to_string()),
        ),
    ]
}

fn latency(v: &Value) -> String {
    v["p50"]
        .as_f64()
        .or_else(|| v["median"].as_f64())
        .or_else(|| v.as_f64())
        .map_or("–".into(), |x| format!("{x:.0}"))
}

#[derive(Template)]
#[template(path = "hub_submission.html")]
struct SubmissionPage<'a> {
    who: Option<&'a str>,
    csrf: &'a str,
    benchmarks: Vec<&'a str>,
    s: Submission,
    figures: Vec<(String, String)>,
}

async fn submission(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
) -> Page {
    let Some(sess) = session(&hub, &headers) else {
        return Ok(login_redirect());
    };
    let s = visible(&hub, &sess, &id)?;
    let figures = s.result.as_ref().map(figures).unwrap_or_default();
    Ok(html(
        SubmissionPage {
            who: Some(&sess.who.name),
            csrf: &sess.csrf,
            benchmarks: bench_names(&hub),
            s,
            figures,
        }
        .render()?,
    ))
}

async fn submission_state(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
) -> Page {
    let Some(sess) = session(&hub, &headers) else {
        return Err(PageError(StatusCode::UNAUTHORIZED, "log in again".into()));
    };
    let s = visible(&hub, &sess, &id)?;
    Ok(axum::Json(serde_json::json!({"state": s.state, "progress": s.progress})).into_response())
}

/// A done submission's file, as the API gives it.
fn run_file(hub: &Hub, s: &Submission, name: &str, kind: &'static str) -> Page {
    Ok(super::api::run_file(hub, s, name, kind)?)
}

async fn report(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
) -> Page {
    let Some(sess) = session(&hub, &headers) else {
        return Ok(login_redirect());
    };
    let s = visible(&hub, &sess, &id)?;
    run_file(&hub, &s, "report.html", "text/html; charset=utf-8")
}

async fn records(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
) -> Page {
    let Some(sess) = session(&hub, &headers) else {
        return Ok(login_redirect());
    };
    let s = visible(&hub, &sess, &id)?;
    run_file(&hub, &s, "records.jsonl", "text/plain; charset=utf-8")
}

/// A board's row as the page shows it.
struct BoardRow {
    position: usize,
    id: i64,
    name: String,
    by: String,
    mine: bool,
    rating: String,
    integral_help: String,
    exact: String,
    empty: String,
    errors: String,
    latency: String,
}

#[derive(Template)]
#[template(path = "hub_board.html")]
struct BoardPage<'a> {
    who: Option<&'a str>,
    csrf: &'a str,
    benchmarks: Vec<&'a str>,
    board: &'a super::board::Board,
    description: &'a str,
    rows: Vec<BoardRow>,
}

async fn board(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    UrlPath(name): UrlPath<String>,
) -> Page {
    let Some(sess) = session(&hub, &headers) else {
        return Ok(login_redirect());
    };
    let Some(bench) = hub.benchmark(&name) else {
        return Err(PageError(
            StatusCode::NOT_FOUND,
            format!("no benchmark {name:?}"),
        ));
    };
    let b = hub.board(&name).await?;
    let mine: std::collections::HashSet<i64> = hub
        .db
        .submissions()?
        .into_iter()
        .filter(|x| sess.who.admin || x.token_id == sess.who.id)
        .map(|x| x.id)
        .collect();
    let rows = b
        .rows
        .iter()
        .map(|r| BoardRow {
            position: r.position,
            id: r.submission,
            name: r.name.clone(),
            by: r.by.clone(),
            mine: mine.contains(&r.submission),
            rating: format!(
                "{:.0} [{:.0}, {:.0}]",
                r.rating, r.rating_ci95[0], r.rating_ci95[1]
            ),
            integral_help: figure(&r.integral_help, 1.0, 3),
            exact: figure(&r.exact_share, 100.0, 1),
            empty: figure(&r.empty_rate, 100.0, 1),
            errors: figure(&r.error_rate, 100.0, 1),
            latency: latency(&r.latency_ms),
        })
        .collect();
    Ok(html(
        BoardPage {
            who: Some(&sess.who.name),
            csrf: &sess.csrf,
            benchmarks: bench_names(&hub),
            board: &b,
            description: &bench.description,
            rows,
        }
        .render()?,
    ))
}

#[derive(Deserialize)]
struct Pair {
    a: i64,
    b: i64,
}

#[derive(Template)]
#[template(path = "hub_compare.html")]
struct ComparePage<'a> {
    who: Option<&'a str>,
    csrf: &'a str,
    benchmarks: Vec<&'a str>,
    benchmark: &'a str,
    a: &'a str,
    b: &'a str,
    cases: u64,
    figures: Vec<(String, String, String)>,
    wins_a: u64,
    wins_b: u64,
    ties: u64,
    diff: String,
    p_value: String,
}

async fn compare(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    UrlPath(name): UrlPath<String>,
    Query(q): Query<Pair>,
) -> Page {
    let Some(sess) = session(&hub, &headers) else {
        return Ok(login_redirect());
    };
    if hub.benchmark(&name).is_none() {
        return Err(PageError(
            StatusCode::NOT_FOUND,
            format!("no benchmark {name:?}"),
        ));
    }
    let b = hub.board(&name).await?;
    let row = |id: i64| {
        b.rows.iter().find(|r| r.submission == id).ok_or_else(|| {
            PageError(
                StatusCode::NOT_FOUND,
                format!("submission {id} is not on the board of {name}"),
            )
        })
    };
    let (ra, rb) = (row(q.a)?, row(q.b)?);
    if q.a == q.b {
        return Err(PageError(
            StatusCode::UNPROCESSABLE_ENTITY,
            "choose two different submissions".into(),
        ));
    }
    // The pair as the board keeps it, in either order.
    let (pair, flip) = match b
        .pairs
        .iter()
        .find(|p| (p.a, p.b) == (q.a, q.b) || (p.a, p.b) == (q.b, q.a))
    {
        Some(p) => (p, p.a != q.a),
        None => {
            return Err(PageError(
                StatusCode::NOT_FOUND,
                "the board has no comparison of these two".into(),
            ));
        }
    };
    let (wins_a, wins_b) = if flip {
        (pair.wins_b, pair.wins_a)
    } else {
        (pair.wins_a, pair.wins_b)
    };
    let diff = pair
        .diff_integral_help
        .map(|d| if flip { -d } else { d })
        .map_or("–".into(), |d| format!("{d:+.3}"));
    let p_value = pair.p_value.map_or("–".into(), |p| format!("{p:.3}"));
    let as_json = |r: &super::board::Row| {
        serde_json::json!({
            "integral_help": r.integral_help, "exact_share": r.exact_share,
            "empty_rate": r.empty_rate, "error_rate": r.error_rate,
            "latency_ms": r.latency_ms, "records": r.records,
        })
    };
    let (fa, fb) = (figures(&as_json(ra)), figures(&as_json(rb)));
    let mut rows = vec![(
        "rating".to_string(),
        format!("{:.0}", ra.rating),
        format!("{:.0}", rb.rating),
    )];
    rows.extend(fa.into_iter().zip(fb).map(|((k, x), (_, y))| (k, x, y)));
    Ok(html(
        ComparePage {
            who: Some(&sess.who.name),
            csrf: &sess.csrf,
            benchmarks: bench_names(&hub),
            benchmark: &name,
            a: &ra.name,
            b: &rb.name,
            cases: pair.cases,
            figures: rows,
            wins_a,
            wins_b,
            ties: pair.ties,
            diff,
            p_value,
        }
        .render()?,
    ))
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
