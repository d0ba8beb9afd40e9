//! The built-in baselines: an n-gram model over code tokens learned from the workspace
//! and the open documents (a real, deterministic floor to compare assistants against),
//! and "previous line" (the floor of floors). No network, no weights.
//!
//! Contexts are hashed backwards from the cursor, up to [`ORDER`] (16) tokens.

use rustc_hash::FxHashMap;

/// Splits code into tokens that concatenate back to the text: identifiers and numbers,
/// runs of spaces or tabs, each newline, and single other characters.
pub fn tokenize(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < text.len() {
        let c = text[i..].chars().next().unwrap_or(' ');
        let start = i;
        if c.is_alphanumeric() || c == '_' {
            while i < text.len() {
                let d = text[i..].chars().next().unwrap_or(' ');
                if d.is_alphanumeric() || d == '_' {
                    i += d.len_utf8();
                } else {
                    break;
                }
            }
        } else if c == ' ' || c == '\t' {
            while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
                i += 1;
            }
        } else {
            i += c.len_utf8();
        }
        out.push(&text[start..i]);
    }
    out
}

/// Longest context used (tokens before the predicted one).
pub const ORDER: usize = 16;
/// Most tokens predicted for one line.
pub const MAX_TOKENS: usize = 48;

/// Counts of next tokens after contexts of 1..=ORDER tokens.
#[derive(Default, Clone)]
pub struct Counts {
    /// context (hash of the last k tokens, with k mixed in) → next token → count
    table: FxHashMap<u64, Followers>,
}

/// The tokens that followed one context, with their counts: most contexts of more than
/// a few tokens were followed by one token only, kept without a map of its own (a map
/// per context was most of the time spent counting a document, in allocation).
#[derive(Clone)]
enum Followers {
    One(u32, i64),
    Many(FxHashMap<u32, i64>),
}

impl Followers {
    fn add(&mut self, tok: u32, n: i64) {
        match self {
            Followers::One(t, c) if *t == tok => *c += n,
            Followers::One(t, c) => {
                let mut m = FxHashMap::default();
                m.insert(*t, *c);
                m.insert(tok, n);
                *self = Followers::Many(m);
            }
            Followers::Many(m) => *m.entry(tok).or_insert(0) += n,
        }
    }

    fn each(&self, mut f: impl FnMut(u32, i64)) {
        match self {
            Followers::One(t, c) => f(*t, *c),
            Followers::Many(m) => m.iter().for_each(|(&t, &c)| f(t, c)),
        }
    }
}

impl Counts {
    fn bump(&mut self, h: u64, tok: u32, n: i64) {
        match self.table.entry(h) {
            std::collections::hash_map::Entry::Occupied(mut e) => e.get_mut().add(tok, n),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(Followers::One(tok, n));
            }
        }
    }
}

/// Token strings ↔ ids, shared by every table of one model.
#[derive(Default)]
pub struct Vocab {
    ids: FxHashMap<String, u32>,
    words: Vec<String>,
}

impl Vocab {
    /// A vocabulary whose ids are the positions of `words` (distinct).
    pub fn from_words(words: Vec<String>) -> Vocab {
        let ids = words
            .iter()
            .enumerate()
            .map(|(i, w)| (w.clone(), i as u32))
            .collect();
        Vocab { ids, words }
    }
    pub fn words(&self) -> &[String] {
        &self.words
    }
    pub fn id(&mut self, t: &str) -> u32 {
        if let Some(&i) = self.ids.get(t) {
            return i;
        }
        let i = self.words.len() as u32;
        self.ids.insert(t.to_string(), i);
        self.words.push(t.to_string());
        i
    }
    pub fn get(&self, t: &str) -> Option<u32> {
        self.ids.get(t).copied()
    }
    pub fn word(&self, i: u32) -> &str {
        &self.words[i as usize]
    }
}

const SEED: u64 = 0x9e37_79b9_7f4a_7c15;

/// One step of the context hash, which runs backwards from the token before the one
/// predicted: the hash of k tokens extends the hash of k − 1, so all contexts of a
/// position cost O(ORDER), not O(ORDER²).
fn step(h: u64, t: u32) -> u64 {
    (h.rotate_left(5) ^ t as u64).wrapping_mul(0x517c_c1b7_2722_0a95)
}

fn ctx_hash(ctx: &[u32]) -> u64 {
    ctx.iter().rev().fold(SEED, |h, &t| step(h, t))
}

impl Counts {
    /// Adds (or with `sign = -1` removes) the n-grams of a token sequence.
    pub fn add(&mut self, ids: &[u32], sign: i64) {
        self.add_ending(ids, 0, sign);
    }

    /// Adds the n-grams that end at positions `from..` of `ids` (their contexts may
    /// reach back before `from`): extends counts made from `ids[..from]`.
    pub fn add_from(&mut self, ids: &[u32], from: usize) {
        self.add_ending(ids, from, 1);
    }

    fn add_ending(&mut self, ids: &[u32], from: usize, sign: i64) {
        for i in from..ids.len() {
            let mut h = SEED;
            for k in 1..=ORDER.min(i) {
                h = step(h, ids[i - k]);
                self.bump(h, ids[i], sign);
            }
        }
    }

    fn next(&self, ctx: &[u32]) -> Option<&Followers> {
        self.table.get(&ctx_hash(ctx))
    }
}

/// A table of next-token counts: what followed a context (1..=ORDER tokens), each next
/// token's count times `w` added to `merged`, counts of 0 or below left out.
pub trait Next {
    fn add_next(&self, ctx: &[u32], w: i64, merged: &mut FxHashMap<u32, i64>);
}

impl Next for Counts {
    fn add_next(&self, ctx: &[u32], w: i64, merged: &mut FxHashMap<u32, i64>) {
        if let Some(next) = self.next(ctx) {
            next.each(|tok, c| {
                if c > 0 {
                    *merged.entry(tok).or_insert(0) += c * w;
                }
            });
        }
    }
}

/// Counts of a text that mostly grows at its end (a document being typed, or pasted
/// case after case down a file): extended with the new lines only, rebuilt otherwise.
#[derive(Default)]
pub struct GrowingCounts {
    text: String,
    ids: Vec<u32>,
    pub counts: Counts,
}

impl GrowingCounts {
    /// Makes the counts those of `text`, which should end at a line boundary (so that
    /// tokens never straddle the old end).
    pub fn update(&mut self, vocab: &mut Vocab, text: &str) {
        if text == self.text {
            return;
        }
        if text.starts_with(&self.text) && (self.text.is_empty() || self.text.ends_with('\n')) {
            let from = self.ids.len();
            self.ids.extend(
                tokenize(&text[self.text.len()..])
                    .iter()
                    .map(|t| vocab.id(t)),
            );
            self.counts.add_from(&self.ids, from);
        } else {
            self.ids = tokenize(text).iter().map(|t| vocab.id(t)).collect();
            self.counts = Counts::default();
            self.counts.add_from(&self.ids, 0);
        }
        self.text = text.to_string();
    }
}

/// Predicts the rest of the line after `prefix` from `tables` (weighted), backing off
/// from the longest context to the shortest. Ties go to the smaller token string, so the
/// answer is deterministic.
pub fn predict_line(vocab: &Vocab, prefix_ids: &[u32], tables: &[(&dyn Next, i64)]) -> String {
    let mut ids: Vec<u32> = prefix_ids.to_vec();
    let mut out = String::new();
    for _ in 0..MAX_TOKENS {
        let mut best: Option<(i64, &str, u32)> = None;
        for k in (1..=ORDER.min(ids.len())).rev() {
            let ctx = &ids[ids.len() - k..];
            let mut merged: FxHashMap<u32, i64> = FxHashMap::default();
            for (t, w) in tables {
                t.add_next(ctx, *w, &mut merged);
            }
            for (tok, c) in merged {
                let word = vocab.word(tok);
                let better = match best {
                    None => true,
                    Some((bc, bw, _)) => c > bc || (c == bc && word < bw),
                };
                if better {
                    best = Some((c, word, tok));
                }
            }
            if best.is_some() {
                break;
            }
        }
        let Some((_, word, tok)) = best else { break };
        if word.contains('\n') {
            break;
        }
        out.push_str(word);
        ids.push(tok);
    }
    out
}

/// The previous-line baseline: the most recent earlier line that starts with what is
/// typed on the current line (ignoring indentation), else the previous non-blank line;
/// returns what it adds after the typed text.
pub fn previous_line(prefix: &str) -> String {
    let (before, current) = match prefix.rfind('\n') {
        Some(i) => (&prefix[..i], &prefix[i + 1..]),
        None => ("", prefix),
    };
    let typed = current.trim_start();
    let indent = &current[..current.len() - typed.len()];
    for line in before.lines().rev() {
        let body = line.trim_start();
        if body.is_empty() {
            continue;
        }
        if typed.is_empty() {
            // Keep the earlier line's indentation when nothing is typed yet.
            return if indent.is_empty() {
                line.to_string()
            } else {
                body.to_string()
            };
        }
        if let Some(rest) = body.strip_prefix(typed)
            && !rest.is_empty()
        {
            return rest.to_string();
        }
    }
    String::new()
}

/// The n-gram baseline from one document alone: counts from the text before and after
/// the cursor, the rest of the line predicted from the prefix. Stateless, so the same
/// (prefix, suffix) always gives the same answer, whoever asks (the host in document
/// mode, or `serve-model` behind an agent).
pub fn predict_document(prefix: &str, suffix: &str) -> String {
    let mut vocab = Vocab::default();
    let prefix_ids: Vec<u32> = tokenize(prefix).iter().map(|t| vocab.id(t)).collect();
    let mut counts = Counts::default();
    counts.add(&prefix_ids, 1);
    // What follows the cursor's line is context; the rest of the line itself is not.
    if let Some(i) = suffix.find('\n') {
        let ids: Vec<u32> = tokenize(&suffix[i..]).iter().map(|t| vocab.id(t)).collect();
        counts.add(&ids, 1);
    }
    predict_line(&vocab, &prefix_ids, &[(&counts as &dyn Next, 1)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_concatenate_back_to_the_text() {
        let t = "def f(x):\n    return x + 1  # é\n";
        let toks = tokenize(t);
        assert_eq!(toks.concat(), t);
        assert_eq!(&toks[..6], &["def", " ", "f", "(", "x", ")"]);
        assert!(toks.contains(&"    "));
    }

    #[test]
    fn the_model_completes_a_line_it_has_seen() {
        let mut vocab = Vocab::default();
        let corpus = "for i in range(10):\n    print(i)\nfor i in range(10):\n    print(i)\n";
        let ids: Vec<u32> = tokenize(corpus).iter().map(|t| vocab.id(t)).collect();
        let mut counts = Counts::default();
        counts.add(&ids, 1);
        let prefix: Vec<u32> = tokenize("x = 1\nfor i in ")
            .iter()
            .map(|t| vocab.id(t))
            .collect();
        assert_eq!(
            predict_line(&vocab, &prefix, &[(&counts as &dyn Next, 1)]),
            "range(10):"
        );
        // Removing what was added leaves nothing to predict from.
        counts.add(&ids, -1);
        assert_eq!(
            predict_line(&vocab, &prefix, &[(&counts as &dyn Next, 1)]),
            ""
        );
    }

    #[test]
    fn growing_counts_equal_counts_built_at_once() {
        let text = "a = 1\nb = a + 1\nc = b * 2\nd = c - a\n";
        let mut vocab = Vocab::default();
        let mut g = GrowingCounts::default();
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            at += line.len();
            g.update(&mut vocab, &text[..at]);
        }
        let ids: Vec<u32> = tokenize(text).iter().map(|t| vocab.id(t)).collect();
        let mut whole = Counts::default();
        whole.add(&ids, 1);
        let prefix: Vec<u32> = tokenize("e = ").iter().map(|t| vocab.id(t)).collect();
        assert_eq!(
            predict_line(&vocab, &prefix, &[(&g.counts as &dyn Next, 1)]),
            predict_line(&vocab, &prefix, &[(&whole as &dyn Next, 1)])
        );
        assert_eq!(g.counts.table.len(), whole.table.len());
        // Text that does not extend the old one rebuilds.
        g.update(&mut vocab, "x = 1\n");
        let mut fresh = Counts::default();
        fresh.add(
            &tokenize("x = 1\n")
                .iter()
                .map(|t| vocab.id(t))
                .collect::<Vec<_>>(),
            1,
        );
        assert_eq!(g.counts.table.len(), fresh.table.len());
    }

    #[test]
    fn previous_line_repeats_the_most_similar_earlier_line() {
        assert_eq!(previous_line("a = 1\n    b = 2\n"), "    b = 2");
        assert_eq!(previous_line("self.x = 1\nprint(x)\n    self."), "x = 1");
        assert_eq!(previous_line(""), "");
    }
}
