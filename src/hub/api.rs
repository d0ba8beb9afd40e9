//! The JSON API (docs/service.md), every route but `/api/health` behind a bearer token
//! (`Authorization: Bearer TOKEN`, made by `typist serve token add`):
//!
//! - `GET /api/benchmarks`: the benchmarks, with their plans' sha256 and cases;
//! - `POST /api/submissions`: `{benchmark, name, assistant | model, editor?, passes?}`,
//!   checked (the error says what to change) and queued: 201 with the submission;
//! - `GET /api/submissions`: the caller's submissions (an admin's: all);
//! - `GET /api/submissions/ID`: state, progress, error in words, result;
//! - `GET /api/submissions/ID/records`, `/report`: its records and HTML report;
//! - `GET /api/benchmarks/NAME/board`: the board, each pair's paired p-value with it.
//!
//! A submission, its records and its report are the submitter's (and an admin's): to
//! anyone else it does not exist (404). The board shows every team's figures and names.
//! Errors are JSON `{"error": "..."}` with their status.

use std::sync::Arc;

use axum::Router;
use axum::extract::FromRequest;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

use super::db::{Caller, Submission};
use super::layout::out_dir;
use super::spec::Spec;
use super::state::Hub;

/// Longest submission name.
const MAX_NAME: usize = 100;
/// Largest submission request: a server's profile and archive, with room for the form.
pub const UPLOAD_BODY: usize = 2 * super::upload::MAX_UPLOAD + (1 << 20);

pub fn router(hub: Arc<Hub>) -> Router {
    Router::new()
        .route(
            "/api/health",
            get(|| async { axum::Json(json!({"ok": true})) }),
        )
        .route("/api/benchmarks", get(benchmarks))
        .route("/api/benchmarks/{name}/board", get(board))
        .route(
            "/api/submissions",
            get(list)
                .post(submit)
                .layer(axum::extract::DefaultBodyLimit::max(UPLOAD_BODY)),
        )
        .route("/api/submissions/{id}", get(one))
        .route("/api/submissions/{id}/records", get(records))
        .route("/api/submissions/{id}/report", get(report))
        .with_state(hub)
}

/// An error answered as `{"error": ...}`.
pub struct ApiError(pub StatusCode, pub String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, axum::Json(json!({"error": self.1}))).into_response()
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(e: anyhow::Error) -> Self {
        tracing::error!("hub: {e:#}");
        ApiError(StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}"))
    }
}

type Answer = Result<Response, ApiError>;

fn bad(status: StatusCode, m: impl Into<String>) -> ApiError {
    ApiError(status, m.into())
}

/// The caller the bearer token names.
fn caller(hub: &Hub, headers: &HeaderMap) -> Result<Caller, ApiError> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            bad(
                StatusCode::UNAUTHORIZED,
                "no bearer token: send `Authorization: Bearer TOKEN` (typist serve token add makes one)",
            )
        })?;
    hub.db
        .caller(token)?
        .ok_or_else(|| bad(StatusCode::UNAUTHORIZED, "unknown token"))
}

/// Submission `id` if the caller may see it.
pub fn visible(hub: &Hub, who: &Caller, id: &str) -> Result<Submission, ApiError> {
    let missing = || bad(StatusCode::NOT_FOUND, format!("no submission {id}"));
    let id: i64 = id.parse().map_err(|_| missing())?;
    match hub.db.submission(id)? {
        Some(s) if s.token_id == who.id || who.admin => Ok(s),
        _ => Err(missing()),
    }
}

async fn benchmarks(State(hub): State<Arc<Hub>>, headers: HeaderMap) -> Answer {
    caller(&hub, &headers)?;
    Ok(axum::Json(json!({"benchmarks": hub.benchmarks})).into_response())
}

async fn submit(State(hub): State<Arc<Hub>>, req: axum::extract::Request) -> Answer {
    let who = caller(&hub, req.headers())?;
    let multipart = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("multipart/form-data"));
    let (v, files) = if multipart {
        let form = axum::extract::Multipart::from_request(req, &())
            .await
            .map_err(|e| bad(StatusCode::BAD_REQUEST, format!("the form: {e}")))?;
        read_form(form).await?
    } else {
        let body = axum::body::to_bytes(req.into_body(), 1 << 20)
            .await
            .map_err(|e| bad(StatusCode::PAYLOAD_TOO_LARGE, format!("the body: {e}")))?;
        let v: Value = serde_json::from_slice(&body).map_err(|e| {
            bad(
                StatusCode::BAD_REQUEST,
                format!("the body is not JSON: {e}"),
            )
        })?;
        (v, super::upload::Files::default())
    };
    let s = accept(&hub, &who, v, files)?;
    Ok((StatusCode::CREATED, axum::Json(s)).into_response())
}

/// A submission's form (the API's multipart body, the web page's): its text fields as
/// the JSON body would give them, and its files. A file over the upload limit is
/// refused as it comes, before the rest is read.
pub async fn read_form(
    mut form: axum::extract::Multipart,
) -> Result<(Value, super::upload::Files), ApiError> {
    use super::upload::MAX_UPLOAD;
    let mut text = serde_json::Map::new();
    let mut files = super::upload::Files::default();
    let too_big = |name: &str| {
        bad(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("`{name}`: larger than {} MiB: refused", MAX_UPLOAD >> 20),
        )
    };
    while let Some(mut field) = form
        .next_field()
        .await
        .map_err(|e| bad(StatusCode::BAD_REQUEST, format!("the form: {e}")))?
    {
        let name = field.name().unwrap_or_default().to_string();
        let is_file = field.file_name().is_some();
        let mut bytes = Vec::new();
        while let Some(chunk) = field
            .chunk()
            .await
            .map_err(|e| bad(StatusCode::BAD_REQUEST, format!("`{name}`: {e}")))?
        {
            if bytes.len() + chunk.len() > MAX_UPLOAD {
                return Err(too_big(&name));
            }
            bytes.extend_from_slice(&chunk);
        }
        // A file input left empty in a page's form.
        if is_file && bytes.is_empty() {
            continue;
        }
        let slot = match name.as_str() {
            "extension" => Some(&mut files.extension),
            "neovim_plugin" => Some(&mut files.neovim_plugin),
            "profile" => Some(&mut files.profile),
            "archive" => Some(&mut files.archive),
            _ => None,
        };
        if let Some(slot) = slot {
            *slot = Some(bytes);
            continue;
        }
        let value = String::from_utf8(bytes)
            .map_err(|_| bad(StatusCode::BAD_REQUEST, format!("`{name}`: not UTF-8 text")))?;
        match name.as_str() {
            "neovim_config" => files.neovim_config = Some(value),
            "neovim_namespace" => files.neovim_namespace = Some(value),
            _ if value.trim().is_empty() => {}
            _ => {
                text.insert(name, Value::String(value.trim().to_string()));
            }
        }
    }
    // The form's flat fields as the JSON body's.
    if let Some(p) = text.get("passes").and_then(Value::as_str) {
        let n: u32 = p
            .parse()
            .map_err(|_| bad(StatusCode::UNPROCESSABLE_ENTITY, "`passes`: a number"))?;
        text.insert("passes".into(), Value::from(n));
    }
    if let Some(endpoint) = text.remove("model_endpoint") {
        let mut m = serde_json::Map::new();
        m.insert("endpoint".into(), endpoint);
        for (k, to) in [("model_api", "api"), ("model_name", "name")] {
            if let Some(v) = text.remove(k) {
                m.insert(to.into(), v);
            }
        }
        text.insert("model".into(), Value::Object(m));
    } else {
        text.remove("model_api");
        text.remove("model_name");
    }
    Ok((Value::Object(text), files))
}

/// Checks a submission (`v` as the JSON body gives it, with its uploads), keeps its
/// uploads and queues it.
pub fn accept(
    hub: &Hub,
    who: &Caller,
    mut v: Value,
    files: super::upload::Files,
) -> Result<Submission, ApiError> {
    let unprocessable = |m: String| bad(StatusCode::UNPROCESSABLE_ENTITY, m);
    let bench = v["benchmark"]
        .as_str()
        .ok_or_else(|| unprocessable("`benchmark`: the benchmark's name".into()))?
        .to_string();
    if hub.benchmark(&bench).is_none() {
        let names: Vec<&str> = hub.benchmarks.iter().map(|b| b.name.as_str()).collect();
        return Err(unprocessable(format!(
            "`benchmark`: no benchmark {bench:?} (there are: {})",
            names.join(", ")
        )));
    }
    let name = v["name"].as_str().unwrap_or_default().trim().to_string();
    if name.is_empty() || name.chars().count() > MAX_NAME || name.chars().any(char::is_control) {
        return Err(unprocessable(format!(
            "`name`: the submission's name, 1 to {MAX_NAME} characters"
        )));
    }
    // Uploads come as files, never as a JSON body's fields.
    if !files.any() {
        Spec::from_request(&v).map_err(|e| unprocessable(format!("{e:#}")))?;
    } else if let Some(k) = super::spec::UPLOADS.iter().find(|k| v.get(**k).is_some()) {
        return Err(unprocessable(format!(
            "`{k}`: a field of that name is not taken: uploads are the form's files"
        )));
    }
    if files.any() {
        if !hub.sandbox {
            return Err(unprocessable(
                "uploaded code runs only in the sandbox, and this service runs its jobs without it (--no-sandbox, or --executor slurm): submit an `assistant` profile the service knows or a `model` endpoint".into(),
            ));
        }
        if v.get("assistant").is_some() || v.get("model").is_some() {
            return Err(unprocessable(
                "give exactly one of `assistant`, `model` and uploaded code".into(),
            ));
        }
        let editor = v["editor"].as_str().unwrap_or("typist").to_string();
        let checked =
            super::upload::check(files, &editor).map_err(|e| unprocessable(format!("{e:#}")))?;
        // The whole submission checked before the upload is kept.
        let mut whole = v.clone();
        if let (Some(o), Some(f)) = (whole.as_object_mut(), checked.spec.as_object()) {
            for (k, x) in f {
                let mut x = x.clone();
                x["upload"] = Value::from("0");
                o.insert(k.clone(), x);
            }
        }
        let spec = Spec::from_json(&whole).map_err(|e| unprocessable(format!("{e:#}")))?;
        if let super::spec::What::Assistant(_) | super::spec::What::Model { .. } = spec.what {
            return Err(unprocessable(
                "uploads and a profile or model at once".into(),
            ));
        }
        let fields = checked.store(&hub.data)?;
        if let (Some(o), Some(f)) = (v.as_object_mut(), fields.as_object()) {
            o.extend(f.iter().map(|(k, x)| (k.clone(), x.clone())));
        }
    }
    let spec = Spec::from_json(&v).map_err(|e| unprocessable(format!("{e:#}")))?;
    spec.check().map_err(|e| unprocessable(format!("{e:#}")))?;
    if let (true, super::spec::What::Model { endpoint, .. }) = (hub.sandbox, &spec.what) {
        super::forward::inside_url(endpoint).map_err(|e| unprocessable(format!("{e:#}")))?;
    }
    let mut kept = v.clone();
    if let Some(o) = kept.as_object_mut() {
        o.remove("benchmark");
        o.remove("name");
    }
    let id = hub.db.submit(who, &name, &bench, &kept).inspect_err(|_| {
        // Not queued: its upload is not kept either.
        for (_, f) in kept.as_object().into_iter().flatten() {
            if let Some(key) = f.get("upload").and_then(Value::as_str)
                && let Ok(dir) = super::upload::folder(&hub.data, key)
            {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    })?;
    hub.queued.notify_one();
    Ok(hub
        .db
        .submission(id)?
        .ok_or_else(|| anyhow::anyhow!("submission {id} vanished"))?)
}

async fn list(State(hub): State<Arc<Hub>>, headers: HeaderMap) -> Answer {
    let who = caller(&hub, &headers)?;
    let subs: Vec<Submission> = hub
        .db
        .submissions()?
        .into_iter()
        .filter(|s| who.admin || s.token_id == who.id)
        .collect();
    Ok(axum::Json(json!({"submissions": subs})).into_response())
}

async fn one(State(hub): State<Arc<Hub>>, headers: HeaderMap, Path(id): Path<String>) -> Answer {
    let who = caller(&hub, &headers)?;
    Ok(axum::Json(visible(&hub, &who, &id)?).into_response())
}

/// A file of a done submission's run (the API's and the pages'), its headers kept
/// from running it on the service's origin.
pub fn run_file(hub: &Hub, s: &Submission, name: &str, kind: &'static str) -> Answer {
    let path = out_dir(&hub.data, s.id).join(name);
    let read = super::layout::open_regular(&path).and_then(|mut f| {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut bytes).map(|_| bytes)
    });
    match read {
        Ok(bytes) if s.state == super::db::DONE => Ok((
            [
                (header::CONTENT_TYPE, HeaderValue::from_static(kind)),
                (header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
                // Written in the job's sandbox, by code that may be hostile: a report
                // runs sandboxed (an origin of its own, no access to the service's pages
                // or cookies), its inline scripts only, nothing from elsewhere.
                (
                    header::CONTENT_SECURITY_POLICY,
                    HeaderValue::from_static(
                        "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'",
                    ),
                ),
            ],
            bytes,
        )
            .into_response()),
        _ => Err(bad(
            StatusCode::NOT_FOUND,
            format!("submission {} has no {name} yet (it is {})", s.id, s.state),
        )),
    }
}

async fn records(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Answer {
    let who = caller(&hub, &headers)?;
    let s = visible(&hub, &who, &id)?;
    run_file(&hub, &s, "records.jsonl", "application/x-ndjson")
}

async fn report(State(hub): State<Arc<Hub>>, headers: HeaderMap, Path(id): Path<String>) -> Answer {
    let who = caller(&hub, &headers)?;
    let s = visible(&hub, &who, &id)?;
    run_file(&hub, &s, "report.html", "text/html; charset=utf-8")
}

async fn board(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Answer {
    caller(&hub, &headers)?;
    if hub.benchmark(&name).is_none() {
        return Err(bad(StatusCode::NOT_FOUND, format!("no benchmark {name:?}")));
    }
    let b = hub.board(&name).await?;
    Ok(axum::Json(b.as_ref()).into_response())
}
