//! The web pages of results (docs/service.md#the-web-pages): a submission's page, its
//! state, report and records, each benchmark's board, and the comparison of two
//! submissions.

use std::sync::Arc;

use askama::Template;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use serde::Deserialize;
use serde_json::Value;

use super::db::Submission;
use super::state::Hub;
use super::web_session::{Page, PageError, Session, bench_names, html, login_redirect, session};

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

pub(super) async fn submission(
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

pub(super) async fn submission_state(
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

/// A done submission's file, as the API gives it, to a logged-in person who may see it.
fn run_file(hub: &Hub, headers: &HeaderMap, id: &str, name: &str, kind: &'static str) -> Page {
    let Some(sess) = session(hub, headers) else {
        return Ok(login_redirect());
    };
    let s = visible(hub, &sess, id)?;
    Ok(super::api::run_file(hub, &s, name, kind)?)
}

pub(super) async fn report(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
) -> Page {
    run_file(
        &hub,
        &headers,
        &id,
        "report.html",
        "text/html; charset=utf-8",
    )
}

pub(super) async fn records(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
) -> Page {
    run_file(
        &hub,
        &headers,
        &id,
        "records.jsonl",
        "text/plain; charset=utf-8",
    )
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

pub(super) async fn board(
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

/// The two submissions a comparison asks for.
#[derive(Deserialize)]
pub(super) struct Pair {
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

pub(super) async fn compare(
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
