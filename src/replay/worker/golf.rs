//! Golf cases (methodology §10, `--golf`): a line case played the way a user types it
//! with the assistant's help. The document is the case's paste document with `p`
//! characters of the line typed (`typing::paste_document`, so the server never sees
//! more of the line than is typed, nor anything below it but `suffix_lines` or the full
//! context the run asked for); after each answer the user accepts or types one
//! character (`replay::golf::step`) in the same session, until the line is written.
//! One record per line: the first request's outcome (exactly the line case at `p = 0`)
//! with the tally in its `golf` object. A failed request is no suggestion for the user
//! and counted apart (`failures`); a server that exits is restarted with the editor's
//! state and asked once more, as for any case.

use anyhow::{Result, bail};

use super::Worker;
use crate::dataset::Case;
use crate::editor::Suggestions;
use crate::replay::RunConditions;
use crate::replay::golf::{Golf, GolfTally, step};
use crate::replay::outcome::{self, Ask};
use crate::replay::typing;
use crate::replay::units::Unit;

impl Worker {
    pub(super) async fn golf_case(
        &mut self,
        unit: &Unit,
        lines: &[&str],
        case: &Case,
        cond: &RunConditions,
        golf: Golf,
    ) -> Result<()> {
        let idx = case.line as usize - 1;
        let line = case.expected.as_str();
        let n = line.chars().count();
        let mut tally = GolfTally {
            mode: golf.mode,
            n: n as u32,
            ..GolfTally::default()
        };
        let mut first = None;
        let mut p = 0usize;
        loop {
            if tally.requests > 0 && p >= n {
                break;
            }
            if tally.requests >= golf.max_requests.max(1) {
                tally.keys += (n - p) as u32;
                tally.capped = true;
                break;
            }
            let (text, cursor) = typing::paste_document(
                lines,
                case.line as usize,
                p,
                cond.context,
                cond.suffix_lines as usize,
            );
            if self.live.as_ref().is_none_or(|l| l.has_seen(idx)) {
                self.start_session(unit, "").await?;
            }
            self.set_text(unit, &text)?;
            let ask = self.ask_supervised(unit, &case.case, &text, cursor).await?;
            tally.requests += 1;
            let current = &text[text[..cursor].rfind('\n').map_or(0, |i| i + 1)..cursor];
            let suggested = match &ask {
                Ask::Got(t) => match &t.value {
                    Suggestions::Inline(items) => items
                        .first()
                        .filter(|f| f.text != current)
                        .map(|f| f.line.clone()),
                    Suggestions::Completion(_) => None,
                },
                Ask::Failed(_) => {
                    tally.failures += 1;
                    None
                }
            };
            let s = step(line, p, suggested.as_deref(), golf.mode);
            tally.keys += s.keys;
            tally.accepts += u32::from(s.accepted);
            p = s.to;
            if first.is_none() {
                let hash = self
                    .live
                    .as_ref()
                    .and_then(|l| l.session.last_request_hash())
                    .map(str::to_string);
                let name = &self.profile(unit.assistant).name;
                let mut r = outcome::record(case, name, unit.pass, cond, &text, cursor, ask);
                r.request_hash = hash;
                first = Some(r);
            }
        }
        let Some(mut record) = first else {
            bail!("golf: no request made for {}", case.case)
        };
        record.golf = Some(tally);
        self.send(record).await
    }
}
