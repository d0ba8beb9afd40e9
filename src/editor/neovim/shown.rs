//! What Neovim shows at the cursor, as `driver.lua`'s `typist.shown` reports it (the
//! cursor's line, and each extmark of the namespaces read with its virtual text and
//! lines), and the suggestion composed from it: the line as the person sees it, with
//! the ghost text where Neovim draws it, and the lines drawn below. Pure, so every way
//! a plugin draws can be checked without Neovim.
//!
//! Where a mark's text goes: `inline` is inserted at its byte column (the buffer's text
//! after it moves right); `overlay` (and a fixed window column, which the driver turns
//! into a byte column and the blank cells before it) is drawn over the buffer's text
//! from there, hiding the bytes the driver counted in `covers`; `eol` and `right_align`
//! come after the line's end. Virtual lines are the suggestion's further lines, in the
//! order of their marks. Several marks on one row are composed together (llama.vim draws
//! its first line as an overlay at the cursor and its other lines from a second mark at
//! column 0), so what is read is exactly what the plugin drew, and never a character of
//! the buffer in place of a drawn one. Overlays at one place are stacked as Neovim
//! stacks them: the later mark's cells over the earlier's.

use serde::Deserialize;

use crate::editor::suggestions::InlineSuggestion;

/// What the driver reports of the cursor's row.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(super) struct Shown {
    /// The cursor's line in the buffer (absent when the buffer has no window).
    #[serde(default)]
    pub line: Option<String>,
    /// The cursor's 0-based row (absent when the buffer has no window): only marks on
    /// it draw the first line.
    #[serde(default)]
    pub row: Option<i64>,
    /// The marks at the cursor's row (and on the next row, when they draw lines above it).
    #[serde(default)]
    pub marks: Vec<Mark>,
    /// The highlight groups of the chunks read (`""`: a chunk with none).
    #[serde(default)]
    pub groups: Vec<String>,
}

/// One extmark, as the driver reports it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct Mark {
    pub id: i64,
    /// Its 0-based row.
    pub row: i64,
    /// The byte column its text is drawn at.
    pub col: usize,
    /// Blank cells drawn before its text (a window column past the line's end).
    #[serde(default)]
    pub pad: usize,
    /// Its virtual text (the chunks read, joined).
    #[serde(default)]
    pub text: String,
    /// `overlay`: bytes of the buffer its text hides from `col`.
    #[serde(default)]
    pub covers: usize,
    /// Its virtual lines below the cursor's row (the chunks read, joined per line).
    #[serde(default)]
    pub lines: Vec<String>,
    pub pos: Pos,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Pos {
    Inline,
    Overlay,
    Eol,
    RightAlign,
}

impl Shown {
    /// Whether anything is drawn at all (a mark with text or lines).
    pub fn draws(&self) -> bool {
        self.marks
            .iter()
            .any(|m| !m.text.is_empty() || !m.lines.is_empty())
    }

    /// The suggestion drawn: the cursor's line as shown and the lines below it; `None`
    /// when nothing is drawn. With no highlight groups named (`filtered` false), a ghost
    /// text in several groups is an error: a plugin's info beside its suggestion would be
    /// read as part of it.
    pub fn compose(&self, filtered: bool) -> Result<Option<InlineSuggestion>, String> {
        let Some(line) = &self.line else {
            return Ok(None);
        };
        if !self.draws() {
            return Ok(None);
        }
        if !filtered && self.groups.len() > 1 {
            return Err(format!(
                "neovim: the plugin draws at the cursor in several highlight groups ({}); name the suggestion's with --editor-highlight GROUP (or `highlights` in the profile's [neovim]) so that nothing else it draws is read as the suggestion",
                self.groups.join(", ")
            ));
        }
        let row = self
            .row
            .unwrap_or_else(|| self.marks.iter().map(|m| m.row).min().unwrap_or(0));
        let stacked = stack_overlays(&self.marks, row);
        let mut marks: Vec<&Mark> = stacked.iter().collect();
        marks.sort_by_key(|m| (m.row, m.col, m.id));
        let mut first = String::new();
        let mut at = 0;
        for m in marks
            .iter()
            .filter(|m| m.row == row && matches!(m.pos, Pos::Inline | Pos::Overlay))
        {
            let col = floor_char(line, m.col.min(line.len()));
            if col > at {
                first.push_str(&line[at..col]);
                at = col;
            }
            first.extend(std::iter::repeat_n(' ', m.pad));
            first.push_str(&m.text);
            if m.pos == Pos::Overlay {
                at = at.max(floor_char(line, (col + m.covers).min(line.len())));
            }
        }
        first.push_str(&line[at..]);
        // After the line's end: `eol` text, then what is aligned to the right edge.
        for pos in [Pos::Eol, Pos::RightAlign] {
            for m in marks.iter().filter(|m| m.row == row && m.pos == pos) {
                first.push_str(&m.text);
            }
        }
        let mut text = first.clone();
        for l in marks.iter().flat_map(|m| &m.lines) {
            text.push('\n');
            text.push_str(l);
        }
        if text == *line {
            return Ok(None);
        }
        Ok(Some(InlineSuggestion { line: first, text }))
    }
}

/// The marks with the overlays drawn at one place of `row` (same column and blank cells
/// before) made one: Neovim draws the later mark over the earlier, so the cells show the
/// later's text and, past its end, the earlier's. A plugin whose hide came between two
/// draws of one suggestion (a debounce timer's callback already queued) leaves two such
/// marks; the screen shows the text once, and so is it read. By characters, not
/// display cells: a wide character in both texts would be placed as one cell (not met).
fn stack_overlays(marks: &[Mark], row: i64) -> Vec<Mark> {
    let mut out: Vec<Mark> = Vec::with_capacity(marks.len());
    let mut sorted: Vec<&Mark> = marks.iter().collect();
    sorted.sort_by_key(|m| m.id);
    for m in sorted {
        let under = out.iter_mut().find(|o| {
            m.row == row
                && o.row == row
                && o.pos == Pos::Overlay
                && m.pos == Pos::Overlay
                && (o.col, o.pad) == (m.col, m.pad)
        });
        match under {
            Some(o) => {
                let rest: String = o.text.chars().skip(m.text.chars().count()).collect();
                o.text = m.text.clone() + &rest;
                o.covers = o.covers.max(m.covers);
                // Its lines stay where its id puts them among the other marks' lines.
                if !m.lines.is_empty() {
                    out.push(Mark {
                        text: String::new(),
                        covers: 0,
                        pos: Pos::Eol,
                        ..m.clone()
                    });
                }
            }
            None => out.push(m.clone()),
        }
    }
    out
}

/// The largest char boundary of `s` at or before `i`.
fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shown(v: serde_json::Value) -> Shown {
        serde_json::from_value(v).unwrap()
    }

    fn read(v: serde_json::Value) -> Option<(String, String)> {
        shown(v).compose(true).unwrap().map(|s| (s.line, s.text))
    }

    /// A plugin that drew its suggestion twice at one window column (its hide came
    /// between the two draws): the screen shows the first line once, the later mark
    /// over the earlier, and both marks' lines.
    #[test]
    fn overlays_at_one_place_show_the_later_over_the_earlier() {
        let r = read(json!({"line": "  ", "row": 4, "marks": [
            {"id": 7, "row": 4, "col": 2, "text": "    return cached", "pos": "overlay"},
            {"id": 8, "row": 4, "col": 0, "lines": ["      return cached"], "pos": "eol"},
            {"id": 9, "row": 4, "col": 2, "text": "    return cached", "pos": "overlay"},
            {"id": 10, "row": 4, "col": 0, "lines": ["      return cached"], "pos": "eol"}]}));
        assert_eq!(
            r,
            Some((
                "      return cached".into(),
                "      return cached\n      return cached\n      return cached".into()
            ))
        );
        // A shorter later text: its cells, then the earlier's past its end.
        let r = read(json!({"line": "ab", "row": 0, "marks": [
            {"id": 1, "row": 0, "col": 2, "pad": 1, "text": "xyz", "pos": "overlay"},
            {"id": 2, "row": 0, "col": 2, "pad": 1, "text": "Q", "pos": "overlay"}]}));
        assert_eq!(r, Some(("ab Qyz".into(), "ab Qyz".into())));
        // The later overlay's own lines keep their place by its id.
        let r = read(json!({"line": "", "row": 0, "marks": [
            {"id": 1, "row": 0, "col": 0, "text": "a", "lines": ["one"], "pos": "overlay"},
            {"id": 2, "row": 0, "col": 0, "lines": ["two"], "pos": "eol"},
            {"id": 3, "row": 0, "col": 0, "text": "b", "lines": ["three"], "pos": "overlay"}]}));
        assert_eq!(r, Some(("b".into(), "b\none\ntwo\nthree".into())));
        // Overlays at two places are both drawn, as before.
        let r = read(json!({"line": "abcd", "row": 0, "marks": [
            {"id": 1, "row": 0, "col": 0, "text": "X", "covers": 1, "pos": "overlay"},
            {"id": 2, "row": 0, "col": 2, "text": "Y", "covers": 1, "pos": "overlay"}]}));
        assert_eq!(r, Some(("XbYd".into(), "XbYd".into())));
    }

    #[test]
    fn inline_text_is_inserted_at_its_column() {
        let r = read(json!({"line": "    x = ", "marks": [
            {"id": 1, "row": 3, "col": 8, "text": "f(1)", "lines": ["    return x"], "pos": "inline"}]}));
        assert_eq!(
            r,
            Some(("    x = f(1)".into(), "    x = f(1)\n    return x".into()))
        );
        let r = read(json!({"line": "ab)", "marks": [
            {"id": 1, "row": 0, "col": 2, "text": "c", "pos": "inline"}]}));
        assert_eq!(r.unwrap().0, "abc)");
    }

    #[test]
    fn an_overlay_hides_the_bytes_it_covers() {
        let r = read(json!({"line": "ab)", "marks": [
            {"id": 1, "row": 0, "col": 2, "text": "c)", "covers": 1, "pos": "overlay"}]}));
        assert_eq!(r.unwrap().0, "abc)");
    }

    /// llama.vim: the first line as an overlay at the cursor (its info in another
    /// highlight, left out by the driver), the other lines from a second mark at column 0,
    /// which comes first in the buffer's order. The typed prefix stays, the drawn first
    /// line follows it.
    #[test]
    fn llama_vims_two_marks_compose_into_one_suggestion() {
        let r = read(json!({"line": "PR", "marks": [
            {"id": 2, "row": 5, "col": 0, "text": "", "lines": ["# This is a"], "pos": "eol"},
            {"id": 1, "row": 5, "col": 2, "text": "#", "pos": "overlay"}]}));
        assert_eq!(r, Some(("PR#".into(), "PR#\n# This is a".into())));
    }

    #[test]
    fn a_window_column_past_the_end_draws_blank_cells_before_the_text() {
        let r = read(json!({"line": "ab", "marks": [
            {"id": 1, "row": 0, "col": 2, "pad": 2, "text": "cd", "pos": "overlay"}]}));
        assert_eq!(r.unwrap().0, "ab  cd");
    }

    #[test]
    fn eol_and_right_aligned_text_follow_the_line() {
        let r = read(json!({"line": "x = ", "marks": [
            {"id": 1, "row": 0, "col": 4, "text": "1", "pos": "eol"},
            {"id": 2, "row": 0, "col": 0, "text": "# r", "pos": "right_align"}]}));
        assert_eq!(r.unwrap().0, "x = 1# r");
    }

    #[test]
    fn lines_drawn_above_the_next_row_are_further_lines() {
        let r = read(json!({"line": "def f():", "marks": [
            {"id": 1, "row": 0, "col": 8, "text": "", "pos": "eol"},
            {"id": 3, "row": 1, "col": 0, "text": "", "lines": ["    pass"], "pos": "eol"}]}));
        assert_eq!(r.unwrap().1, "def f():\n    pass");
    }

    #[test]
    fn nothing_drawn_is_none() {
        assert_eq!(read(json!({"line": "ab", "marks": []})), None);
        assert_eq!(
            read(json!({"line": "ab", "marks": [
                {"id": 1, "row": 0, "col": 2, "text": "", "pos": "eol"}]})),
            None
        );
        assert_eq!(read(json!({"marks": []})), None);
    }

    #[test]
    fn several_highlights_unnamed_are_an_error_naming_them() {
        let s = shown(
            json!({"line": "ab", "groups": ["llama_hl_fim_hint", "llama_hl_fim_info"],
            "marks": [{"id": 1, "row": 0, "col": 2, "text": "c | info", "pos": "overlay"}]}),
        );
        let e = s.compose(false).unwrap_err();
        assert!(
            e.contains("llama_hl_fim_hint, llama_hl_fim_info") && e.contains("--editor-highlight"),
            "{e}"
        );
        assert!(s.compose(true).is_ok());
    }
}
