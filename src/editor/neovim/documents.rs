//! The session's documents: each opened in a buffer with Neovim's client attached (the
//! first waits for the server's initialization, and reads its name, version and
//! completion trigger characters), and what the editor is to hold per document, kept
//! on disk at once and placed in the buffer with the next case.

use std::path::Path;
use std::time::{Duration, Instant};

use rmpv::Value as Mp;

use super::NeovimSession;
use super::protocol::{ClientState, Ready};
use crate::editor::error::{EditorError, SessionError};
use crate::editor::handshake::ServerInfo;
use crate::editor::workspace;

/// The pause between two looks at whether Neovim's LSP client is initialized.
pub(super) const READY_POLL: Duration = Duration::from_millis(20);

impl NeovimSession {
    /// Opens `rel` in a buffer (the last one opened is the current one, where typing
    /// goes) with Neovim's client attached; the first waits for the server's
    /// initialization.
    pub async fn open(&mut self, rel: &str, text: &str) -> Result<(), SessionError> {
        self.write_file(rel, text)?;
        let path = self.root.join(rel);
        let lang = self
            .profile
            .language_for(Path::new(rel))
            .unwrap_or_else(|| self.profile.languages[0].clone());
        let buf = self
            .lua(
                "return typist.open(...)",
                vec![
                    Mp::from(path.display().to_string()),
                    Mp::from(lang),
                    Mp::from(true),
                ],
            )
            .await?;
        let buf = buf
            .as_i64()
            .ok_or_else(|| EditorError::Failed(format!("neovim: no buffer for {rel}")))?;
        self.bufs.insert(rel.to_string(), buf);
        self.texts.insert(rel.to_string(), text.to_string());
        self.lines.insert(
            rel.to_string(),
            text.split('\n').map(str::to_string).collect(),
        );
        if self.bufs.len() == 1 && !self.profile.is_plugin_only() {
            self.wait_initialized().await?;
        }
        Ok(())
    }

    async fn wait_initialized(&mut self) -> Result<(), SessionError> {
        let deadline = Instant::now() + Duration::from_millis(self.profile.init_timeout_ms);
        loop {
            let r: Ready = self.reply("typist.ready", vec![]).await?;
            match r.state {
                ClientState::Gone => {
                    return Err(self
                        .exited("the server exited before it was initialized")
                        .await
                        .into());
                }
                ClientState::Initialized => {
                    self.info = ServerInfo {
                        name: r.name,
                        version: r.version,
                    };
                    self.triggers = r.triggers;
                    return Ok(());
                }
                ClientState::Starting => {}
            }
            if Instant::now() >= deadline {
                return Err(EditorError::Timeout(format!(
                    "{}: not initialized within {} ms (inside neovim)",
                    self.profile.name, self.profile.init_timeout_ms
                ))
                .into());
            }
            tokio::time::sleep(READY_POLL).await;
        }
    }

    /// What the editor is to hold in `rel`; the disk copy holds it at once, the buffer
    /// when the next case is placed.
    pub fn set_text(&mut self, rel: &str, text: &str) -> Result<(), SessionError> {
        let old = self
            .texts
            .get(rel)
            .ok_or_else(|| SessionError::NotOpen(rel.to_string()))?;
        if old == text {
            return Ok(());
        }
        if let Some(added) = text.strip_prefix(old.as_str()) {
            use std::io::Write;
            let path = self.root.join(rel);
            std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .and_then(|mut f| f.write_all(added.as_bytes()))
                .map_err(SessionError::file(&path))?;
        } else {
            self.write_file(rel, text)?;
        }
        self.texts.insert(rel.to_string(), text.to_string());
        Ok(())
    }

    fn write_file(&self, rel: &str, text: &str) -> Result<(), SessionError> {
        let path = self.root.join(rel);
        workspace::write_creating(&path, text).map_err(SessionError::file(&path))
    }
}
