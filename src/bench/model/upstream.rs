//! How both passes reach the model server: a connection per request, each sent as it
//! was captured, a streamed answer left open for the caller to read.

use std::time::Duration;

use super::Captured;

/// One request sent straight to the model server: generous, since a slow CPU with
/// `--jobs` requests queued can take minutes, and a lost answer would spoil the pass.
const DIRECT_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// An HTTP client that opens a connection for each request, as the host does: a kept
/// connection can be one the server has closed (it did after streams left early: "Peer
/// disconnected" on the next request), and both passes must pay the same.
pub(super) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .max_idle_connections(0)
        .max_idle_connections_per_host(0)
        .timeout_global(Some(DIRECT_REQUEST_TIMEOUT))
        .http_status_as_error(false)
        .build()
        .into()
}

/// What the upstream answered: one body, or a stream of server-sent events still open.
pub(super) enum Upstream {
    Whole(u16, String),
    Stream(u16, ureq::Body),
}

fn post(
    agent: &ureq::Agent,
    url: &str,
    c: &Captured,
) -> Result<ureq::http::Response<ureq::Body>, ureq::Error> {
    if c.method == "GET" {
        agent.get(url).call()
    } else {
        let mut r = agent.post(url);
        if let Some(ct) = &c.content_type {
            r = r.header("Content-Type", ct);
        }
        r.send(c.body.as_bytes())
    }
}

/// Sends one request as it was captured; a streamed answer is left open.
pub(super) fn open(agent: &ureq::Agent, base: &str, c: &Captured) -> Upstream {
    let url = format!("{base}{}", c.path);
    match post(agent, &url, c) {
        Ok(mut resp) => {
            let status = resp.status().as_u16();
            let streamed = resp
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("text/event-stream"));
            if streamed {
                return Upstream::Stream(status, resp.into_body());
            }
            let text = resp
                .body_mut()
                .with_config()
                .limit(64 << 20)
                .read_to_string()
                .unwrap_or_default();
            Upstream::Whole(status, text)
        }
        Err(e) => Upstream::Whole(502, format!("upstream {url} unreachable: {e}")),
    }
}
