//! The lines a change touches: one definition for the edit importer's `next_lines`
//! (`dataset::edits::import`) and the scorer's location hit (`score::next_edit`), so
//! the two agree on where an edit is.

/// The lengths of the common prefix and suffix of `a` and `b` (not overlapping).
fn affixes(a: &[u8], b: &[u8]) -> (usize, usize) {
    let p = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let most = (a.len() - p).min(b.len() - p);
    let s = (a.iter().rev().zip(b.iter().rev()))
        .take(most)
        .take_while(|(x, y)| x == y)
        .count();
    (p, s)
}

/// The lines of `before` (0-based, `[first, last]` inclusive) that the change
/// `before → after` touches, from the first to the last changed character once the
/// common prefix and suffix are set aside (the prefix taken as long as it goes); `None`
/// when the texts are equal. A pure insertion touches the line of the position it is
/// inserted at: the line it is inserted before when that is a line start (after a final
/// line break, the empty line there).
pub fn changed_lines(before: &str, after: &str) -> Option<[u32; 2]> {
    if before == after {
        return None;
    }
    let (x, y) = (before.as_bytes(), after.as_bytes());
    let (mut p, mut s) = affixes(x, y);
    // The bytes before p are the same in both texts, so a boundary in one is one in the
    // other; the same for the suffix.
    while !before.is_char_boundary(p) {
        p -= 1;
    }
    while !before.is_char_boundary(x.len() - s) {
        s -= 1;
    }
    let line = |o: usize| memchr::memchr_iter(b'\n', &x[..o]).count() as u32;
    let end = x.len() - s;
    if p == end {
        return Some([line(p); 2]);
    }
    // The last changed character's line (a `\n` belongs to the line it ends).
    let last_char = before[..end].chars().next_back().map_or(0, char::len_utf8);
    Some([line(p), line(end - last_char)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_of_changes() {
        let buf = "a\nb\nc\n";
        assert_eq!(changed_lines(buf, buf), None);
        assert_eq!(changed_lines(buf, "a\nbx\nc\n"), Some([1, 1]));
        assert_eq!(changed_lines(buf, "a\nx\nb\nc\n"), Some([1, 1]));
        assert_eq!(changed_lines(buf, "a\nc\n"), Some([1, 1]));
        assert_eq!(changed_lines(buf, "a\nb\nc\nd\n"), Some([3, 3]));
        assert_eq!(changed_lines("", "x"), Some([0, 0]));
    }
}
