//! One request that reached the model server through the relay, and its answer: what
//! the direct pass sends again and the table compares.

use std::time::Instant;

use serde::Serialize;

/// One request that reached the model server, and its answer.
#[derive(Debug, Clone, Serialize)]
pub struct Captured {
    /// Order of arrival.
    pub seq: usize,
    pub method: String,
    pub path: String,
    pub content_type: Option<String>,
    pub body: String,
    pub status: u16,
    pub answer: String,
    /// Seconds from the relay's start to the request's arrival.
    pub start: f64,
    /// Seconds the upstream took to answer.
    pub seconds: f64,
}

impl Captured {
    /// The request as it arrived at the relay (its body read), not yet answered.
    pub(super) fn arrived(req: &mut tiny_http::Request, seq: usize, start: f64) -> Captured {
        let mut body = String::new();
        let _ = req.as_reader().read_to_string(&mut body);
        let content_type = req
            .headers()
            .iter()
            .find(|h| h.field.equiv("Content-Type"))
            .map(|h| h.value.to_string());
        Captured {
            seq,
            method: req.method().as_str().to_string(),
            path: req.url().to_string(),
            content_type,
            body,
            status: 0,
            answer: String::new(),
            start,
            seconds: 0.0,
        }
    }

    /// The upstream's answer, asked at `asked`.
    pub(super) fn answered(&mut self, status: u16, answer: String, asked: Instant) {
        self.seconds = asked.elapsed().as_secs_f64();
        self.status = status;
        self.answer = answer;
    }
}
