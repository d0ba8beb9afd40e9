//! The library's enums offered by name on the command line: each table says a value's
//! name and its help, and [`choice`] makes clap's parser of it (the library's enums
//! derive no CLI trait).
//!
//! The parser is clap's `PossibleValuesParser`.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

use typist::dataset::TokenContext;
use typist::editor::ranking::ListRule;
use typist::editor::{DialectKind, EditorKind, ReadinessRule, TriggerKind};
use typist::host::http::FimTemplate;
use typist::host::{BackendKind, NgramContext};
use typist::replay::typing::{ContextMode, Granularity, TypingMode};

/// A value of `T` by name, with the help of each name.
pub type Table<T> = &'static [(T, &'static str, &'static str)];

/// clap's parser of the names in `table`, giving the value they name.
pub fn choice<T: Copy + Send + Sync + 'static>(
    table: Table<T>,
) -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(
        table
            .iter()
            .map(|(_, n, h)| PossibleValue::new(*n).help(*h)),
    )
    .map(move |name| {
        table
            .iter()
            .find(|(_, n, _)| *n == name)
            .map(|(v, _, _)| *v)
            .expect("clap accepts only the table's names")
    })
}

// Tables of data: the names and helps people read in `--help`, clearer whole.

pub const CONTEXT: Table<ContextMode> = &[
    (
        ContextMode::Prefix,
        "prefix",
        "Only the code above the line (the study's default), plus `suffix_lines` below",
    ),
    (
        ContextMode::Full,
        "full",
        "The whole file with only the target line emptied",
    ),
];

pub const TOKEN_CONTEXT: Table<TokenContext> = &[
    (
        TokenContext::Prefix,
        "prefix",
        "The code above plus the line up to the token",
    ),
    (
        TokenContext::Full,
        "full",
        "The whole file with only the token removed (the study's choice)",
    ),
];

pub const LIST_RULE: Table<ListRule> = &[
    (
        ListRule::Vscode,
        "vscode",
        "VS Code's suggest widget: fuzzy, case-insensitive filter; sortText ignoring case (the default)",
    ),
    (
        ListRule::Neovim,
        "neovim",
        "Neovim's built-in popup: prefix filter (case-sensitive at the ask); sortText byte by byte",
    ),
];

pub const EDITOR: Table<EditorKind> = &[
    (
        EditorKind::Typist,
        "typist",
        "typist's own LSP client: requests sent directly, answers read (the default)",
    ),
    (
        EditorKind::Neovim,
        "neovim",
        "A real Neovim driven headless: its LSP client asks, its ghost text is read",
    ),
    (
        EditorKind::Vscode,
        "vscode",
        "A real VS Code (code-server in headless Chromium): an extension asks, the page's ghost text is read",
    ),
];

pub const TYPING: Table<TypingMode> = &[
    (
        TypingMode::Paste,
        "paste",
        "The context is set in one change before each case (as the study's script did)",
    ),
    (
        TypingMode::Type,
        "type",
        "The file is typed from the top through `didChange`, keeping the document open",
    ),
];

pub const GRANULARITY: Table<Granularity> = &[
    (Granularity::Line, "line", "One change per line"),
    (Granularity::Char, "char", "One change per character"),
];

pub const GOLF: Table<typist::replay::golf::GolfMode> = &[
    (
        typist::replay::golf::GolfMode::Full,
        "full",
        "Accept the whole suggestion (one key) when it is right to its end",
    ),
    (
        typist::replay::golf::GolfMode::Word,
        "word",
        "Also accept a wrong suggestion's words up to its last matching one (one key a word)",
    ),
];

pub const TRIGGER: Table<TriggerKind> = &[
    (
        TriggerKind::Invoked,
        "invoked",
        "Explicit user gesture (inline: `Invoked = 1`)",
    ),
    (
        TriggerKind::Automatic,
        "automatic",
        "While typing (inline: `Automatic = 2`)",
    ),
];

pub const DIALECT: Table<DialectKind> = &[
    (
        DialectKind::Inline,
        "inline",
        "LSP 3.18 `textDocument/inlineCompletion`",
    ),
    (
        DialectKind::Completion,
        "completion",
        "`textDocument/completion`, ranked as an editor shows it",
    ),
    (
        DialectKind::Copilot,
        "copilot",
        "Copilot: inline completion plus `didFocus`, version and formatting options",
    ),
    (
        DialectKind::LspAi,
        "lsp-ai",
        "`textDocument/completion` whose first item carries the generated text (lsp-ai, tabby-agent)",
    ),
    (
        DialectKind::LspAiGeneration,
        "lsp-ai-generation",
        "lsp-ai's `textDocument/generation`",
    ),
    (
        DialectKind::LlmLs,
        "llm-ls",
        "llm-ls: `llm-ls/getCompletions`",
    ),
];

pub const READINESS: Table<ReadinessRule> = &[
    (ReadinessRule::None, "none", "Ask at once"),
    (
        ReadinessRule::Progress,
        "progress",
        "Wait until every `$/progress` the server began has ended",
    ),
    (
        ReadinessRule::ServerStatus,
        "server-status",
        "Wait for `experimental/serverStatus` with `quiescent: true` (rust-analyzer)",
    ),
    (
        ReadinessRule::Stable,
        "stable",
        "Ask until two answers in a row are the same",
    ),
];

pub const BACKEND: Table<BackendKind> = &[
    (
        BackendKind::Ngram,
        "ngram",
        "Token n-grams from the workspace and open documents of the same language",
    ),
    (
        BackendKind::PreviousLine,
        "previous-line",
        "Repeats the most similar earlier line",
    ),
    (
        BackendKind::Fixed,
        "fixed",
        "Answers `pass` at once, computing nothing: for measuring the driver itself",
    ),
    (
        BackendKind::Openai,
        "openai",
        "An OpenAI-compatible `/v1/completions` server (FIM prompt, `--template`)",
    ),
    (
        BackendKind::Ollama,
        "ollama",
        "Ollama's `/api/generate` with `suffix`",
    ),
    (BackendKind::Llamacpp, "llamacpp", "llama.cpp's `/infill`"),
    (
        BackendKind::Tgi,
        "tgi",
        "Text Generation Inference's `/generate`",
    ),
    (
        BackendKind::Cheat,
        "cheat",
        "For tests of the replay's honesty only: reads the workspace from disk at `initialize`, every `didOpen` and every request, remembers every version of every file, and answers with the line at the cursor from any of them (`host::cheat`)",
    ),
    (
        BackendKind::Oracle,
        "oracle",
        "For tests only: answers the plan's true block at the cursor, read from the plan given with `--truth` (a path outside the workspace; `host::oracle`); given an edits plan, the session's true next edit (`host::next_edit`)",
    ),
    (
        BackendKind::Rename,
        "rename",
        "Next edits only: the last identifier renamed, renamed at its next occurrence (`host::next_edit`); no inline answers",
    ),
];

pub const NGRAM_CONTEXT: Table<NgramContext> = &[
    (
        NgramContext::Workspace,
        "workspace",
        "The workspace's files of the same language and the open documents",
    ),
    (
        NgramContext::Document,
        "document",
        "The current document alone (what an agent's prompt carries)",
    ),
];

pub const FIM_TEMPLATE: Table<FimTemplate> = &[
    (
        FimTemplate::Starcoder,
        "starcoder",
        "`<fim_prefix>P<fim_suffix>S<fim_middle>` (StarCoder, SantaCoder)",
    ),
    (
        FimTemplate::Codellama,
        "codellama",
        "`<PRE> P <SUF>S <MID>` (Code Llama)",
    ),
    (
        FimTemplate::Deepseek,
        "deepseek",
        "`<｜fim▁begin｜>P<｜fim▁hole｜>S<｜fim▁end｜>` (DeepSeek-Coder)",
    ),
    (
        FimTemplate::Qwen,
        "qwen",
        "`<|fim_prefix|>P<|fim_suffix|>S<|fim_middle|>` (Qwen2.5-Coder)",
    ),
    (
        FimTemplate::None,
        "none",
        "The prefix alone as the prompt, the suffix in a `suffix` field",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Each table names every value once, by the name the library's serde uses.
    #[test]
    fn names_are_the_serde_names() {
        fn check<T: Copy + serde::Serialize>(t: Table<T>) {
            for (v, name, _) in t {
                let json = serde_json::to_value(v).unwrap();
                assert_eq!(json.as_str(), Some(*name));
            }
        }
        check(CONTEXT);
        check(TOKEN_CONTEXT);
        check(TYPING);
        check(EDITOR);
        check(GRANULARITY);
        check(TRIGGER);
        check(BACKEND);
        check(FIM_TEMPLATE);
        check(DIALECT);
        check(READINESS);
    }
}
