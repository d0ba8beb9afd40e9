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

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use serde::Deserialize;

use super::api::{accept, read_form};
use super::db::Submission;
use super::state::Hub;
use super::web_results::{board, compare, records, report, submission, submission_state};
use super::web_session::*;

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
