//! The editor conditions of a run: everything the client tells or does to a server that
//! could change its answers. One struct, recorded with every run.
//!
//! [`Conditions`] holds the client name and version, the capabilities sent, the inline
//! trigger kind, the formatting options (tab size, spaces) and the position encoding.
//! [`Trigger`] is how a completion request is triggered: `Invoked`, `Character` (a
//! trigger character the server declared) or `Incomplete` (the prefix grew while the last
//! list was incomplete).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::document::PositionEncoding;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum TriggerKind {
    /// Explicit user gesture (inline: `Invoked = 1`).
    Invoked,
    /// While typing (inline: `Automatic = 2`).
    #[default]
    Automatic,
}

impl TriggerKind {
    pub fn inline_code(self) -> u8 {
        match self {
            TriggerKind::Invoked => 1,
            TriggerKind::Automatic => 2,
        }
    }

    /// `CompletionTriggerKind` for `textDocument/completion` (the lsp-ai dialect, which
    /// tabby-agent speaks too): LSP has no separate automatic kind there; `Invoked = 1`
    /// covers "typing an identifier (24x7 code complete), manual invocation or via API",
    /// so both kinds send 1 (trigger characters belong to completion-list sessions).
    pub fn completion_code(self) -> u8 {
        match self {
            TriggerKind::Invoked | TriggerKind::Automatic => 1,
        }
    }

    /// What a dialect's request carries for this trigger kind, for the manifest.
    pub fn on_wire(self, dialect: super::profile::DialectKind) -> Value {
        use super::profile::DialectKind::*;
        match dialect {
            Inline | Copilot => json!({"triggerKind": self.inline_code()}),
            Completion | LspAi => json!({"triggerKind": self.completion_code()}),
            // Their requests have no trigger field.
            LspAiGeneration | LlmLs => Value::Null,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Conditions {
    pub client_name: String,
    pub client_version: String,
    pub trigger: TriggerKind,
    pub tab_size: u32,
    pub insert_spaces: bool,
    pub position_encoding: PositionEncoding,
}

impl Default for Conditions {
    fn default() -> Self {
        Conditions {
            client_name: "typist".into(),
            client_version: env!("CARGO_PKG_VERSION").into(),
            trigger: TriggerKind::Automatic,
            tab_size: 4,
            insert_spaces: true,
            position_encoding: PositionEncoding::Utf16,
        }
    }
}

impl Conditions {
    /// The client capabilities sent in `initialize`.
    pub fn capabilities(&self) -> Value {
        json!({
            "general": {"positionEncodings": [self.position_encoding.as_lsp()]},
            "workspace": {
                "configuration": true,
                "workspaceFolders": true,
                "didChangeConfiguration": {"dynamicRegistration": false},
                // Servers that cache the disk register for file events, and the
                // session tells them whenever a disk copy changes.
                "didChangeWatchedFiles": {"dynamicRegistration": true, "relativePatternSupport": true},
            },
            // rust-analyzer sends `experimental/serverStatus` (its readiness signal)
            // only to clients that declare this.
            "experimental": {"serverStatusNotification": true},
            "window": {"workDoneProgress": true},
            "textDocument": {
                "synchronization": {"dynamicRegistration": false, "didSave": false, "willSave": false},
                "completion": {
                    "dynamicRegistration": false,
                    "contextSupport": true,
                    "completionItem": {
                        "snippetSupport": false,
                        "insertReplaceSupport": false,
                        "labelDetailsSupport": true,
                        "deprecatedSupport": true,
                    },
                },
                "inlineCompletion": {"dynamicRegistration": false},
                "publishDiagnostics": {"versionSupport": true},
            },
        })
    }

    pub fn formatting_options(&self) -> Value {
        json!({"tabSize": self.tab_size, "insertSpaces": self.insert_spaces})
    }

    /// What a run records: the fields plus the capabilities actually sent.
    pub fn describe(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        v["capabilities"] = self.capabilities();
        v
    }
}

/// How the replay asks an editor for a completion list: as the user invokes it (after
/// typing this character, when the case has one), or again because the list in hand
/// is incomplete. Each editor turns it into its [`Trigger`] with the trigger characters
/// its server declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListAsk {
    Invoked(Option<String>),
    Incomplete,
}

/// How a completion request is triggered (`CompletionTriggerKind`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// 1: typing an identifier or an explicit invocation.
    Invoked,
    /// 2: a trigger character the server declared.
    Character(String),
    /// 3: the prefix grew while the last list was incomplete.
    Incomplete,
}

impl Trigger {
    /// `Character(c)` when the server declares `c` a trigger character, else `Invoked`.
    pub fn for_character(c: Option<&str>, declared: &[String]) -> Trigger {
        match c {
            Some(c) if declared.iter().any(|d| d == c) => Trigger::Character(c.to_string()),
            _ => Trigger::Invoked,
        }
    }

    /// The trigger of `ask` for a server that declares `declared`.
    pub fn of(ask: &ListAsk, declared: &[String]) -> Trigger {
        match ask {
            ListAsk::Invoked(c) => Trigger::for_character(c.as_deref(), declared),
            ListAsk::Incomplete => Trigger::Incomplete,
        }
    }

    /// The `context` of a `textDocument/completion` request.
    pub(crate) fn context(&self) -> Value {
        match self {
            Trigger::Invoked => json!({"triggerKind": 1}),
            Trigger::Character(c) => json!({"triggerKind": 2, "triggerCharacter": c}),
            Trigger::Incomplete => json!({"triggerKind": 3}),
        }
    }
}
