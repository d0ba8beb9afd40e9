//! Completion-list sessions (issue 11): `complete`, a `textDocument/completion` with the
//! trigger an editor sends (`Invoked`, a trigger character the server declared, or
//! `TriggerForIncompleteCompletions`), the raw answer kept for ranking
//! (`editor::ranking`), and the profile's readiness rule applied to the first request of
//! a session (`complete_when_ready`).

use std::time::Instant;

use serde_json::{Value, json};
use tower_lsp_server::ls_types::request::{Completion, Request};

use super::TypistSession;
use crate::editor::SessionError;
use crate::editor::conditions::{ListAsk, Trigger};
use crate::editor::document::Position;
use crate::editor::options::{RETRY_INTERVAL, Timed};
use crate::editor::profile::ReadinessRule;
use crate::editor::ranking::{self, ListAnswer};
use crate::editor::request_hash::request_hash_of;
use crate::lsp::uri;

impl TypistSession {
    /// The server's declared completion trigger characters.
    pub fn trigger_characters(&self) -> &[String] {
        &self.caps.trigger_characters
    }

    /// One `textDocument/completion` at `cursor` in `rel`: the raw answer and its latency.
    pub async fn complete(
        &mut self,
        rel: &str,
        cursor: Position,
        trigger: &Trigger,
    ) -> Result<Timed<Value>, SessionError> {
        self.pump();
        let doc = self
            .docs
            .get(rel)
            .ok_or_else(|| SessionError::NotOpen(rel.to_string()))?;
        let mut params = json!({
            "textDocument": {"uri": doc.uri},
            "position": cursor.to_json(),
            "context": trigger.context(),
        });
        if let (Some(p), Some(e)) = (
            params.as_object_mut(),
            self.profile.request_params.as_object(),
        ) {
            for (k, v) in e {
                p.insert(k.clone(), v.clone());
            }
        }
        let text_sha256 = self.text_sha256(rel);
        self.last_request_hash = Some(request_hash_of(
            Completion::METHOD,
            &params,
            &uri::from_path(&self.root),
            &text_sha256,
        ));
        let start = Instant::now();
        let answer = self
            .client
            .request(
                Completion::METHOD,
                Some(params),
                self.profile.request_timeout(),
            )
            .await?;
        let latency_ms = start.elapsed().as_secs_f64() * 1000.0;
        Ok(Timed {
            value: answer,
            latency_ms,
        })
    }

    /// [`TypistSession::complete`] once the profile's readiness rule holds: after progress
    /// ends, after rust-analyzer is quiescent, or (rule `stable`) asked again until two
    /// answers in a row list the same items.
    pub async fn complete_when_ready(
        &mut self,
        rel: &str,
        cursor: Position,
        trigger: &Trigger,
    ) -> Result<Timed<Value>, SessionError> {
        let deadline = self.wait_for_readiness().await;
        let r = self.profile.readiness.clone();
        if r.rule == ReadinessRule::Stable {
            let mut last = self.complete(rel, cursor, trigger).await?;
            for _ in 1..r.max_tries {
                if Instant::now() >= deadline {
                    break;
                }
                tokio::time::sleep(RETRY_INTERVAL).await;
                let next = self.complete(rel, cursor, trigger).await?;
                let same = ranking::signature(&next.value) == ranking::signature(&last.value);
                last = next;
                if same {
                    break;
                }
            }
            return Ok(last);
        }
        self.complete(rel, cursor, trigger).await
    }

    /// Token cases: the server's list at `cursor`, asked as `ask` says (after the
    /// profile's readiness rule when `when_ready`); typist ranks it as an editor would.
    pub async fn list_ask(
        &mut self,
        rel: &str,
        cursor: Position,
        ask: &ListAsk,
        when_ready: bool,
    ) -> Result<Timed<ListAnswer>, SessionError> {
        let trigger = Trigger::of(ask, self.trigger_characters());
        let answer = if when_ready {
            self.complete_when_ready(rel, cursor, &trigger).await?
        } else {
            self.complete(rel, cursor, &trigger).await?
        };
        Ok(Timed {
            value: ListAnswer::Server(answer.value),
            latency_ms: answer.latency_ms,
        })
    }

    /// Token cases: a key typed, `text` what the document holds now with the cursor at
    /// `cursor`; the list is asked again (`TriggerForIncompleteCompletions`) when the
    /// one in hand is incomplete, else the one in hand stands (`None`).
    pub async fn list_type(
        &mut self,
        rel: &str,
        text: &str,
        cursor: Position,
        incomplete: bool,
    ) -> Result<Option<(ListAnswer, Option<f64>)>, SessionError> {
        self.set_text(rel, text)?;
        if !incomplete {
            return Ok(None);
        }
        let answer = self.complete(rel, cursor, &Trigger::Incomplete).await?;
        Ok(Some((
            ListAnswer::Server(answer.value),
            Some(answer.latency_ms),
        )))
    }
}
