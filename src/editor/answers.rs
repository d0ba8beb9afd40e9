//! The editor's answers to server→client requests, registered with the client as typed
//! handlers: settings by section for `workspace/configuration`, the declared folders,
//! and the polite nothing every editor answers to registrations, progress tokens,
//! message boxes, refreshes, documents to show and edits to apply (typist shows
//! nothing and applies nothing). Registrations are also seen by the session, which
//! honours file watching (see `TypistSession::absorb_request`).

use serde_json::Value;
use tower_lsp_server::ls_types::request::{
    ApplyWorkspaceEdit, CodeLensRefresh, InlayHintRefreshRequest, RegisterCapability,
    SemanticTokensRefresh, ShowDocument, ShowMessageRequest, UnregisterCapability,
    WorkDoneProgressCreate, WorkspaceConfiguration, WorkspaceDiagnosticRefresh,
    WorkspaceFoldersRequest,
};
use tower_lsp_server::ls_types::{ApplyWorkspaceEditResponse, ShowDocumentResult, WorkspaceFolder};

use crate::lsp::Handlers;

/// Every answer an editor gives, with `settings` for `workspace/configuration` and
/// `folders` for `workspace/workspaceFolders` (`None`: answered with null).
pub fn editor_handlers(settings: Value, folders: Option<Vec<WorkspaceFolder>>) -> Handlers {
    Handlers::default()
        .on::<WorkspaceConfiguration, _>(move |params| {
            Ok(params
                .items
                .iter()
                .map(|item| match item.section.as_deref() {
                    Some(s) if !s.is_empty() => lookup_section(&settings, s),
                    _ => settings.clone(),
                })
                .collect())
        })
        .answer::<WorkspaceFoldersRequest, _>(move || folders.clone())
        .answer::<RegisterCapability, _>(|| ())
        .answer::<UnregisterCapability, _>(|| ())
        .answer::<WorkDoneProgressCreate, _>(|| ())
        .answer::<ShowMessageRequest, _>(|| None)
        .answer::<SemanticTokensRefresh, _>(|| ())
        .answer::<InlayHintRefreshRequest, _>(|| ())
        .answer::<CodeLensRefresh, _>(|| ())
        .answer::<WorkspaceDiagnosticRefresh, _>(|| ())
        .answer::<ShowDocument, _>(|| ShowDocumentResult { success: false })
        .answer::<ApplyWorkspaceEdit, _>(|| ApplyWorkspaceEditResponse {
            applied: false,
            failure_reason: None,
            failed_change: None,
        })
}

/// The folder list declared in `initialize` and answered to `workspace/workspaceFolders`.
pub fn workspace_folders(root_uri: &str) -> Option<Vec<WorkspaceFolder>> {
    let uri = root_uri.parse().ok()?;
    Some(vec![WorkspaceFolder {
        uri,
        name: "workspace".into(),
    }])
}

/// `python.analysis` → `settings["python"]["analysis"]`, or a literal dotted key.
pub fn lookup_section(settings: &Value, section: &str) -> Value {
    if let Some(v) = settings.get(section) {
        return v.clone();
    }
    let mut cur = settings;
    for part in section.split('.') {
        match cur.get(part) {
            Some(v) => cur = v,
            None => return Value::Null,
        }
    }
    cur.clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The answers as they were when the client itself held the table (as JSON values,
    /// whose keys serialize sorted: the same bytes on the wire).
    #[test]
    fn answers_are_what_editors_always_answered() {
        let settings = json!({"python": {"analysis": {"mode": "off"}}, "files.exclude": ["x"]});
        let h = editor_handlers(settings.clone(), workspace_folders("file:///w%20s"));
        let ask = |m: &str, p: Value| h.answer_to(m, p);
        assert_eq!(
            ask(
                "workspace/configuration",
                json!({"items": [{"section": "python.analysis"}, {"section": "files.exclude"},
                    {"section": "nope"}, {}, {"scopeUri": "file:///w", "section": ""}]})
            ),
            Ok(json!([{"mode": "off"}, ["x"], null, settings, settings]))
        );
        assert_eq!(
            ask("workspace/workspaceFolders", Value::Null),
            Ok(json!([{"uri": "file:///w%20s", "name": "workspace"}]))
        );
        for m in [
            "client/registerCapability",
            "client/unregisterCapability",
            "window/workDoneProgress/create",
            "window/showMessageRequest",
            "workspace/semanticTokens/refresh",
            "workspace/inlayHint/refresh",
            "workspace/codeLens/refresh",
            "workspace/diagnostic/refresh",
        ] {
            assert_eq!(
                ask(m, json!({"unregistrations": [1]})),
                Ok(Value::Null),
                "{m}"
            );
        }
        assert_eq!(
            ask("window/showDocument", json!({"uri": "https://x"})),
            Ok(json!({"success": false}))
        );
        assert_eq!(
            ask("workspace/applyEdit", json!({"edit": {}})),
            Ok(json!({"applied": false}))
        );
        let err = ask("copilot/weird", json!({})).unwrap_err();
        assert_eq!(
            (err.code, err.message.as_str()),
            (-32601, "method not found: copilot/weird")
        );
        let none = editor_handlers(Value::Null, None);
        assert_eq!(
            none.answer_to("workspace/workspaceFolders", Value::Null),
            Ok(Value::Null)
        );
    }
}
