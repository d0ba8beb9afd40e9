//! Keys as DevTools key events (`Input.dispatchKeyEvent`), text inserted
//! (`Input.insertText`), and the session's DevTools command, which marks the session
//! broken when its tab does not answer.

use serde_json::{Value, json};

use super::VscodeSession;
use super::instance::CALL;
use crate::editor::error::{EditorError, SessionError};

/// A key: its DOM `key` and `code`, and its Windows virtual key code.
#[derive(Debug, Clone, Copy)]
pub(super) struct Key {
    pub key: &'static str,
    pub code: &'static str,
    pub vk: u32,
}

const fn key(key: &'static str, code: &'static str, vk: u32) -> Key {
    Key { key, code, vk }
}

pub(super) const ESCAPE: Key = key("Escape", "Escape", 27);
pub(super) const ENTER: Key = key("Enter", "Enter", 13);
/// Enter as a typed key (its `key` the character it types): a line break in the editor.
pub(super) const RETURN: Key = key("\r", "Enter", 13);
pub(super) const END: Key = key("End", "End", 35);
pub(super) const SPACE: Key = key(" ", "Space", 32);
pub(super) const PAGE_UP: Key = key("PageUp", "PageUp", 33);
pub(super) const PAGE_DOWN: Key = key("PageDown", "PageDown", 34);
/// `p` with Ctrl: Quick Open.
pub(super) const KEY_P: Key = key("p", "KeyP", 80);
/// `P` with Ctrl+Shift: the command palette.
pub(super) const SHIFTED_P: Key = key("P", "KeyP", 80);
/// `g` with Ctrl: Go to Line.
pub(super) const KEY_G: Key = key("g", "KeyG", 71);

pub(super) const CTRL: u32 = 2;
pub(super) const SHIFT: u32 = 8;

impl VscodeSession {
    /// Presses and releases `k` with `modifiers` (a key that types nothing).
    pub(super) async fn press(&mut self, k: Key, modifiers: u32) -> Result<(), SessionError> {
        let mut p = json!({"type": "rawKeyDown", "key": k.key, "code": k.code,
            "windowsVirtualKeyCode": k.vk, "nativeVirtualKeyCode": k.vk, "modifiers": modifiers});
        self.call("Input.dispatchKeyEvent", p.clone()).await?;
        p["type"] = json!("keyUp");
        self.call("Input.dispatchKeyEvent", p).await?;
        Ok(())
    }

    /// Escape: what is shown (a suggestion, a quick-input box) hidden.
    pub(super) async fn escape(&mut self) -> Result<(), SessionError> {
        self.press(ESCAPE, 0).await
    }

    /// Presses and releases `k` typing `text`.
    pub(super) async fn type_key(&mut self, k: Key, text: &str) -> Result<(), SessionError> {
        self.key_text(k.key, k.code, k.vk, text).await
    }

    /// Types `c` as a user does; a tab is inserted as text (a Tab key would accept a
    /// shown suggestion or indent).
    pub(super) async fn type_char(&mut self, c: char) -> Result<(), SessionError> {
        match c {
            '\t' => self.insert_text("\t").await,
            ' ' => self.type_key(SPACE, " ").await,
            c => {
                let s = c.to_string();
                self.key_text(&s, "", 0, &s).await
            }
        }
    }

    async fn key_text(
        &mut self,
        key: &str,
        code: &str,
        vk: u32,
        text: &str,
    ) -> Result<(), SessionError> {
        let p = json!({"type": "keyDown", "key": key, "code": code, "text": text,
            "unmodifiedText": text, "windowsVirtualKeyCode": vk});
        self.call("Input.dispatchKeyEvent", p).await?;
        let p = json!({"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": vk});
        self.call("Input.dispatchKeyEvent", p).await?;
        Ok(())
    }

    /// Inserts `text` where the focus is (a quick-input box, the editor).
    pub(super) async fn insert_text(&mut self, text: &str) -> Result<(), SessionError> {
        self.call("Input.insertText", json!({ "text": text }))
            .await?;
        Ok(())
    }

    /// A DevTools command to the session's tab; a failure other than VS Code's end marks
    /// the session broken.
    pub(super) async fn call(
        &mut self,
        method: &str,
        params: Value,
    ) -> Result<Value, SessionError> {
        match self
            .vs
            .cdp
            .call(method, params, Some(&self.tab), CALL)
            .await
        {
            Ok(v) => Ok(v),
            Err(e) => {
                let err = self.vs.error(method, e);
                if let SessionError::Editor(EditorError::Failed(m)) = &err {
                    self.broken = Some(m.clone());
                }
                Err(err)
            }
        }
    }
}
