//! The n-gram backend's index of token sequences: every file's token ids in one array,
//! and the positions of the tokens sorted by the tokens before them read backwards (the
//! nearest first, at most [`ORDER`]), so the tokens that followed a context anywhere in
//! the files are one range of the sorted positions, found by binary search.
//!
//! It answers exactly what [`super::ngram::Counts`] built from the same files answers
//! (the counts of each next token after a context of 1..=ORDER tokens, never across a
//! file's start), without a hash table per context: 8 bytes per token (the id and its
//! position), against about 600 in `Counts`' nested maps. A file can be left out of the
//! answers (`Part::set_excluded`) without rebuilding anything: a file open in the editor
//! (its disk copy is not what the editor shows), or a file whose content on disk is not
//! the content indexed (a cached index from an earlier session, `super::index_cache`).

use std::cmp::Ordering;

use rustc_hash::FxHashMap;

use super::ngram::{Next, ORDER};

/// Stands before every file and after the last one: no context reads across it.
const SEP: u32 = u32::MAX;

/// The most tokens one index holds (positions are `u32`; [`SEP`] is reserved).
pub(super) const MAX_TOKENS: usize = (u32::MAX / 2) as usize;

pub(super) struct Index {
    /// `SEP`, then each file's token ids followed by `SEP`.
    tokens: Vec<u32>,
    /// The positions of every token with a token before it in its file, sorted by those
    /// tokens read backwards (at most ORDER; a file's start ends them, and sorts first),
    /// ties by position.
    order: Vec<u32>,
    /// Each file's tokens: `tokens[start..end]`, in the order given to [`Index::build`].
    spans: Vec<(u32, u32)>,
}

/// Compares the contexts before positions `a` and `b` (the tokens before each, nearest
/// first, at most ORDER; an ended context is smaller than one that goes on).
fn cmp_contexts(tokens: &[u32], a: u32, b: u32) -> Ordering {
    let (a, b) = (a as usize, b as usize);
    for d in 1..=ORDER {
        let (x, y) = (tokens[a - d], tokens[b - d]);
        match (x == SEP, y == SEP) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => match x.cmp(&y) {
                Ordering::Equal => {}
                o => return o,
            },
        }
    }
    Ordering::Equal
}

impl Index {
    /// Indexes `files` (token ids each); their total must stay under [`MAX_TOKENS`].
    pub(super) fn build(files: &[&[u32]]) -> Index {
        let total = files.iter().map(|f| f.len() + 1).sum::<usize>() + 1;
        assert!(
            total <= MAX_TOKENS,
            "{total} tokens: too many for one index"
        );
        let mut tokens = Vec::with_capacity(total);
        let mut spans = Vec::with_capacity(files.len());
        tokens.push(SEP);
        for f in files {
            let start = tokens.len() as u32;
            tokens.extend_from_slice(f);
            spans.push((start, tokens.len() as u32));
            tokens.push(SEP);
        }
        let mut order: Vec<u32> = (1..tokens.len())
            .filter(|&i| tokens[i] != SEP && tokens[i - 1] != SEP)
            .map(|i| i as u32)
            .collect();
        order.sort_unstable_by(|&a, &b| cmp_contexts(&tokens, a, b).then(a.cmp(&b)));
        Index {
            tokens,
            order,
            spans,
        }
    }

    /// An index read back from its parts (`super::index_cache`, which checks the
    /// file's checksum), or `None` when they do not fit together: every position and
    /// span inside the tokens, which start and end with [`SEP`] (so no context read
    /// runs out of them).
    pub(super) fn from_parts(
        tokens: Vec<u32>,
        order: Vec<u32>,
        spans: Vec<(u32, u32)>,
    ) -> Option<Index> {
        let n = tokens.len();
        let fits = n <= MAX_TOKENS
            && tokens.first() == Some(&SEP)
            && tokens.last() == Some(&SEP)
            && order.iter().all(|&p| p > 0 && (p as usize) < n)
            && spans
                .iter()
                .all(|&(s, e)| s <= e && (e as usize) < n && tokens[e as usize] == SEP);
        fits.then_some(Index {
            tokens,
            order,
            spans,
        })
    }

    pub(super) fn tokens(&self) -> &[u32] {
        &self.tokens
    }
    pub(super) fn order(&self) -> &[u32] {
        &self.order
    }
    pub(super) fn spans(&self) -> &[(u32, u32)] {
        &self.spans
    }

    /// Bytes held (for the log): 4 per token and 4 per sorted position.
    pub(super) fn bytes(&self) -> usize {
        4 * (self.tokens.len() + self.order.len() + 2 * self.spans.len())
    }

    /// The range of `order` whose contexts begin with `ctx` read backwards.
    fn range(&self, ctx: &[u32]) -> std::ops::Range<usize> {
        let k = ctx.len().min(ORDER);
        let ctx = &ctx[ctx.len() - k..];
        let cmp = |&p: &u32| -> Ordering {
            let p = p as usize;
            for d in 1..=k {
                let x = self.tokens[p - d];
                if x == SEP {
                    return Ordering::Less;
                }
                match x.cmp(&ctx[k - d]) {
                    Ordering::Equal => {}
                    o => return o,
                }
            }
            Ordering::Equal
        };
        let lo = self.order.partition_point(|p| cmp(p) == Ordering::Less);
        let hi = lo + self.order[lo..].partition_point(|p| cmp(p) == Ordering::Equal);
        lo..hi
    }
}

/// An index and the files left out of its answers.
pub(super) struct Part {
    pub(super) index: Index,
    /// One bit per token position: set for the tokens of the files left out.
    excluded: Vec<u64>,
}

impl Part {
    pub(super) fn new(index: Index) -> Part {
        let words = index.tokens.len().div_ceil(64);
        Part {
            index,
            excluded: vec![0; words],
        }
    }

    /// Leaves file `file` (its number in the index) out of the answers, or takes it back.
    pub(super) fn set_excluded(&mut self, file: usize, out: bool) {
        let Some(&(start, end)) = self.index.spans.get(file) else {
            return;
        };
        for p in start as usize..end as usize {
            let (w, b) = (p / 64, p % 64);
            if out {
                self.excluded[w] |= 1 << b;
            } else {
                self.excluded[w] &= !(1 << b);
            }
        }
    }

    fn is_excluded(&self, p: usize) -> bool {
        self.excluded[p / 64] & (1 << (p % 64)) != 0
    }
}

impl Next for Part {
    fn add_next(&self, ctx: &[u32], w: i64, merged: &mut FxHashMap<u32, i64>) {
        if ctx.is_empty() {
            return;
        }
        for &p in &self.index.order[self.index.range(ctx)] {
            let p = p as usize;
            let tok = self.index.tokens[p];
            // A position on a file's end is never sorted in; a damaged cache file could.
            if tok != SEP && !self.is_excluded(p) {
                *merged.entry(tok).or_insert(0) += w;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::ngram::Counts;
    use super::*;
    use proptest::prelude::*;

    fn next_of(t: &dyn Next, ctx: &[u32]) -> Vec<(u32, i64)> {
        let mut m = FxHashMap::default();
        t.add_next(ctx, 1, &mut m);
        let mut v: Vec<(u32, i64)> = m.into_iter().collect();
        v.sort();
        v
    }

    proptest! {
        /// For any files and any context, the index (some files left out) counts the
        /// same next tokens as `Counts` built from the files kept.
        #[test]
        fn the_index_counts_what_counts_count(
            files in prop::collection::vec(prop::collection::vec(0u32..6, 0..60), 1..5),
            out in prop::collection::vec(any::<bool>(), 5),
            ctxs in prop::collection::vec(prop::collection::vec(0u32..6, 1..20), 1..20),
        ) {
            let refs: Vec<&[u32]> = files.iter().map(|f| f.as_slice()).collect();
            let mut part = Part::new(Index::build(&refs));
            let mut counts = Counts::default();
            for (i, f) in files.iter().enumerate() {
                if out[i] {
                    part.set_excluded(i, true);
                } else {
                    counts.add(f, 1);
                }
            }
            // Leaving out and taking back is a no-op.
            part.set_excluded(0, !out[0]);
            part.set_excluded(0, out[0]);
            for ctx in &ctxs {
                let k = ctx.len().min(ORDER);
                let ctx = &ctx[ctx.len() - k..];
                prop_assert_eq!(next_of(&part, ctx), next_of(&counts, ctx));
            }
            // Every context that occurs, from every position.
            for f in &files {
                for i in 1..f.len() {
                    for k in 1..=ORDER.min(i) {
                        let ctx = &f[i - k..i];
                        prop_assert_eq!(next_of(&part, ctx), next_of(&counts, ctx));
                    }
                }
            }
        }
    }

    #[test]
    fn a_context_never_reads_across_files() {
        // "1 2" occurs only across the boundary of the two files.
        let idx = Index::build(&[&[5, 1], &[2, 3]]);
        let part = Part::new(idx);
        assert!(next_of(&part, &[1, 2]).is_empty());
        assert_eq!(next_of(&part, &[2]), vec![(3, 1)]);
        assert_eq!(next_of(&part, &[5]), vec![(1, 1)]);
        assert!(next_of(&part, &[3]).is_empty());
    }

    #[test]
    fn damaged_parts_are_refused() {
        let idx = Index::build(&[&[1, 2, 3]]);
        let (t, o, s) = (idx.tokens.clone(), idx.order.clone(), idx.spans.clone());
        assert!(Index::from_parts(t.clone(), o.clone(), s.clone()).is_some());
        assert!(Index::from_parts(t[..t.len() - 1].to_vec(), o.clone(), s.clone()).is_none());
        assert!(Index::from_parts(t.clone(), vec![99], s.clone()).is_none());
        assert!(Index::from_parts(t, o, vec![(1, 2)]).is_none());
    }
}
