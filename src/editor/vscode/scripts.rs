//! The JavaScript typist evaluates in a VS Code page, one `.js` file beside this one per
//! script (loaded with `include_str!`). A script that takes arguments is a function
//! expression in its file, called as `(script)(args)` with each argument written by
//! serde_json, so a text reaches the page exactly as given.

use serde_json::{Value, json};

/// What the page shows, read in one script: the focused editor's cursor line (from the
/// status bar's "Ln N, Col M"), the ghost text at it, the fixture's status
/// ([`super::page::Page`]).
pub(super) const READ: &str = include_str!("read.js");
/// The suggest widget as drawn.
pub(super) const WIDGET: &str = include_str!("widget.js");
/// The fixture's status and its last completion list, read together.
pub(super) const LIST: &str = include_str!("list.js");
/// The page's title, address, last startup mark, and whether the workbench's main
/// bundle has run.
pub(super) const PAGE_STATE: &str = include_str!("page_state.js");
/// The workbench's startup marks, in ms from the page's start.
pub(super) const MARKS: &str = include_str!("marks.js");
/// Resolves after two animation frames: what VS Code had to render by then is drawn.
pub(super) const AFTER_RENDER: &str = include_str!("after_render.js");
/// Where the cursor is, for an error.
pub(super) const WHERE: &str = include_str!("where.js");
/// What is over the document ([`super::focus::Focus`]).
pub(super) const FOCUS: &str = include_str!("focus.js");
/// What the page shows that asks the user to sign in.
pub(super) const SIGN_IN: &str = include_str!("sign_in.js");
/// What the page shows during `typist login` (`login.rs`).
pub(super) const LOGIN_PAGE: &str = include_str!("login_page.js");
/// The editor's layout when a line does not show (for the error).
pub(super) const DUMP: &str = include_str!("dump.js");
/// The quick-input box (Quick Open, Go to Line, the command palette) is open and
/// focused.
pub(super) const QUICK_INPUT_FOCUSED: &str = include_str!("quick_input_focused.js");
/// What Quick Open shows, for an error.
pub(super) const QUICK_OPEN_ROWS: &str = include_str!("quick_open_rows.js");
/// The active editor holds its disk copy and has the focus.
pub(super) const REVERTED: &str = include_str!("reverted.js");
/// The quick pick of Indent Using Tabs shows its tab sizes.
pub(super) const TAB_SIZES: &str = include_str!("tab_sizes.js");
/// No modal dialog is shown.
pub(super) const DIALOG_CLOSED: &str = include_str!("dialog_closed.js");
pub(super) const DIALOG_WATCH: &str = include_str!("dialog_watch.js");

/// `script` (a function expression) called with `args`, each written by serde_json.
fn call(script: &str, args: &[Value]) -> String {
    let args: Vec<String> = args.iter().map(Value::to_string).collect();
    call_with(script, &args)
}

/// `script` (a function expression) called with `args`, each a JavaScript expression.
fn call_with(script: &str, args: &[String]) -> String {
    format!("({script})({})", args.join(", "))
}

/// The page shows the cursor on line `row` (0-based), holding `want` (tabs expanded).
pub(super) fn line_is(row: usize, want: &str) -> String {
    // The reading is the first argument: `read.js` evaluated in the call (it starts
    // with comments, so it stands on lines of its own).
    let args = [
        format!("\n{READ}\n"),
        json!(row + 1).to_string(),
        json!(expand_tabs(want)).to_string(),
    ];
    call_with(include_str!("line_is.js"), &args)
}

/// The status bar shows the cursor at `line`, `column` (1-based, a visible column) in a
/// focused editor.
pub(super) fn cursor_at(line: usize, column: usize) -> String {
    call(include_str!("cursor_at.js"), &[json!(line), json!(column)])
}

/// The status bar's cursor position holds `want`.
pub(super) fn indentation_shows(want: &str) -> String {
    call(include_str!("indentation_shows.js"), &[json!(want)])
}

pub(super) fn status_shows(want: &str) -> String {
    call(include_str!("status_shows.js"), &[json!(want)])
}

/// The palette lists a command whose title starts with `title`.
pub(super) fn palette_lists(title: &str) -> String {
    call(include_str!("palette_lists.js"), &[json!(title)])
}

/// Quick Open's first entry (the one Enter opens) names the file `name`.
pub(super) fn quick_open_lists(name: &str) -> String {
    call(include_str!("quick_open_lists.js"), &[json!(name)])
}

/// The active tab names the file `name` and an editor has the focus.
pub(super) fn file_active(name: &str) -> String {
    call(include_str!("file_active.js"), &[json!(name)])
}

/// Clicks the close button of each editor tab labelled one of `labels`.
pub(super) fn close_tabs(labels: &[&String]) -> String {
    call(include_str!("close_tabs.js"), &[json!(labels)])
}

/// A line as VS Code draws it: tabs to the next stop of 4 (`editor.tabSize`).
pub(super) fn expand_tabs(s: &str) -> String {
    let mut out = String::new();
    let mut col = 0;
    for c in s.chars() {
        if c == '\t' {
            let n = TAB_SIZE - col % TAB_SIZE;
            out.extend(std::iter::repeat_n(' ', n));
            col += n;
        } else {
            out.push(c);
            col += 1;
        }
    }
    out
}

/// A line as VS Code draws it: tabs to the next stop of this (`editor.tabSize`).
const TAB_SIZE: usize = 4;
