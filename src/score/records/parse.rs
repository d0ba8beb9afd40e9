//! Parsing one chunk of a records file: each line into a [`Row`] (with its distances),
//! names interned in the block's own tables, malformed lines kept as problems; and, when
//! asked, each line-level record into a [`Pair`] from the same parse.

use std::borrow::Cow;

use memchr::memchr;
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, Visitor};

use super::names::{CaseTable, NameTable, PlaceTable};
use super::{Outcome, Place, RecordKind, Row, RowParts};
use crate::score::block_terms::{BlockTerms, block_terms};
use crate::score::distance::distances_known;
use crate::score::pairs::{Pair, PairSource};

/// Parses one record line as scoring does (the same borrowed fields, the same parser)
/// and does nothing else: the bytes of its `expected`, or `None` when it is malformed.
/// The scoring benchmark's parse-only limit (`bench::limit`) is measured with it.
pub(crate) fn parse_line_only(line: &str) -> Option<usize> {
    serde_json::from_str::<RawRow>(line)
        .ok()
        .map(|r| r.expected.len())
}

/// The record's fields, declared once for two structs: [`Raw`], which also reads `line`
/// (leniently) for the pairs, and `RawRow`, scoring's own reading without it. `line`
/// comes last: serde reports a missing field in declaration order.
macro_rules! raw_records {
    ($($(#[$m:meta])* $field:ident: $ty:ty,)*) => {
        #[derive(Deserialize)]
        struct Raw<'a> {
            $($(#[$m])* $field: $ty,)*
            /// Scoring ignores it; the pairs need a `u32` when it is there.
            #[serde(default)]
            line: LineNo,
        }

        /// A record as scoring has always read it: `line` is no field, so a line that
        /// [`Raw`] refuses only for its `line` (a repeated key, a number beyond `f64`)
        /// is still a row. Named `Raw` in serde's messages, which reach the problems.
        #[derive(Deserialize)]
        #[serde(rename = "Raw")]
        struct RawRow<'a> {
            $($(#[$m])* $field: $ty,)*
        }

        impl<'a> From<RawRow<'a>> for Raw<'a> {
            fn from(r: RawRow<'a>) -> Raw<'a> {
                Raw {
                    $($field: r.$field,)*
                    line: LineNo::Absent,
                }
            }
        }
    };
}

raw_records! {
    #[serde(borrow)]
    case: Cow<'a, str>,
    #[serde(borrow)]
    repo: Cow<'a, str>,
    /// Outer `None`: absent; `Some(None)`: null (which the pairs refuse).
    #[serde(borrow, default, deserialize_with = "nullable_str")]
    file: Option<Option<Cow<'a, str>>>,
    #[serde(borrow, default)]
    language: Option<Cow<'a, str>>,
    #[serde(borrow)]
    assistant: Cow<'a, str>,
    #[serde(default, deserialize_with = "present")]
    pass: Option<Option<u32>>,
    #[serde(borrow)]
    outcome: Cow<'a, str>,
    #[serde(borrow)]
    expected: Cow<'a, str>,
    #[serde(borrow, default)]
    predicted: Option<Cow<'a, str>>,
    #[serde(default)]
    latency_ms: Option<f64>,
    #[serde(borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(default)]
    prefix_len: Option<u32>,
    #[serde(default)]
    rank: Option<u32>,
    /// Completion records: the list's length; anything but a count read as unknown.
    #[serde(default, deserialize_with = "count_or_none")]
    items: Option<u64>,
    #[serde(borrow, default)]
    token_kind: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "present")]
    typed: Option<Option<u32>>,
    #[serde(borrow, default)]
    error: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    request_hash: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    response_hash: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    expected_block: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    predicted_text: Option<Cow<'a, str>>,
    #[serde(default)]
    golf: Option<super::GolfTerms>,
}

/// A count, or `None` for any other value (skipped without building it).
fn count_or_none<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    struct Count;
    impl<'de> Visitor<'de> for Count {
        type Value = Option<u64>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("any value")
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Ok(Some(v))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Ok(u64::try_from(v).ok())
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
            while a.next_element::<de::IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_map<A: de::MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
            while a.next_entry::<de::IgnoredAny, de::IgnoredAny>()?.is_some() {}
            Ok(None)
        }
    }
    d.deserialize_any(Count)
}

/// A field that is there, null (`Some(None)`) or not; the same errors as `Option<T>`.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// `present` for a string borrowed from the line when it has no escapes.
fn nullable_str<'de: 'a, 'a, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Option<Cow<'a, str>>>, D::Error> {
    struct Str;
    impl<'de> Visitor<'de> for Str {
        type Value = Cow<'de, str>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a string")
        }
        fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
            Ok(Cow::Borrowed(v))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(Cow::Owned(v.to_string()))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
            Ok(Cow::Owned(v))
        }
    }
    struct Nullable;
    impl<'de> Visitor<'de> for Nullable {
        type Value = Option<Cow<'de, str>>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("option")
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_str(Str).map(Some)
        }
    }
    d.deserialize_option(Nullable).map(Some)
}

/// The record's `line` as the pairs read it: absent (0), a `u32`, or anything else
/// (the record is then no pair). Not an error, except where JSON parsing itself refuses
/// the value (a number beyond `f64`): `RawRow` then reads the line for scoring.
#[derive(Default)]
enum LineNo {
    #[default]
    Absent,
    Valid(u32),
    Invalid,
}

impl<'de> Deserialize<'de> for LineNo {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<LineNo, D::Error> {
        struct Any;
        impl<'de> Visitor<'de> for Any {
            type Value = LineNo;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<LineNo, E> {
                Ok(u32::try_from(v).map_or(LineNo::Invalid, LineNo::Valid))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<LineNo, E> {
                Ok(u32::try_from(v).map_or(LineNo::Invalid, LineNo::Valid))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<LineNo, E> {
                Ok(LineNo::Invalid)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<LineNo, E> {
                Ok(LineNo::Invalid)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<LineNo, E> {
                Ok(LineNo::Invalid)
            }
            fn visit_unit<E: de::Error>(self) -> Result<LineNo, E> {
                Ok(LineNo::Invalid)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut a: A) -> Result<LineNo, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(LineNo::Invalid)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut a: A) -> Result<LineNo, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(LineNo::Invalid)
            }
        }
        d.deserialize_any(Any)
    }
}

/// The first 64 bits of a hex digest; 0 when absent or not hex. Reads what
/// `u64::from_str_radix(&h[..16], 16)` reads (a leading `+` and 15 digits too): eight
/// digits at a time in a register, or after a `+` a digit at a time through a table.
fn hash_prefix(h: Option<&str>) -> u64 {
    /// A byte's value as a hex digit, or 0x80 when it is none.
    const HEX: [u8; 256] = {
        let mut t = [0x80u8; 256];
        let mut i = 0;
        while i < 10 {
            t[b'0' as usize + i] = i as u8;
            i += 1;
        }
        let mut i = 0;
        while i < 6 {
            t[b'a' as usize + i] = 10 + i as u8;
            t[b'A' as usize + i] = 10 + i as u8;
            i += 1;
        }
        t
    };
    let Some(p) = h.and_then(|h| h.as_bytes().get(..16)) else {
        return 0;
    };
    if p[0] != b'+' {
        // Sixteen digits (always, for typist's own records): eight at a time.
        let word = |i: usize| u64::from_le_bytes(p[i..i + 8].try_into().unwrap_or([0; 8]));
        return match (hex_word(word(0)), hex_word(word(8))) {
            (Some(hi), Some(lo)) => (u64::from(hi) << 32) | u64::from(lo),
            _ => 0,
        };
    }
    let digits = p.strip_prefix(b"+").unwrap_or(p);
    let (mut v, mut bad) = (0u64, 0u8);
    for &c in digits {
        let d = HEX[usize::from(c)];
        bad |= d;
        v = (v << 4) | u64::from(d & 0x0f);
    }
    if bad & 0x80 == 0 { v } else { 0 }
}

/// The value of eight hex digits read as a little-endian word (the first digit in the
/// lowest byte), or `None` when a byte is not a hex digit: each byte's range checked
/// and converted in parallel, in one register.
fn hex_word(x: u64) -> Option<u32> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    if x & HIGH != 0 {
        return None;
    }
    // Bytes below 0x80: `b + (0x80 − lo)` has its high bit set when b ≥ lo, and
    // `b + (0x7f − hi)` when b > hi, with no carry into the next byte.
    let within = |x: u64, lo: u64, hi: u64| {
        (x.wrapping_add((0x80 - lo) * ONES) & !x.wrapping_add((0x7f - hi) * ONES)) & HIGH
    };
    let digit = within(x, 0x30, 0x39);
    // 'A'–'F' and 'a'–'f' are the bytes whose lowercase is 'a'–'f'.
    let letter = within(x | (0x20 * ONES), 0x61, 0x66);
    if digit | letter != HIGH {
        return None;
    }
    // A digit's low nibble, plus 9 for a letter (bit 6 set).
    let nibbles = (x & (0x0f * ONES)) + ((x >> 6) & ONES) * 9;
    // The first digit most significant: bytes reversed, then pairs, quads, eights.
    let v = nibbles.swap_bytes();
    let v = (v | (v >> 4)) & 0x00ff_00ff_00ff_00ff;
    let v = (v | (v >> 8)) & 0x0000_ffff_0000_ffff;
    Some(((v | (v >> 16)) & 0xffff_ffff) as u32)
}

/// Names interned per block (cases apart): repo, language, assistant, file, error.
pub(super) const NAMES: usize = 5;

pub(super) struct Block {
    pub seq: u64,
    /// Lines in the chunk (problems' line numbers count from the chunk's start).
    pub lines: u64,
    pub cases: CaseTable,
    /// repo, language, assistant, file, error
    pub names: [NameTable; NAMES],
    /// The block's places, in the ids of `names`.
    pub places: PlaceTable,
    pub rows: Vec<Row>,
    pub problems: Vec<(u64, String)>,
    pub file: usize,
    /// The line-level records as pairs, when asked for.
    pub pairs: Vec<Pair>,
    /// The chunk is not all valid UTF-8.
    pub invalid_utf8: bool,
    /// Block records (methodology §9): the index in `rows` and the block's terms.
    pub blocks: Vec<(usize, BlockTerms)>,
    /// Golf records (methodology §10): the index in `rows` and the line's tally.
    pub golf: Vec<(usize, super::GolfTerms)>,
    /// By the block's case id: the record's `line` (`u32::MAX` where none was read).
    pub case_lines: Vec<u32>,
}

pub(super) struct Chunk {
    pub seq: u64,
    pub file: usize,
    pub data: Vec<u8>,
    /// The file's last chunk, which may end without a newline.
    pub last: bool,
}

pub(super) const CHUNK: usize = 4 << 20;

/// The chunk's lines as a block; the caller hands the chunk's buffer back to the reader.
pub(super) fn parse_chunk(c: &Chunk, want_pairs: bool) -> Block {
    let mut cases = CaseTable::default();
    let mut names: [NameTable; NAMES] = Default::default();
    let mut places = PlaceTable::default();
    // Records are ~300 bytes.
    let mut rows = Vec::with_capacity(c.data.len() / 200);
    let mut problems = Vec::new();
    let mut pairs = Vec::new();
    let mut blocks = Vec::new();
    let mut golf = Vec::new();
    let mut case_lines = Vec::new();
    // Line numbers are local to the chunk here; the main thread adds the chunk's start.
    let mut line_no = 0u64;
    let data = &c.data[..];
    // Validate UTF-8 once for the chunk, so the JSON parser need not per string.
    let whole_utf8 = std::str::from_utf8(data).is_ok();
    let mut start = 0;
    while start < data.len() {
        let end = memchr(b'\n', &data[start..]).map_or(data.len(), |i| start + i);
        let line = &data[start..end];
        let truncated = end == data.len() && c.last && !data.ends_with(b"\n");
        start = end + 1;
        let this_line = line_no;
        line_no += 1;
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        let sink = want_pairs.then_some(&mut pairs);
        let parsed = if whole_utf8 {
            // SAFETY: the whole chunk is valid UTF-8 and lines are cut at b'\n', which
            // is never inside a multi-byte sequence.
            parse_line(
                unsafe { std::str::from_utf8_unchecked(line) },
                (&mut cases, &mut names, &mut places),
                sink,
            )
        } else {
            std::str::from_utf8(line)
                .map_err(|e| format!("invalid UTF-8: {e}"))
                .and_then(|l| parse_line(l, (&mut cases, &mut names, &mut places), sink))
        };
        match parsed {
            Ok((r, block, g, line_of)) => {
                if let Some(n) = line_of {
                    let c = r.case as usize;
                    if case_lines.len() <= c {
                        case_lines.resize(c + 1, u32::MAX);
                    }
                    case_lines[c] = n;
                }
                if let Some(b) = block {
                    blocks.push((rows.len(), b));
                }
                if let Some(g) = g {
                    golf.push((rows.len(), g));
                }
                rows.push(r)
            }
            Err(msg) => {
                let msg = if truncated {
                    format!("truncated last line ({msg})")
                } else {
                    msg
                };
                problems.push((this_line, msg));
            }
        }
    }
    Block {
        lines: line_no,
        seq: c.seq,
        cases,
        names,
        places,
        rows,
        problems,
        file: c.file,
        pairs,
        invalid_utf8: !whole_utf8,
        blocks,
        golf,
        case_lines,
    }
}

/// A block's interned names and places.
type Interners<'n> = (
    &'n mut CaseTable,
    &'n mut [NameTable; NAMES],
    &'n mut PlaceTable,
);

/// One line as a row, with its block terms when it is a block record; with `pairs`, its
/// pair (if it is one) is added from the same parse. A line `Raw` refuses (malformed,
/// rare) is read once more.
fn parse_line(
    line: &str,
    names: Interners,
    pairs: Option<&mut Vec<Pair>>,
) -> Result<Parsed, String> {
    // `Raw` is 464 bytes: it is read in place, by reference, not moved (each move
    // is a copy).
    let parsed = serde_json::from_str::<Raw>(line);
    let Ok(raw) = &parsed else {
        // Malformed for `Raw`: read once more the ways scoring and the pairs always
        // read a line, each with its own errors.
        if let Some(pairs) = pairs {
            pairs.extend(Pair::parse(line));
        }
        let raw: RawRow = serde_json::from_str(line).map_err(|e| e.to_string())?;
        let raw: Raw = raw.into();
        return Ok((row(&raw, names, None)?, block(&raw), raw.golf, None));
    };
    let line_of = match raw.line {
        LineNo::Valid(n) => Some(n),
        _ => None,
    };
    Ok((row(raw, names, pairs)?, block(raw), raw.golf, line_of))
}

/// A parsed line: its row, block terms, golf tally and `line` number (when a `u32`).
type Parsed = (
    Row,
    Option<BlockTerms>,
    Option<super::GolfTerms>,
    Option<u32>,
);

/// A line-level record's block terms when it has an expected block: the suggestion's
/// whole text (`predicted_text`, else `predicted`) against it.
fn block(raw: &Raw) -> Option<BlockTerms> {
    let t = raw.expected_block.as_deref()?;
    if RecordKind::is_completion(raw.kind.as_deref()) {
        return None;
    }
    let p = match Outcome::parse(&raw.outcome) {
        Some(Outcome::Suggestion) => raw.predicted_text.as_deref().or(raw.predicted.as_deref()),
        _ => None,
    };
    Some(block_terms(t, p))
}

/// The row of a parsed record; with `pairs`, its pair too (from the same parse).
fn row(
    raw: &Raw,
    (cases, names, places): Interners,
    pairs: Option<&mut Vec<Pair>>,
) -> Result<Row, String> {
    let outcome = Outcome::parse(&raw.outcome);
    let completion = RecordKind::is_completion(raw.kind.as_deref());
    let expected = &*raw.expected;
    let ascii = expected.is_ascii();
    let len = if ascii {
        expected.len()
    } else {
        expected.chars().count()
    };
    let dist = match (outcome, raw.predicted.as_deref()) {
        (Some(Outcome::Suggestion), Some(p)) if !completion => {
            Some(distances_known(expected, ascii, p))
        }
        _ => None,
    };
    if let Some(pairs) = pairs
        && !completion
    {
        pairs.extend(pair_source(raw).map(|src| Pair::new(src, dist)));
    }
    let outcome = outcome.ok_or_else(|| format!("unknown outcome {:?}", raw.outcome))?;
    let (d2, d1) = dist.unwrap_or((len, len));
    let file = match raw.file.as_ref().and_then(|f| f.as_deref()) {
        Some(f) => f,
        None => raw.case.rsplit_once(':').map_or(&*raw.case, |(f, _)| f),
    };
    let place = Place {
        repo: names[0].id(&raw.repo),
        file: names[3].id(file),
        language: names[1].id(raw.language.as_deref().unwrap_or("unknown")),
    };
    let error = match (outcome, raw.error.as_deref()) {
        (Outcome::Error, Some(m)) => names[4].id(m),
        (Outcome::Error, None) => names[4].id("(no message)"),
        _ => u32::MAX,
    };
    let assistant = u16::try_from(names[2].id(&raw.assistant))
        .map_err(|_| "more than 65,535 assistant names in one chunk".to_string())?;
    Ok(Row::from(RowParts {
        case: cases.id(&raw.case),
        place: places.id(place),
        assistant,
        pass: raw.pass.flatten().unwrap_or(1),
        outcome,
        len: len as u32,
        ld2: d2 as u32,
        ld1: d1 as u32,
        latency_ms: raw.latency_ms.unwrap_or(f64::NAN),
        completion,
        prefix_len: raw.prefix_len.unwrap_or(u32::MAX),
        rank: raw.rank.unwrap_or(0),
        token_kind: super::token_kind_code(raw.token_kind.as_deref()),
        list_bin: if completion {
            super::list_bin(raw.items)
        } else {
            0
        },
        typed: raw.typed.flatten().unwrap_or(0),
        error,
        request: hash_prefix(raw.request_hash.as_deref()),
        response: hash_prefix(raw.response_hash.as_deref()),
    }))
}

/// The record as the pairs read it; none where they refuse it (a null `file`, `pass` or
/// `typed`, a `line` that is not a `u32`).
fn pair_source<'r>(raw: &'r Raw) -> Option<PairSource<'r>> {
    let line = match raw.line {
        LineNo::Absent => 0,
        LineNo::Valid(n) => n,
        LineNo::Invalid => return None,
    };
    let or_absent = |v: Option<Option<u32>>, absent: u32| match v {
        None => Some(absent),
        Some(v) => v,
    };
    Some(PairSource {
        case: &raw.case,
        repo: &raw.repo,
        file: match &raw.file {
            None => "",
            Some(f) => f.as_deref()?,
        },
        line,
        language: raw.language.as_deref(),
        assistant: &raw.assistant,
        pass: or_absent(raw.pass, 1)?,
        outcome: &raw.outcome,
        expected: &raw.expected,
        predicted: raw.predicted.as_deref(),
        latency_ms: raw.latency_ms,
        typed: or_absent(raw.typed, 0)?,
    })
}

#[cfg(test)]
mod tests {
    use super::hash_prefix;

    /// The table reads what `from_str_radix` reads, and refuses what it refuses.
    #[test]
    fn hash_prefix_reads_as_from_str_radix() {
        let reference = |h: Option<&str>| {
            h.and_then(|h| h.get(..16))
                .and_then(|p| u64::from_str_radix(p, 16).ok())
                .unwrap_or(0)
        };
        for h in [
            None,
            Some(""),
            Some("abc"),
            Some("b8b6a5433330ad20aa83965f98dae83af989504512a1aea2283b7d24d0031241"),
            Some("B8B6A5433330AD20"),
            Some("ffffffffffffffff"),
            Some("0000000000000000"),
            Some("+8b6a5433330ad20x"),
            Some("-8b6a5433330ad20"),
            Some("8b6a5433330ad2g0"),
            Some("8b6a5433330ad2 0"),
            Some("8b6a5433330ad2\u{e9}0"),
            Some("8b6a5433330ad20\u{e9}"),
            Some("++6a5433330ad200"),
            Some("+"),
            Some("0123456789abcdefABCDEF"),
            Some("FEDCBA9876543210"),
            Some("fedcba987654321g"),
            Some("g123456789abcdef"),
            Some("0123456789abcde@"),
            Some("`123456789abcdef"),
            Some("0123456/89abcdef"),
            Some("0123456789:bcdef"),
            Some("0123456789abcdeG"),
            Some("0123456789abcde\u{7f}"),
        ] {
            assert_eq!(hash_prefix(h), reference(h), "{h:?}");
        }
        assert_eq!(hash_prefix(Some("b8b6a5433330ad20")), 0xb8b6_a543_3330_ad20);
        // Every byte in every place of the fast path: one byte changed in a valid digest.
        let valid = *b"0123456789abcdef";
        for at in 0..16 {
            for b in 0..=255u8 {
                let mut d = valid;
                d[at] = b;
                if let Ok(h) = std::str::from_utf8(&d) {
                    assert_eq!(hash_prefix(Some(h)), reference(Some(h)), "{h:?}");
                }
            }
        }
    }
}
