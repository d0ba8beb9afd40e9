//! Interned names in one string arena per table, and interned places.

use rustc_hash::FxHashMap;

use super::Place;

/// Interned names in one string arena: no allocation per name, each hash computed
/// once (and handed from a block's table to the global one).
#[derive(Default)]
pub(crate) struct NameTable {
    arena: String,
    /// (offset, length, hash) of each name, by id.
    spans: Vec<(u32, u32, u64)>,
    index: hashbrown::HashTable<u32>,
    /// The previous lookup's id: consecutive records mostly share a repository, a
    /// language and (one per assistant) a case.
    last: Option<u32>,
}

/// `a == b`, compared in registers up to 16 bytes (most repository, language and
/// assistant names), where `==` would call `memcmp` for a few bytes: two words (or
/// half-words) that overlap when the length is not a multiple of theirs.
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let w8 = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().unwrap_or([0; 8]));
    let w4 = |s: &[u8], i: usize| u32::from_le_bytes(s[i..i + 4].try_into().unwrap_or([0; 4]));
    match n {
        8..=16 => w8(a, 0) == w8(b, 0) && w8(a, n - 8) == w8(b, n - 8),
        4..=7 => w4(a, 0) == w4(b, 0) && w4(a, n - 4) == w4(b, n - 4),
        _ => a == b,
    }
}

fn hash_name(s: &str) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault};
    BuildHasherDefault::<rustc_hash::FxHasher>::default().hash_one(s)
}

impl NameTable {
    pub(crate) fn get(&self, i: u32) -> &str {
        let (o, n, _) = self.spans[i as usize];
        &self.arena[o as usize..(o + n) as usize]
    }

    /// The hash of name `i`, computed when it was interned.
    pub(crate) fn hash(&self, i: u32) -> u64 {
        self.spans[i as usize].2
    }

    /// Name `i`'s bytes: no check that the slice falls between characters, which
    /// slicing the arena as a `str` makes at both ends.
    fn bytes(&self, i: u32) -> &[u8] {
        let (o, n, _) = self.spans[i as usize];
        &self.arena.as_bytes()[o as usize..(o + n) as usize]
    }

    pub(crate) fn id(&mut self, s: &str) -> u32 {
        if let Some(l) = self.last
            && same(self.bytes(l), s.as_bytes())
        {
            return l;
        }
        let i = self.id_hashed(s, hash_name(s));
        self.last = Some(i);
        i
    }

    pub(crate) fn id_hashed(&mut self, s: &str, h: u64) -> u32 {
        if let Some(&i) = self.index.find(h, |&i| self.bytes(i) == s.as_bytes()) {
            return i;
        }
        let i = self.spans.len() as u32;
        self.spans
            .push((self.arena.len() as u32, s.len() as u32, h));
        self.arena.push_str(s);
        let spans = &self.spans;
        self.index.insert_unique(h, i, |&j| spans[j as usize].2);
        i
    }

    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    pub(crate) fn into_strings(self) -> Vec<String> {
        (0..self.spans.len() as u32)
            .map(|i| self.get(i).to_string())
            .collect()
    }
}

/// Interned places (repository, file, language): few per block, so a hash map with a
/// one-entry cache in front (consecutive records mostly share a file).
#[derive(Default)]
pub(crate) struct PlaceTable {
    places: Vec<Place>,
    index: FxHashMap<Place, u32>,
    last: Option<(Place, u32)>,
}

impl PlaceTable {
    pub(crate) fn id(&mut self, p: Place) -> u32 {
        if let Some((q, i)) = self.last
            && q == p
        {
            return i;
        }
        let next = self.places.len() as u32;
        let i = *self.index.entry(p).or_insert(next);
        if i == next {
            self.places.push(p);
        }
        self.last = Some((p, i));
        i
    }

    pub(crate) fn places(&self) -> &[Place] {
        &self.places
    }

    pub(crate) fn into_places(self) -> Vec<Place> {
        self.places
    }
}

/// Set in a case key whose name is interned whole; clear in `(stem << 32) | number`.
const WHOLE: u64 = 1 << 63;

/// A dense slot no case has taken.
const NONE: u32 = u32::MAX;

/// Dense slots allowed per case (numbers sampled one line in 20 still fit).
const DENSE_PER_CASE: usize = 16;

/// A case name split at its trailing number: `("repo/file.py:", 12)` of
/// `repo/file.py:12` (typist's own line cases), `("repo/f.py:3:5+", 2)` of a token case.
/// `None` when the name does not end in a number written the one way a `u32` is (no
/// leading zero): so a name has at most one split and a split is one name.
fn split_case(s: &str) -> Option<(&str, u32)> {
    let digits = s.bytes().rev().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 10 {
        return None;
    }
    let (stem, number) = s.split_at(s.len() - digits);
    if number.len() > 1 && number.starts_with('0') {
        return None;
    }
    number.parse::<u32>().ok().map(|n| (stem, n))
}

/// Case names interned as keys: the stem before a trailing number (one per file for
/// line cases, so consecutive records mostly hit the stem table's one-entry cache) and
/// the number, or the whole name when it has no trailing number. Keys are integers: a
/// case is found without hashing or comparing its whole name, and the main thread
/// merges a block's cases with integer lookups. Ids are dense, in order of first sight.
#[derive(Default)]
pub(crate) struct CaseTable {
    stems: NameTable,
    whole: NameTable,
    /// Each case's key, by id.
    keys: Vec<u64>,
    /// By stem id: the ids of its numbers below the vector's length (`NONE` where not
    /// seen yet), so most cases are found by two indexings; the rest are in `index`.
    dense: Vec<Vec<u32>>,
    /// Slots in `dense`, bounded by `DENSE_PER_CASE` per case.
    dense_slots: usize,
    index: FxHashMap<u64, u32>,
    /// A stem id that does not fit the key (more than 2^31 stems): refused.
    overflow: bool,
}

impl CaseTable {
    /// The id of case name `s`.
    pub(crate) fn id(&mut self, s: &str) -> u32 {
        let key = match split_case(s) {
            Some((stem, n)) => {
                let stem = self.stems.id(stem);
                self.stem_key(stem, n)
            }
            None => WHOLE | u64::from(self.whole.id(s)),
        };
        self.key_id(key)
    }

    fn stem_key(&mut self, stem: u32, n: u32) -> u64 {
        let key = (u64::from(stem) << 32) | u64::from(n);
        self.overflow |= key & WHOLE != 0;
        key
    }

    fn key_id(&mut self, key: u64) -> u32 {
        if key & WHOLE != 0 {
            let next = self.keys.len() as u32;
            let id = *self.index.entry(key).or_insert(next);
            if id == next {
                self.keys.push(key);
            }
            return id;
        }
        let (stem, n) = ((key >> 32) as usize, key as u32 as usize);
        if let Some(&id) = self.dense.get(stem).and_then(|v| v.get(n))
            && id != NONE
        {
            return id;
        }
        // A number once refused a dense slot stays in the map, even if the stem's slots
        // grow past it later: look there before calling the case new.
        if !self.index.is_empty()
            && let Some(&id) = self.index.get(&key)
        {
            return id;
        }
        let id = self.keys.len() as u32;
        self.keys.push(key);
        match self.dense_slot(stem, n) {
            Some(slot) => *slot = id,
            None => {
                self.index.insert(key, id);
            }
        }
        id
    }

    /// The dense slot of `n` under `stem`, growing the stem's slots when the bound
    /// allows (numbers below 65,536, at most `DENSE_PER_CASE` slots per case in all, so
    /// sparse or huge numbers cannot make the table large).
    fn dense_slot(&mut self, stem: usize, n: usize) -> Option<&mut u32> {
        if self.dense.len() <= stem {
            self.dense.resize_with(stem + 1, Vec::new);
        }
        let v = &mut self.dense[stem];
        if n >= v.len() {
            let grow = n + 1 - v.len();
            if n >= 1 << 16 || self.dense_slots + grow > DENSE_PER_CASE * (self.keys.len() + 4096) {
                return None;
            }
            v.resize(n + 1, NONE);
            self.dense_slots += grow;
        }
        Some(&mut v[n])
    }

    /// Cases so far.
    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// More stems than a key can hold were seen.
    pub(crate) fn overflowed(&self) -> bool {
        self.overflow
    }

    /// Interns `block`'s cases in this table: the ids of its cases here, by its ids.
    pub(crate) fn merge(&mut self, block: &CaseTable) -> Vec<u32> {
        let global = |local: &NameTable, into: &mut NameTable| -> Vec<u32> {
            (0..local.len() as u32)
                .map(|i| into.id_hashed(local.get(i), local.hash(i)))
                .collect()
        };
        let stems = global(&block.stems, &mut self.stems);
        let whole = global(&block.whole, &mut self.whole);
        self.overflow |= block.overflow;
        block
            .keys
            .iter()
            .map(|&k| {
                let key = if k & WHOLE != 0 {
                    WHOLE | u64::from(whole[(k & 0xffff_ffff) as usize])
                } else {
                    self.stem_key(stems[(k >> 32) as usize], k as u32)
                };
                self.key_id(key)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    /// Every length up to 20, each byte changed in turn (and the lengths apart): as `==`.
    #[test]
    fn same_is_equality() {
        for n in 0..=20usize {
            let a: Vec<u8> = (0..n as u8).map(|i| b'a' + i).collect();
            assert!(super::same(&a, &a.clone()), "{n}");
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!super::same(&a, &b), "{n} {at}");
            }
            let mut longer = a.clone();
            longer.push(b'z');
            assert!(!super::same(&a, &longer), "{n}");
        }
    }

    use super::*;

    #[test]
    fn a_case_name_has_one_split_and_a_split_one_name() {
        assert_eq!(split_case("r/a.py:12"), Some(("r/a.py:", 12)));
        assert_eq!(split_case("r/a.py:3:5+0"), Some(("r/a.py:3:5+", 0)));
        assert_eq!(split_case("123"), Some(("", 123)));
        assert_eq!(
            split_case("r/a.py:012"),
            None,
            "a leading zero is another name"
        );
        assert_eq!(split_case("r/a.py:4294967296"), None, "beyond u32");
        assert_eq!(split_case("r0-c"), None);
        let mut t = CaseTable::default();
        let names = [
            "r/a.py:12",
            "r/a.py:012",
            "r/a.py:1",
            "r/a.py:12",
            "r/a.py:",
            "x",
            "x1",
        ];
        let ids: Vec<u32> = names.iter().map(|n| t.id(n)).collect();
        assert_eq!(ids, [0, 1, 2, 0, 3, 4, 5]);
        assert_eq!(t.len(), 6);
    }

    #[test]
    fn numbers_refused_a_dense_slot_keep_their_id() {
        let mut t = CaseTable::default();
        // 70000 is beyond the dense bound, 60000 beyond the slots allowed so far; then
        // the stem's slots grow past numbers already in the map.
        let names: Vec<String> = [70000u32, 60000, 5, 60000, 70000, 0, 1, 2]
            .iter()
            .chain(&(0..4000).collect::<Vec<u32>>())
            .map(|n| format!("r/a.py:{n}"))
            .collect();
        let ids: Vec<u32> = names.iter().map(|n| t.id(n)).collect();
        let mut first: std::collections::HashMap<&str, u32> = Default::default();
        for (n, &i) in names.iter().zip(&ids) {
            assert_eq!(*first.entry(n).or_insert(i), i, "{n}");
        }
        assert_eq!(t.len(), first.len());
        let mut distinct: Vec<u32> = first.values().copied().collect();
        distinct.sort_unstable();
        assert_eq!(
            distinct,
            (0..first.len() as u32).collect::<Vec<_>>(),
            "dense ids"
        );
    }

    #[test]
    fn merged_blocks_give_one_id_per_name_whichever_block_saw_it() {
        let names = ["r/a.py:1", "r/b.py:1", "q", "r/a.py:2", "r/a.py:01"];
        let (mut b1, mut b2, mut global) = Default::default();
        let l1: Vec<u32> = names.iter().map(|n| CaseTable::id(&mut b1, n)).collect();
        let l2: Vec<u32> = names
            .iter()
            .rev()
            .map(|n| CaseTable::id(&mut b2, n))
            .collect();
        let g1 = CaseTable::merge(&mut global, &b1);
        let g2 = CaseTable::merge(&mut global, &b2);
        let mut by_name: Vec<(u32, u32)> = l1.iter().map(|&i| (g1[i as usize], 0)).collect();
        for (k, &i) in l2.iter().rev().enumerate() {
            by_name[k].1 = g2[i as usize];
        }
        assert!(by_name.iter().all(|(a, b)| a == b), "{by_name:?}");
        assert_eq!(global.len(), names.len());
    }
}
