//! Log lines on stderr. Without `RUST_LOG`, a warning reads as the rest of typist's
//! messages do (`typist: warning: …`, no timestamp, no module path); with `RUST_LOG`
//! set, tracing's full lines. Colour only for a person at a terminal, never with
//! `NO_COLOR`. Every line goes through [`typist::secrets::ScrubbedStderr`].

use std::fmt;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::{self, FormatEvent, FormatFields};
use tracing_subscriber::fmt::{FmtContext, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

pub fn init() {
    let color = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let builder = tracing_subscriber::fmt()
        .with_writer(typist::secrets::ScrubbedStderr)
        .with_ansi(color);
    match EnvFilter::try_from_default_env() {
        Ok(filter) => builder.with_env_filter(filter).init(),
        Err(_) => builder
            .with_env_filter(EnvFilter::new("warn"))
            .event_format(Plain)
            .init(),
    }
}

/// `typist: warning: MESSAGE field=value …`, then the spans' fields in brackets.
struct Plain;

impl<S, N> FormatEvent<S, N> for Plain
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut w: format::Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let level = match *event.metadata().level() {
            Level::ERROR => "error",
            Level::WARN => "warning",
            Level::INFO => "info",
            Level::DEBUG => "debug",
            Level::TRACE => "trace",
        };
        write!(w, "typist: {level}: ")?;
        ctx.field_format().format_fields(w.by_ref(), event)?;
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                let ext = span.extensions();
                if let Some(fields) = ext.get::<FormattedFields<N>>()
                    && !fields.is_empty()
                {
                    write!(w, " [{}: {fields}]", span.name())?;
                }
            }
        }
        writeln!(w)
    }
}
