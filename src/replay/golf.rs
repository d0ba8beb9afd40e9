//! Keystrokes saved, completion golf (methodology §10): the run's golf settings, the
//! per-line tally a golf record carries, and the user's move after each answer (`step`
//! for an inline suggestion, `pick` for a completion list), pure functions so the rule
//! is checked without a server. The replay loops are `worker/golf.rs` (line cases) and
//! `worker/golf_list.rs` (token cases).

use serde::{Deserialize, Serialize};

/// What the user may accept of a suggestion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum GolfMode {
    /// The whole first line (Tab), only when it is right to its end.
    #[default]
    Full,
    /// The whole first line when right (one key), else its words up to the last one that
    /// matches (one key per word, as Ctrl+→ in VS Code).
    Word,
}

/// `--golf MODE --golf-max-requests N`: the run plays each line case as §10 says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Golf {
    pub mode: GolfMode,
    /// Requests per line at most; past it the user types the rest (one key a character)
    /// and the record says `capped`.
    pub max_requests: u32,
}

/// Requests per line when `--golf-max-requests` is not given.
pub const DEFAULT_MAX_REQUESTS: u32 = 64;

/// A golf record's tally (the `golf` object of a line record).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GolfTally {
    pub mode: GolfMode,
    /// Keys pressed to write the line: typed characters, accepts (and words accepted).
    pub keys: u32,
    /// Characters of the line.
    pub n: u32,
    /// Requests made (failed ones included).
    pub requests: u32,
    /// Accepts (a whole suggestion, or a run of words in word mode).
    pub accepts: u32,
    /// Requests that failed (error, timeout): no suggestion for the user, counted apart.
    #[serde(default)]
    pub failures: u32,
    /// The line reached `max_requests` and the rest was typed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub capped: bool,
    /// Completion lists (token cases) only: characters the user typed, so a token
    /// written by one pick of any rank, nothing typed, counts as one accept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typed: Option<u32>,
}

/// The user's move after one answer: keys pressed and where the cursor goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub keys: u32,
    /// Characters of the line written after the move.
    pub to: usize,
    pub accepted: bool,
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// §10 at `p` characters of `line` typed, given the suggestion as the line would stand
/// after accepting it (its first line, `None` when empty or failed): accept when it
/// continues `line` past `p`, in word mode up to its last matching word, else type one
/// character. At `p = n` nothing is left: no key.
pub fn step(line: &str, p: usize, suggested: Option<&str>, mode: GolfMode) -> Step {
    let n = line.chars().count();
    if p >= n {
        return Step {
            keys: 0,
            to: p,
            accepted: false,
        };
    }
    let typed = Step {
        keys: 1,
        to: p + 1,
        accepted: false,
    };
    let Some(s) = suggested else { return typed };
    let s_chars: Vec<char> = s.chars().collect();
    let l_chars: Vec<char> = line.chars().collect();
    // The suggestion keeps what is typed: it must start with line[..p].
    if s_chars.len() <= p || s_chars[..p] != l_chars[..p] {
        return typed;
    }
    let common = s_chars
        .iter()
        .zip(&l_chars)
        .take_while(|(a, b)| a == b)
        .count();
    if common == s_chars.len() {
        // A prefix of the line longer than p: one key.
        return Step {
            keys: 1,
            to: common,
            accepted: true,
        };
    }
    if mode == GolfMode::Full {
        return typed;
    }
    // Word mode: the suggestion's words after p (a word is a run of non-word characters
    // and the word characters after it); accept those wholly within the matching part.
    let mut words = 0u32;
    let mut end = p;
    let mut i = p;
    while i < s_chars.len() {
        let mut j = i;
        while j < s_chars.len() && !is_word(s_chars[j]) {
            j += 1;
        }
        while j < s_chars.len() && is_word(s_chars[j]) {
            j += 1;
        }
        if j > common {
            break;
        }
        words += 1;
        end = j;
        i = j;
    }
    if words == 0 {
        return typed;
    }
    Step {
        keys: words,
        to: end,
        accepted: true,
    }
}

/// §10 for completion lists, at `p` characters of `token` typed, given the inserted
/// texts of the items as the editor shows them (filtered and sorted, rank 1 first):
/// picking the item at rank `r` costs `r` keys (`r − 1` moves and Enter) and puts the
/// item's identifier (`editor::ranking::leading_identifier`, the ranking's match rule)
/// in place of the typed characters; it fits when that identifier is a prefix of the
/// token longer than `p`, reaching `m` characters. The user picks the fitting item that
/// saves the most keys (`m − p − r`, ties to the lower rank) when it costs no more than
/// typing what it writes (`r ≤ m − p`, as an inline accept of one character costs one
/// key), else types one character. `GolfMode` does not apply: an item is taken whole.
pub fn pick(token: &str, p: usize, shown: &[String]) -> Step {
    let n = token.chars().count();
    if p >= n {
        return Step {
            keys: 0,
            to: p,
            accepted: false,
        };
    }
    let mut best: Option<(usize, usize)> = None;
    for (i, insert) in shown.iter().enumerate().take(n - p) {
        let r = i + 1;
        let ident = crate::editor::ranking::leading_identifier(insert);
        let m = ident.chars().count();
        if m <= p || !token.starts_with(ident) || r > m - p {
            continue;
        }
        if best.is_none_or(|(br, bm)| m - p - r > bm - p - br) {
            best = Some((r, m));
        }
    }
    match best {
        Some((r, m)) => Step {
            keys: r as u32,
            to: m,
            accepted: true,
        },
        None => Step {
            keys: 1,
            to: p + 1,
            accepted: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golf_full_accepts_only_a_right_prefix() {
        let s = "x = foo(1)";
        let full = |p, sug| step(s, p, sug, GolfMode::Full);
        assert_eq!(full(0, Some("x = foo(1)")).to, 10);
        assert_eq!(full(0, Some("x = foo(1)")).keys, 1);
        assert_eq!(full(2, Some("x = f")).to, 5);
        // Wrong later, or not keeping the typed text, or nothing new: type one.
        assert_eq!(full(0, Some("x = foo(2)")).to, 1);
        assert_eq!(full(2, Some("y = foo(1)")).to, 3);
        assert_eq!(
            full(2, Some("x ")),
            Step {
                keys: 1,
                to: 3,
                accepted: false
            }
        );
        assert_eq!(full(2, None).to, 3);
        assert_eq!(full(10, Some("x")).keys, 0);
    }

    #[test]
    fn golf_word_accepts_up_to_the_last_matching_word() {
        let s = "x = foo(1)";
        let word = |p, sug| step(s, p, sug, GolfMode::Word);
        // Words after p (non-word characters, then word characters): "x", " = foo",
        // "(1", ")(": the first three match.
        assert_eq!(
            word(0, Some("x = foo(1)(")),
            Step {
                keys: 3,
                to: 9,
                accepted: true
            }
        );
        // Right to the end: one key, as in full mode.
        assert_eq!(word(0, Some("x = foo(1)")).keys, 1);
        // "fox" goes wrong inside its word: "x" only.
        assert_eq!(
            word(0, Some("x = fox")),
            Step {
                keys: 1,
                to: 1,
                accepted: true
            }
        );
        // No whole word matches: type one.
        assert_eq!(word(4, Some("x = fx")).to, 5);
    }

    #[test]
    fn golf_lists_pick_the_item_that_saves_the_most() {
        let v = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let step = |keys, to, accepted| Step { keys, to, accepted };
        // Rank 2 writes the whole token (saves 9 - 2 = 7 keys), rank 1 only "path" (3).
        assert_eq!(
            pick("path_join", 0, &v(&["path", "path_join(…)", "pathx"])),
            step(2, 9, true)
        );
        // The identifier an item inserts counts: "path_join()" writes "path_join".
        assert_eq!(
            pick("path_join", 4, &v(&["x", "path_join()"])),
            step(2, 9, true)
        );
        // Ties go to the lower rank: "pa" at rank 1 and "pat" at rank 2 both save 1.
        assert_eq!(pick("path_join", 0, &v(&["pa", "pat"])), step(1, 2, true));
        // A rank that costs more than typing what it writes is not taken ("os" at rank
        // 3: 3 keys for 2 characters); at equal cost it is (rank 2 for "os").
        assert_eq!(pick("os", 0, &v(&["a", "b", "os"])), step(1, 1, false));
        assert_eq!(pick("os", 0, &v(&["a", "os"])), step(2, 2, true));
        // Nothing longer than what is typed, nothing fitting, case differs: type one.
        assert_eq!(
            pick("path", 2, &v(&["pa", "Path", "pathx"])),
            step(1, 3, false)
        );
        assert_eq!(pick("path", 0, &v(&[])), step(1, 1, false));
        assert_eq!(pick("path", 4, &v(&["path"])), step(0, 4, false));
    }
}
