//! A block case's terms (methodology §9), computed once when its record is read: the
//! expected block `T` against the suggestion's whole text `P`, both joined by `\n`.
//! Plain values and one function over [`super::distance`]; knows nothing of tables.

/// What scoring keeps of a block record: enough for `c_help_block`, the exact share and
/// `lines_accepted`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockTerms {
    /// `len(T)` in characters (the `\n` between lines counted).
    pub len: u32,
    /// `ld2(T, P)`; `len` for an empty suggestion or a failure.
    pub ld2: u32,
    /// Lines of `T`.
    pub lines: u32,
    /// Leading lines of `P` equal to `T`'s (trailing whitespace of a line ignored).
    pub lines_ok: u32,
    /// Characters of `T` those lines cover (each with the `\n` after it, at most `len`).
    pub chars_ok: u32,
}

/// The terms of expected block `t` against suggestion `p` (`None`: no suggestion). `p`'s
/// trailing blank lines are dropped, as `T`'s are by definition: a suggestion ending
/// with a newline is not a character worse.
pub fn block_terms(t: &str, p: Option<&str>) -> BlockTerms {
    let len = t.chars().count() as u32;
    let lines = t.split('\n').count() as u32;
    let Some(p) = p else {
        return BlockTerms {
            len,
            ld2: len,
            lines,
            ..Default::default()
        };
    };
    let p = trim_blank_tail(p);
    let lines_ok = t
        .split('\n')
        .zip(p.split('\n'))
        .take_while(|(a, b)| a.trim_end() == b.trim_end())
        .count() as u32;
    let covered: u32 = t
        .split('\n')
        .take(lines_ok as usize)
        .map(|l| l.chars().count() as u32 + 1)
        .sum();
    BlockTerms {
        len,
        ld2: super::distance::ld2(t, p) as u32,
        lines,
        lines_ok,
        chars_ok: covered.min(len),
    }
}

/// `p` without its trailing lines that are blank.
pub fn trim_blank_tail(p: &str) -> &str {
    let mut end = p.len();
    loop {
        let line_start = p[..end].rfind('\n');
        match line_start {
            Some(i) if p[i + 1..end].trim().is_empty() => end = i,
            _ => return &p[..end],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_of_a_block() {
        let t = "if x:\n    y = 1\n    z = 2";
        assert_eq!(
            block_terms(t, Some("if x:\n    y = 1\n    z = 2\n\n")),
            BlockTerms {
                len: 25,
                ld2: 0,
                lines: 3,
                lines_ok: 3,
                chars_ok: 25
            }
        );
        // One line right: 6 characters of 25 accepted line by line; ld2 = 25 + 17 − 2·16
        // (the common subsequence: `if x:`, two spaces, the second `\n`, then
        // `    ` and ` = 2` of `    z = 2`).
        assert_eq!(
            block_terms(t, Some("if x:  \n    y = 2")),
            BlockTerms {
                len: 25,
                ld2: 10,
                lines: 3,
                lines_ok: 1,
                chars_ok: 6
            }
        );
        assert_eq!(block_terms(t, None).ld2, 25);
        assert_eq!(block_terms("a", Some("a\nb")).ld2, 2);
        assert_eq!(trim_blank_tail("a\n  \n\n"), "a");
        assert_eq!(trim_blank_tail("\n"), "");
    }
}
