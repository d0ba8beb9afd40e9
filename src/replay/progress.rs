//! The sink task and the progress bar: one task appends and flushes every record as it
//! arrives, and the bar shows the rate, the failures so far and the ETA.

use anyhow::Result;
use tokio::sync::mpsc;

use super::records::{Record, Sink};
use crate::score::records::Outcome;

/// The bar is redrawn at most this often (indicatif's own rate limit is per draw target).
const REDRAW_INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);

pub(super) fn progress_bar(total: u64, quiet: bool) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} cases, {msg}, ETA {eta}")
    {
        bar.set_style(style);
    }
    bar
}

/// Writes every record `rx` receives into `sink`; returns how many were written.
pub(super) fn spawn_writer(
    mut sink: Sink,
    mut rx: mpsc::Receiver<Record>,
    bar: indicatif::ProgressBar,
) -> tokio::task::JoinHandle<Result<usize>> {
    tokio::spawn(async move {
        let started = std::time::Instant::now();
        let (mut written, mut empty, mut error, mut timeout) = (0usize, 0u64, 0u64, 0u64);
        // The message is formatted when the bar is shown and at most ten times a second
        // (the bar redraws less often than that), not once per record.
        let mut shown: Option<std::time::Instant> = None;
        let message = |written: usize, empty: u64, error: u64, timeout: u64| {
            let rate = written as f64 / started.elapsed().as_secs_f64().max(1e-3);
            format!("{rate:.0}/s, empty {empty}, error {error}, timeout {timeout}")
        };
        while let Some(r) = rx.recv().await {
            sink.write(&r)?;
            written += 1;
            match r.outcome {
                Outcome::Empty => empty += 1,
                Outcome::Error => error += 1,
                Outcome::Timeout => timeout += 1,
                Outcome::Suggestion => {}
            }
            if !bar.is_hidden() && shown.is_none_or(|t| t.elapsed() >= REDRAW_INTERVAL) {
                bar.set_message(message(written, empty, error, timeout));
                shown = Some(std::time::Instant::now());
            }
            bar.inc(1);
        }
        if !bar.is_hidden() {
            bar.set_message(message(written, empty, error, timeout));
        }
        anyhow::Ok(written)
    })
}
