//! Ranking a completion list as an editor shows it (methodology §6, issue 11). Pure
//! functions over the server's JSON answer, so the rule can be checked on recorded
//! answers of real servers (`fixtures/completion/`).
//!
//! The rule, modelled on VS Code's default suggest widget:
//! - **Filter**: an item is kept when the typed prefix matches its `filterText` (else
//!   its label, with clangd's leading space or bullet dropped) fuzzily: the prefix's
//!   characters appear in order in the word, compared case-insensitively, and the first
//!   one matches at the start of the word or at a word boundary (after `_`, `-`, `.`,
//!   `$`, `:`, a space, or a lower-case letter followed by an upper-case one, as in
//!   `camelCase`). An empty prefix keeps every item. (VS Code's `fuzzyScore` also
//!   scores the match and lets a strong score reorder items; typist keeps the server's
//!   order, as the study did.)
//! - **Order**: by `sortText` (else the label), compared case-insensitively as VS Code
//!   does (its `sortTextLow`), stable for ties (the server's order).
//! - **Inserted text**: `textEdit.newText` (or an `insertReplaceEdit`'s), else
//!   `insertText`, else the label; snippets (`insertTextFormat` 2) reduced to their text
//!   (`${1:x}` → `x`, `$1` and `$0` removed, `\$` unescaped).
//! - **Match**: the expected token is found at the first item whose inserted text's
//!   leading identifier (letters, digits, `_`, `$`, after any leading punctuation such as
//!   `.` or `?.`) equals the token exactly; `path(`, `path()` and `path=` all insert
//!   `path`.
//!
//! The result keeps the expected token's rank and the inserted texts of every item shown
//! (records written before the whole list was kept hold the first 20; `typist run
//! --list-cap N` keeps the first N, the rank still counted over the whole list).

use serde_json::Value;

use super::suggestions::strip_snippet;

/// A completion list ranked for one expected token.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ranked {
    /// 1-based position of the expected token in the filtered, sorted list.
    pub rank: Option<u32>,
    /// Items left after filtering by the typed prefix.
    pub items: usize,
    /// Items as the server returned them.
    pub listed: usize,
    /// The inserted texts of every item after filtering and sorting.
    pub top: Vec<String>,
    /// The server said the list is incomplete (ask again as the prefix grows).
    pub incomplete: bool,
}

/// One item as the editor reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub label: String,
    pub filter: String,
    pub sort: String,
    pub insert: String,
}

/// The items of an answer: `null`, an array, or a `CompletionList`.
pub fn items_of(answer: &Value) -> &[Value] {
    match answer {
        Value::Array(a) => a.as_slice(),
        Value::Object(o) => o
            .get("items")
            .and_then(Value::as_array)
            .map_or(&[][..], |a| a.as_slice()),
        _ => &[],
    }
}

/// `isIncomplete` of a `CompletionList` (an array or null is complete).
pub fn is_incomplete(answer: &Value) -> bool {
    answer
        .get("isIncomplete")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

fn clean(s: &str) -> &str {
    // clangd prefixes labels with a space or a bullet (•) for items needing an include.
    s.trim_start_matches([' ', '•']).trim_end()
}

/// Reads one item; `None` when it has no label.
pub fn read_item(item: &Value) -> Option<Item> {
    let label = clean(item.get("label")?.as_str()?).to_string();
    let str_at = |k: &str| item.get(k).and_then(Value::as_str);
    let filter = str_at("filterText").map_or_else(|| label.clone(), |s| clean(s).to_string());
    let sort = str_at("sortText").map_or_else(|| label.clone(), str::to_string);
    let edit = item.get("textEdit").and_then(|e| e.get("newText"));
    let raw = edit
        .and_then(Value::as_str)
        .or_else(|| str_at("insertText"))
        .unwrap_or(&label);
    let insert = if item.get("insertTextFormat").and_then(Value::as_u64) == Some(2) {
        strip_snippet(raw)
    } else {
        raw.to_string()
    };
    Some(Item {
        label,
        filter,
        sort,
        insert: clean(&insert).to_string(),
    })
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The identifier an inserted text puts in place of the token: its leading run of
/// identifier characters after any leading punctuation (`.x`, `?.x`, `->x`).
pub fn leading_identifier(insert: &str) -> &str {
    let s = insert.trim_start_matches(|c: char| !is_ident(c) && c != '(' && c != '"');
    let end = s.find(|c: char| !is_ident(c)).unwrap_or(s.len());
    &s[..end]
}

/// Whether character `i` of `word` starts a word: the first character, one after a
/// separator, or an upper-case letter after a lower-case one.
fn at_boundary(word: &[char], i: usize) -> bool {
    if i == 0 {
        return true;
    }
    let (prev, c) = (word[i - 1], word[i]);
    matches!(prev, '_' | '-' | '.' | '$' | ':' | ' ' | '/')
        || (prev.is_lowercase() && c.is_uppercase())
        || (!prev.is_alphanumeric() && c.is_alphanumeric())
}

fn same(a: char, b: char) -> bool {
    a == b || a.to_lowercase().eq(b.to_lowercase())
}

/// The fuzzy filter (see the module's documentation): `pattern`'s characters in order
/// in `word`, case-insensitively, the first at the start or at a word boundary.
pub fn fuzzy_match(pattern: &str, word: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let Some(&first) = p.first() else {
        return true;
    };
    let w: Vec<char> = word.chars().collect();
    (0..w.len())
        .filter(|&i| same(first, w[i]) && at_boundary(&w, i))
        .any(|i| is_subsequence(&p[1..], &w[i + 1..]))
}

fn is_subsequence(p: &[char], w: &[char]) -> bool {
    let mut it = w.iter();
    p.iter().all(|&c| it.any(|&x| same(c, x)))
}

/// The items an editor shows after typing `typed`: filtered, then sorted (stable).
pub fn shown(answer: &Value, typed: &str) -> Vec<Item> {
    let mut items: Vec<Item> = items_of(answer)
        .iter()
        .filter_map(read_item)
        .filter(|it| fuzzy_match(typed, &it.filter))
        .collect();
    items.sort_by_cached_key(|it| it.sort.to_lowercase());
    items
}

/// Ranks `answer` after the user typed `typed` (the token's first characters) for the
/// expected token `expected`.
pub fn rank(answer: &Value, typed: &str, expected: &str) -> Ranked {
    ranked(
        shown(answer, typed),
        items_of(answer).len(),
        is_incomplete(answer),
        expected,
    )
}

fn ranked(items: Vec<Item>, listed: usize, incomplete: bool, expected: &str) -> Ranked {
    let rank = items
        .iter()
        .position(|it| leading_identifier(&it.insert) == expected)
        .map(|i| i as u32 + 1);
    Ranked {
        rank,
        items: items.len(),
        listed,
        top: items.into_iter().map(|it| it.insert).collect(),
        incomplete,
    }
}

/// How typist's own client filters and sorts a completion list for display (`typist
/// run --list-rule`); a real editor shows lists by its own rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ListRule {
    /// VS Code's suggest widget: the rule of this module's documentation.
    #[default]
    Vscode,
    /// Neovim's built-in completion ([`shown_neovim`]).
    Neovim,
}

impl ListRule {
    pub fn is_default(&self) -> bool {
        *self == ListRule::Vscode
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ListRule::Vscode => "vscode",
            ListRule::Neovim => "neovim",
        }
    }
}

/// Lua's `%w` (C locale): an ASCII letter or digit.
fn has_alnum(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_alphanumeric())
}

/// Vim's `\k` with the default `iskeyword` (`@,48-57,_,192-255`): ASCII letters and
/// digits, `_`, `µ` and U+00C0–U+00FF, and above U+00FF the word characters (Vim's
/// `utf_class` of 2 or more; approximated by Unicode's alphanumerics).
fn is_keyword(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || c == '_'
        || c == 'µ'
        || ('\u{c0}'..='\u{ff}').contains(&c)
        || (c > '\u{ff}' && c.is_alphanumeric())
}

/// Lua's `%s` (C locale): space, tab, line feed, vertical tab, form feed, return.
fn is_c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r')
}

/// The `word` Neovim gives an item's popup entry (`get_completion_word` of
/// `runtime/lua/vim/lsp/completion.lua`): what the popup narrows on as keys are typed.
fn neovim_word(item: &Value, prefix: &str) -> String {
    let str_at = |k: &str| item.get(k).and_then(Value::as_str);
    let label = str_at("label").unwrap_or_default();
    let edit = item
        .get("textEdit")
        .and_then(|e| e.get("newText"))
        .and_then(Value::as_str);
    let insert = str_at("insertText");
    if item.get("insertTextFormat").and_then(Value::as_u64) == Some(2) {
        if edit.is_some() || insert.is_some_and(|t| !t.is_empty()) {
            let text = strip_snippet(insert.or(edit).unwrap_or_default());
            let word = if text.len() < label.len() {
                text.chars().take_while(|&c| is_keyword(c)).collect()
            } else {
                label.to_string()
            };
            return match str_at("filterText") {
                Some(f) if !prefix.is_empty() && !word.starts_with(prefix) => f.to_string(),
                _ => word,
            };
        }
        return label.to_string();
    }
    if let Some(t) = edit {
        return t.split(is_c_space).next().unwrap_or(t).to_string();
    }
    match insert {
        Some(t) if !t.is_empty() => t.to_string(),
        _ => label.to_string(),
    }
}

/// The items Neovim's built-in completion shows (`vim.lsp.completion` with typist's
/// `completeopt` of `menuone,noselect,popup`), for an answer asked with `asked` typed of
/// the token and `typed` typed now:
/// - **Filter at the ask**: when `asked` holds a letter or digit, an item is kept when
///   its `filterText`, else (with no `textEdit`) its label, starts with `asked`,
///   case-sensitively; an item with a `textEdit` and no `filterText` is kept.
/// - **Order**: by `sortText` (else the label), byte by byte (upper case first). Ties
///   keep the server's order here; Neovim's `table.sort` promises no order for them.
/// - **Narrowing**: keys typed after the ask narrow the popup to the entries whose
///   `word` ([`neovim_word`]) starts with what is typed, ignoring ASCII case (Vim's
///   `icase`).
///
/// `typed` and `asked` are counted from the token's start. Neovim's popup starts at the
/// server's `textEdit` start or at the keyword boundary before the cursor: the same
/// place for tokens of keyword characters only (checked on Python with pyright); a
/// token such as JavaScript's `$x`, or an edit that starts before the token, is not
/// modelled.
pub fn shown_neovim(answer: &Value, typed: &str, asked: &str) -> Vec<Item> {
    let filter = has_alnum(asked);
    let mut kept: Vec<(String, String, Item)> = items_of(answer)
        .iter()
        .filter_map(|v| {
            let item = read_item(v)?;
            let label = v.get("label")?.as_str()?;
            let keep = !filter
                || match v.get("filterText").and_then(Value::as_str) {
                    Some(f) => f.starts_with(asked),
                    None => v.get("textEdit").is_some() || label.starts_with(asked),
                };
            keep.then(|| {
                let sort = v
                    .get("sortText")
                    .and_then(Value::as_str)
                    .unwrap_or(label)
                    .to_string();
                (sort, neovim_word(v, asked), item)
            })
        })
        .collect();
    kept.sort_by(|a, b| a.0.cmp(&b.0));
    if typed.len() > asked.len() {
        // Vim compares the leader with `STRNICMP`: ASCII case only.
        let leader = typed.to_ascii_lowercase();
        kept.retain(|(_, word, _)| word.to_ascii_lowercase().starts_with(&leader));
    }
    kept.into_iter().map(|(_, _, item)| item).collect()
}

/// The items a server's `answer`, asked with `asked` typed of the token, shows by
/// `rule` after `typed`.
pub fn shown_by(rule: ListRule, answer: &Value, typed: &str, asked: &str) -> Vec<Item> {
    match rule {
        ListRule::Vscode => shown(answer, typed),
        ListRule::Neovim => shown_neovim(answer, typed, asked),
    }
}

/// A list as a real editor showed it (Neovim's popup): the items left after the editor's
/// own filtering and sorting, in display order, ranked as they stand (no filter or sort
/// of typist's is applied on top).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ShownList {
    /// The LSP items of the entries shown, first shown first.
    pub items: Vec<Value>,
    /// Items in the server's last answer.
    pub listed: usize,
    /// The server's last answer was incomplete.
    pub incomplete: bool,
}

/// A completion answer to rank: the server's raw answer (typist's own client ranks it
/// by the rule above) or the list an editor showed (ranked in its display order).
#[derive(Debug, Clone, PartialEq)]
pub enum ListAnswer {
    Server(Value),
    Shown(ShownList),
}

impl ListAnswer {
    pub fn is_incomplete(&self) -> bool {
        match self {
            ListAnswer::Server(v) => is_incomplete(v),
            ListAnswer::Shown(s) => s.incomplete,
        }
    }

    /// The items shown after typing `typed`, in display order: a server's answer (asked
    /// with `asked` typed) by `rule`, an editor's list as it stands.
    pub fn shown(&self, rule: ListRule, typed: &str, asked: &str) -> Vec<Item> {
        match (self, rule) {
            (ListAnswer::Server(v), _) => shown_by(rule, v, typed, asked),
            (ListAnswer::Shown(s), _) => s.items.iter().filter_map(read_item).collect(),
        }
    }

    /// Ranks the answer for `expected` after `typed` was typed (`asked` of it when the
    /// answer was asked for).
    pub fn rank(&self, rule: ListRule, typed: &str, asked: &str, expected: &str) -> Ranked {
        let (listed, incomplete) = match self {
            ListAnswer::Server(v) => (items_of(v).len(), is_incomplete(v)),
            ListAnswer::Shown(s) => (s.listed, s.incomplete),
        };
        ranked(self.shown(rule, typed, asked), listed, incomplete, expected)
    }
}

/// What a readiness rule compares between two answers: every item as read, in the
/// server's order, and whether the list is complete.
pub fn signature(answer: &Value) -> (Vec<Item>, bool) {
    (
        items_of(answer).iter().filter_map(read_item).collect(),
        is_incomplete(answer),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_fuzzy_rule_is_a_subsequence_anchored_at_a_word_start() {
        assert!(fuzzy_match("", "anything"));
        assert!(fuzzy_match("pa", "path"));
        assert!(fuzzy_match("PA", "path"));
        assert!(fuzzy_match("pth", "path"));
        assert!(fuzzy_match("gc", "getcwd"));
        assert!(fuzzy_match("up", "toUpperCase"));
        assert!(fuzzy_match("ab", "foo_abc"));
        assert!(fuzzy_match("é", "Élan"));
        assert!(!fuzzy_match("at", "path"), "first char inside a word");
        assert!(!fuzzy_match("pz", "path"));
        assert!(!fuzzy_match("pathx", "path"));
        assert!(!fuzzy_match("pe", "upper"), "lower-case after lower-case");
    }

    #[test]
    fn leading_identifiers_drop_calls_keywords_and_member_dots() {
        assert_eq!(leading_identifier("path"), "path");
        assert_eq!(leading_identifier("print()"), "print");
        assert_eq!(leading_identifier("sep="), "sep");
        assert_eq!(leading_identifier("?.length"), "length");
        assert_eq!(leading_identifier(".length"), "length");
        assert_eq!(leading_identifier("$foo.bar"), "$foo");
        assert_eq!(leading_identifier("[\"a-b\"]"), "");
    }

    #[test]
    fn items_are_filtered_sorted_and_matched_by_what_they_insert() {
        let answer = json!({"isIncomplete": true, "items": [
            {"label": "pathsep", "sortText": "09"},
            {"label": "path", "sortText": "05", "textEdit": {"newText": "path", "range": {}}},
            {"label": " pardir", "sortText": "07"},
            {"label": "getcwd", "sortText": "01"},
            {"label": "PAbc", "filterText": "pabc"},
            {"label": "spam", "sortText": "00"},
            {"label": "print(…)", "sortText": "08", "insertText": "print(${1:x})$0", "insertTextFormat": 2},
        ]});
        let r = rank(&answer, "pa", "pardir");
        assert_eq!(r.rank, Some(2));
        assert_eq!(r.items, 4);
        assert_eq!(r.listed, 7);
        assert_eq!(r.top, ["path", "pardir", "pathsep", "PAbc"]);
        assert!(r.incomplete);
        assert_eq!(rank(&answer, "p", "print").rank, Some(3));
        assert_eq!(rank(&answer, "p", "print").top[2], "print(x)");
        assert_eq!(rank(&answer, "", "spam").rank, Some(1));
        assert_eq!(
            rank(&answer, "x", "spam"),
            Ranked {
                incomplete: true,
                listed: 7,
                ..Default::default()
            }
        );
    }

    #[test]
    fn a_list_an_editor_showed_is_ranked_in_its_display_order() {
        let shown = ListAnswer::Shown(ShownList {
            items: vec![
                json!({"label": "zeta", "sortText": "9"}),
                json!({"label": "alpha", "sortText": "1"}),
            ],
            listed: 5,
            incomplete: true,
        });
        // Neither filtered by what was typed nor sorted again.
        let r = shown.rank(ListRule::Vscode, "q", "", "alpha");
        assert_eq!((r.rank, r.items, r.listed), (Some(2), 2, 5));
        assert_eq!(r.top, ["zeta", "alpha"]);
        assert!(shown.is_incomplete());
    }

    #[test]
    fn ties_keep_the_servers_order_and_insert_replace_edits_count() {
        let answer = json!([
            {"label": "b", "sortText": "1", "textEdit": {"newText": "beta", "insert": {}, "replace": {}}},
            {"label": "a", "sortText": "1"},
        ]);
        let r = rank(&answer, "", "beta");
        assert_eq!(r.top, ["beta", "a"]);
        assert_eq!(r.rank, Some(1));
        assert!(!r.incomplete);
        assert_eq!(rank(&Value::Null, "", "x").listed, 0);
    }

    fn inserts(items: Vec<Item>) -> Vec<String> {
        items.into_iter().map(|it| it.insert).collect()
    }

    #[test]
    fn neovims_rule_filters_at_the_ask_sorts_by_bytes_and_narrows_ignoring_case() {
        let answer = json!({"items": [
            {"label": "path", "sortText": "b"},
            {"label": "Path", "sortText": "B"},
            {"label": "_path", "sortText": "a"},
            {"label": "PathLike", "sortText": "C"},
            {"label": "edited", "sortText": "A", "textEdit": {"newText": "edited", "range": {}}},
            {"label": "pabc", "filterText": "Pabc", "sortText": "c"},
            {"label": "print(…)", "sortText": "d", "insertText": "print(${1:x})", "insertTextFormat": 2},
        ]});
        // Asked with nothing typed: every item, upper case first.
        assert_eq!(
            inserts(shown_neovim(&answer, "", "")),
            [
                "edited", "Path", "PathLike", "_path", "path", "pabc", "print(x)"
            ]
        );
        // Asked with `Pa` typed: a case-sensitive prefix of filterText, else the label;
        // an item with a textEdit and no filterText is kept (the server filtered).
        assert_eq!(
            inserts(shown_neovim(&answer, "Pa", "Pa")),
            ["edited", "Path", "PathLike", "pabc"]
        );
        // Asked with nothing typed, then `pa` typed: the popup narrows on the entries'
        // words, ignoring case.
        assert_eq!(
            inserts(shown_neovim(&answer, "pa", "")),
            ["Path", "PathLike", "path", "pabc"]
        );
        // A snippet's word is its text's leading keyword run when shorter than the label.
        assert_eq!(inserts(shown_neovim(&answer, "pri", "")), ["print(x)"]);
        assert!(is_keyword('é') && is_keyword('µ') && is_keyword('ж'));
        assert!(!is_keyword('…') && !is_keyword('\u{a0}') && !is_keyword('$'));
        let a = ListAnswer::Server(answer);
        let r = a.rank(ListRule::Neovim, "pa", "", "path");
        assert_eq!((r.rank, r.items, r.listed), (Some(3), 4, 7));
        assert_eq!(a.rank(ListRule::Vscode, "pa", "", "path").rank, Some(2));
    }
}
