//! `typist bench model`'s table: a [`Row`] per assistant, from the captured requests
//! and the direct pass, and the markdown table of the rows.

use serde::Serialize;

use super::{Captured, Direct, Timings, normalized};

fn per_hour(n: usize, seconds: f64) -> f64 {
    if seconds > 0.0 {
        n as f64 * 3600.0 / seconds
    } else {
        0.0
    }
}

/// One assistant's line of the table.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub assistant: String,
    pub jobs: usize,
    pub cases: usize,
    /// Records with outcome `suggestion`.
    pub suggestions: usize,
    /// Requests that reached the model server during the replay.
    pub requests: usize,
    /// Requests sent straight to the fresh server (always `requests`).
    pub direct_requests: usize,
    /// Wall seconds of the replay through typist (sessions included).
    pub typist_seconds: f64,
    pub direct_seconds: f64,
    pub typist_suggestions_per_hour: f64,
    pub typist_requests_per_hour: f64,
    pub direct_requests_per_hour: f64,
    /// typist's requests per hour / the direct requests per hour.
    pub ratio: f64,
    /// Seconds the replay spent starting sessions (`RunReport::server_start_seconds`:
    /// workspace, editor and server, up to the server's answer to `initialize`), summed:
    /// mostly an agent's own start, which no direct request can have.
    pub server_start_seconds: f64,
    /// With one job, `ratio` with the server starts taken out of typist's time: what
    /// typist and the agent add to each request.
    pub ratio_starts_aside: Option<f64>,
    pub typist_timings: Timings,
    pub direct_timings: Timings,
    /// Direct answers equal to the captured ones (less ids, times and `timings`).
    pub identical_answers: usize,
    pub different_answers: usize,
    /// Requests that failed (status not 2xx) through typist and directly.
    pub typist_failed: usize,
    pub direct_failed: usize,
}

impl Row {
    pub fn new(
        assistant: &str,
        jobs: usize,
        cases: usize,
        suggestions: usize,
        typist_seconds: f64,
        captured: &[Captured],
        direct: &Direct,
    ) -> Row {
        let identical = captured
            .iter()
            .zip(&direct.answers)
            .filter(|(c, (status, a))| {
                c.status == *status && normalized(&c.answer) == normalized(a)
            })
            .count();
        let ok = |s: u16| (200..300).contains(&s);
        let typist_rph = per_hour(captured.len(), typist_seconds);
        let direct_rph = per_hour(direct.answers.len(), direct.seconds);
        Row {
            assistant: assistant.to_string(),
            jobs,
            cases,
            suggestions,
            requests: captured.len(),
            direct_requests: direct.answers.len(),
            typist_seconds,
            direct_seconds: direct.seconds,
            typist_suggestions_per_hour: per_hour(suggestions, typist_seconds),
            typist_requests_per_hour: typist_rph,
            direct_requests_per_hour: direct_rph,
            ratio: if direct_rph > 0.0 {
                typist_rph / direct_rph
            } else {
                0.0
            },
            server_start_seconds: 0.0,
            ratio_starts_aside: None,
            typist_timings: Timings::of(captured.iter().map(|c| c.answer.as_str())),
            direct_timings: Timings::of(direct.answers.iter().map(|(_, a)| a.as_str())),
            identical_answers: identical,
            different_answers: captured.len() - identical,
            typist_failed: captured.iter().filter(|c| !ok(c.status)).count(),
            direct_failed: direct.answers.iter().filter(|(s, _)| !ok(*s)).count(),
        }
    }

    /// The row with the replay's server starts (`RunReport::server_start_seconds`):
    /// with one job they are wall time, taken out of typist's time for
    /// `ratio_starts_aside`; with more they overlap other workers' requests.
    pub fn with_server_starts(mut self, seconds: f64) -> Row {
        self.server_start_seconds = seconds;
        let rest = self.typist_seconds - seconds;
        self.ratio_starts_aside =
            (self.jobs == 1 && rest > 0.0 && self.direct_seconds > 0.0).then(|| {
                per_hour(self.requests, rest) / per_hour(self.direct_requests, self.direct_seconds)
            });
        self
    }
}

/// The markdown table of `rows`.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| assistant | jobs | cases | suggestions | requests | through typist: s | suggestions/h | requests/h | direct: s | direct requests/h | typist / direct | server starts: s | typist / direct, starts aside | prompt tok/s (typist; direct) | generation tok/s (typist; direct) | identical answers | failed (typist; direct) |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.1} | {:.0} | {:.0} | {:.1} | {:.0} | {:.2} | {:.1} | {} | {:.0}; {:.0} | {:.1}; {:.1} | {} of {} | {}; {} |\n",
            r.assistant,
            r.jobs,
            r.cases,
            r.suggestions,
            r.requests,
            r.typist_seconds,
            r.typist_suggestions_per_hour,
            r.typist_requests_per_hour,
            r.direct_seconds,
            r.direct_requests_per_hour,
            r.ratio,
            r.server_start_seconds,
            r.ratio_starts_aside
                .map_or_else(|| "–".to_string(), |x| format!("{x:.2}")),
            r.typist_timings.prompt_per_second(),
            r.direct_timings.prompt_per_second(),
            r.typist_timings.predicted_per_second(),
            r.direct_timings.predicted_per_second(),
            r.identical_answers,
            r.requests,
            r.typist_failed,
            r.direct_failed,
        ));
    }
    out
}
