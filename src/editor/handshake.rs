//! The handshake: the `initialize` params typist sends (typed, through `ls-types` (tower-lsp-server's LSP types)) and
//! what it reads from the answer. The answer is read from JSON on purpose: servers
//! declare capabilities loosely (`true` for an options object, unknown keys), and a
//! strict decode would refuse servers every editor talks to.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;
use tower_lsp_server::ls_types::{ClientInfo, InitializeParams, TraceValue, WorkspaceFolder};

use super::conditions::Conditions;
use super::document::PositionEncoding;
use super::profile::Profile;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SyncKind {
    None,
    Full,
    Incremental,
}

/// What the server said about itself in `initialize`.
#[derive(Debug, Clone, Serialize, Default)]
pub struct ServerInfo {
    pub name: Option<String>,
    pub version: Option<String>,
}

impl ServerCaps {
    /// Whether the server declared `key` (`inlineCompletionProvider`, `completionProvider`).
    pub fn declares(&self, key: &str) -> bool {
        match key {
            "inlineCompletionProvider" => self.inline,
            "completionProvider" => self.completion,
            _ => false,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ServerCaps {
    pub inline: bool,
    pub completion: bool,
    pub sync: SyncKind,
    pub position_encoding: PositionEncoding,
    /// `completionProvider.triggerCharacters`: what a completion session may send as
    /// `TriggerCharacter`.
    #[serde(skip)]
    pub trigger_characters: Vec<String>,
}

/// The `initialize` params: the client, the workspace (root and folders), the
/// capabilities of `conditions`, and the profile's initialization options (null when it
/// has none: sent as null, as always).
pub fn initialize_params(
    profile: &Profile,
    conditions: &Conditions,
    root: &Path,
    root_uri: &str,
    folders: Option<Vec<WorkspaceFolder>>,
) -> Result<InitializeParams, serde_json::Error> {
    #[allow(deprecated)] // rootUri and rootPath: older servers still read them
    Ok(InitializeParams {
        process_id: Some(std::process::id()),
        root_path: Some(root.display().to_string()),
        root_uri: root_uri.parse().ok(),
        initialization_options: Some(profile.initialization_options.clone()),
        capabilities: serde_json::from_value(conditions.capabilities())?,
        trace: Some(TraceValue::Off),
        workspace_folders: folders,
        client_info: Some(ClientInfo {
            name: conditions.client_name.clone(),
            version: Some(conditions.client_version.clone()),
        }),
        locale: None,
        work_done_progress_params: Default::default(),
    })
}

/// What the `initialize` answer says: who the server is and what it can do.
pub fn read_answer(answer: &Value) -> (ServerInfo, ServerCaps) {
    let field = |p: &str| {
        answer
            .pointer(p)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let info = ServerInfo {
        name: field("/serverInfo/name"),
        version: field("/serverInfo/version"),
    };
    let caps = answer.get("capabilities").cloned().unwrap_or(Value::Null);
    (info, read_caps(&caps))
}

fn read_caps(caps: &Value) -> ServerCaps {
    let truthy = |v: Option<&Value>| match v {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(_) => true,
    };
    let sync = match caps.get("textDocumentSync") {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::Object(o)) => o.get("change").and_then(Value::as_u64),
        _ => None,
    };
    let sync = match sync {
        Some(2) => SyncKind::Incremental,
        Some(1) => SyncKind::Full,
        Some(0) => SyncKind::None,
        // Unspecified: send full text, which every server accepts.
        _ => SyncKind::Full,
    };
    let position_encoding = caps
        .get("positionEncoding")
        .and_then(Value::as_str)
        .and_then(PositionEncoding::from_lsp)
        // A server that does not answer the negotiation speaks UTF-16, whatever we asked.
        .unwrap_or(PositionEncoding::Utf16);
    ServerCaps {
        inline: truthy(caps.get("inlineCompletionProvider")),
        completion: truthy(caps.get("completionProvider")),
        sync,
        position_encoding,
        trigger_characters: caps
            .pointer("/completionProvider/triggerCharacters")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The params as they were written by hand before they were typed: the same JSON
    /// value (so the same bytes on the wire), under every position encoding.
    #[test]
    fn initialize_params_are_what_they_always_were() {
        let profile = Profile::parse(
            "name = \"x\"\ncommand = \"x\"\ndialect = \"inline\"\nlanguages = [\"python\"]\n",
            Path::new("x.toml"),
        )
        .unwrap();
        for enc in [
            PositionEncoding::Utf8,
            PositionEncoding::Utf16,
            PositionEncoding::Utf32,
        ] {
            let conditions = Conditions {
                position_encoding: enc,
                ..Conditions::default()
            };
            for init_options in [Value::Null, json!({"a": {"b": [1]}})] {
                let profile = Profile {
                    initialization_options: init_options.clone(),
                    ..profile.clone()
                };
                let root = Path::new("/tmp/typist-1-x/workspace");
                let root_uri = "file:///tmp/typist-1-x/workspace";
                let folders = json!([{"uri": root_uri, "name": "workspace"}]);
                let typed = initialize_params(
                    &profile,
                    &conditions,
                    root,
                    root_uri,
                    serde_json::from_value(folders.clone()).unwrap(),
                )
                .unwrap();
                let by_hand = json!({
                    "processId": std::process::id(),
                    "clientInfo": {"name": conditions.client_name, "version": conditions.client_version},
                    "rootUri": root_uri,
                    "rootPath": root.display().to_string(),
                    "workspaceFolders": folders,
                    "capabilities": conditions.capabilities(),
                    "initializationOptions": init_options,
                    "trace": "off",
                });
                assert_eq!(serde_json::to_value(typed).unwrap(), by_hand, "{enc:?}");
            }
        }
    }

    #[test]
    fn capabilities_are_read_from_either_shape() {
        let c = read_caps(
            &json!({"textDocumentSync": {"openClose": true, "change": 2}, "inlineCompletionProvider": {}}),
        );
        assert!(c.inline && !c.completion);
        assert_eq!(c.sync, SyncKind::Incremental);
        let c = read_caps(
            &json!({"textDocumentSync": 1, "completionProvider": {"triggerCharacters": ["."]}, "positionEncoding": "utf-8"}),
        );
        assert!(!c.inline && c.completion);
        assert_eq!(c.sync, SyncKind::Full);
        assert_eq!(c.position_encoding, PositionEncoding::Utf8);
    }
}
