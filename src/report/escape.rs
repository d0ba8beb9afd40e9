//! The report's escaping, for HTML and XML alike (the report is also well-formed XML):
//! `& < > " '` as entities, control characters other than newline and tab replaced by
//! U+FFFD. The templates' escaper (askama.toml), so every value a template writes is
//! escaped unless marked `|safe`.
//!
//! `esc` is the same escaper for Rust code.

use std::fmt::{self, Write};

/// The escaper of the report's templates.
#[derive(Debug, Clone, Copy, Default)]
pub struct Xml;

fn entity(c: char) -> Option<&'static str> {
    Some(match c {
        '&' => "&amp;",
        '<' => "&lt;",
        '>' => "&gt;",
        '"' => "&quot;",
        '\'' => "&#39;",
        c if (c as u32) < 0x20 && c != '\n' && c != '\t' => "\u{fffd}",
        _ => return None,
    })
}

impl askama::filters::Escaper for Xml {
    fn write_escaped_str<W: Write>(&self, mut dest: W, s: &str) -> fmt::Result {
        let mut last = 0;
        for (i, c) in s.char_indices() {
            if let Some(e) = entity(c) {
                dest.write_str(&s[last..i])?;
                dest.write_str(e)?;
                last = i + c.len_utf8();
            }
        }
        dest.write_str(&s[last..])
    }
}

/// Escapes text for HTML and XML, as the templates do.
pub fn esc(s: &str) -> String {
    use askama::filters::Escaper;
    let mut o = String::with_capacity(s.len());
    let _ = Xml.write_escaped_str(&mut o, s);
    o
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn markup_quotes_and_control_characters_are_escaped() {
        assert_eq!(
            esc("a<b>&\"c\"'d'\te\nf\u{1}g\rh"),
            "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;\te\nf\u{fffd}g\u{fffd}h"
        );
        assert_eq!(esc("ℋ = Σ len·c³"), "ℋ = Σ len·c³");
    }
}
