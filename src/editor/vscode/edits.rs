//! Edit sessions through VS Code (methodology §13): the session's changes are what the
//! editor is to hold ([`VscodeSession::set_text`]); before each ask the files the
//! session changed since VS Code last loaded them are brought up to date (Quick Open,
//! the disk copy written, File: Revert File: VS Code sends the change to its
//! extensions and servers), then the asked file's line is typed as a line case's.

use super::{VscodeSession, failed};
use crate::editor::document::Position;
use crate::editor::error::SessionError;
use crate::editor::options::Timed;
use crate::editor::suggestions::Suggestions;
use crate::editor::workspace;

impl VscodeSession {
    /// The inline suggestion where an edit session stands in `rel`, the cursor at
    /// `cursor`: every other file the session changed reloaded first, `rel` made the
    /// editor typed into, then the cursor's line typed (see [`Self::suggest`]).
    pub async fn suggest_here(
        &mut self,
        rel: &str,
        cursor: Position,
    ) -> Result<Timed<Suggestions>, SessionError> {
        if let Some(why) = &self.broken {
            return Err(failed(why.clone()));
        }
        let stale: Vec<String> = self
            .texts
            .iter()
            .filter(|(f, t)| f.as_str() != rel && self.loaded.get(*f) != Some(*t))
            .map(|(f, _)| f.clone())
            .collect();
        for f in stale {
            tracing::debug!(
                file = f,
                "vscode: the session changed it since it was loaded"
            );
            let text = self.texts[&f].clone();
            let path = self.root.join(&f);
            workspace::write_creating(&path, &text).map_err(SessionError::file(&path))?;
            self.bring_back_focus().await?;
            self.quick_open(&f).await?;
            self.revert(&f, &text).await?;
            self.wait_line_count(text.split('\n').count()).await?;
            self.loaded.insert(f.clone(), text);
            self.current = Some(f);
        }
        if self.current.as_deref() != Some(rel) {
            tracing::debug!(file = rel, "vscode: the asked file made the active one");
            self.bring_back_focus().await?;
            self.quick_open(rel).await?;
            self.current = Some(rel.to_string());
        }
        let r = self.suggest(rel, cursor).await;
        // The case placed the whole text (its line typed): what VS Code holds now.
        if r.is_ok()
            && let Some(t) = self.texts.get(rel).cloned()
        {
            self.loaded.insert(rel.to_string(), t);
        }
        r
    }
}
