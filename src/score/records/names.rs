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

    pub(crate) fn id(&mut self, s: &str) -> u32 {
        if let Some(l) = self.last
            && self.get(l) == s
        {
            return l;
        }
        let i = self.id_hashed(s, hash_name(s));
        self.last = Some(i);
        i
    }

    pub(crate) fn id_hashed(&mut self, s: &str, h: u64) -> u32 {
        let (arena, spans) = (&self.arena, &self.spans);
        let get = |i: u32| {
            let (o, n, _) = spans[i as usize];
            &arena[o as usize..(o + n) as usize]
        };
        if let Some(&i) = self.index.find(h, |&i| get(i) == s) {
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
