//! The generator: the same seed gives the same bytes, and the mix is the one the
//! scoring benchmark promises (issue 14), within sampling tolerance.

use std::path::Path;

use super::*;

fn pool() -> Pool {
    Pool::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/dataset")).unwrap()
}

fn shape(records: usize, seed: u64) -> Shape {
    Shape {
        records,
        repos: 50,
        assistants: 4,
        seed,
    }
}

#[test]
fn the_same_seed_gives_the_same_bytes() {
    let (pool, dir) = (pool(), tempfile::tempdir().unwrap());
    let path = |n: &str| dir.path().join(n);
    generate(&pool, &shape(4_000, 7), &path("a.jsonl")).unwrap();
    generate(&pool, &shape(4_000, 7), &path("b.jsonl")).unwrap();
    generate(&pool, &shape(4_000, 8), &path("c.jsonl")).unwrap();
    let read = |n: &str| std::fs::read(path(n)).unwrap();
    assert_eq!(read("a.jsonl"), read("b.jsonl"));
    assert_ne!(read("a.jsonl"), read("c.jsonl"));
}

/// Shares of all records, from the written file itself (not the generator's counts).
#[derive(Default, Debug)]
struct Mix {
    records: f64,
    exact: f64,
    truncated: f64,
    extended: f64,
    other: f64,
    empty: f64,
    error: f64,
    non_ascii: f64,
    over_120: f64,
    max_chars: usize,
    repos: std::collections::BTreeSet<String>,
    assistants: std::collections::BTreeSet<String>,
}

fn mix(path: &Path) -> Mix {
    let mut m = Mix::default();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        let expected = r["expected"].as_str().unwrap();
        let n = expected.chars().count();
        m.records += 1.0;
        m.non_ascii += f64::from(!expected.is_ascii());
        m.over_120 += f64::from(n > 120);
        m.max_chars = m.max_chars.max(n);
        m.repos.insert(r["repo"].as_str().unwrap().into());
        m.assistants.insert(r["assistant"].as_str().unwrap().into());
        match (r["outcome"].as_str().unwrap(), r["predicted"].as_str()) {
            ("error", _) => m.error += 1.0,
            ("empty", _) => m.empty += 1.0,
            ("suggestion", Some(p)) if p == expected => m.exact += 1.0,
            ("suggestion", Some(p)) if expected.starts_with(p) => m.truncated += 1.0,
            ("suggestion", Some(p)) if p.starts_with(expected) => m.extended += 1.0,
            ("suggestion", Some(_)) => m.other += 1.0,
            (o, p) => panic!("unexpected record: {o} {p:?}"),
        }
    }
    m
}

#[test]
fn the_mix_is_the_promised_one() {
    let (pool, dir) = (pool(), tempfile::tempdir().unwrap());
    let path = dir.path().join("r.jsonl");
    let stats = generate(&pool, &shape(40_000, 1), &path).unwrap();
    let m = mix(&path);
    assert_eq!((m.records, stats.records), (40_000.0, 40_000));
    assert_eq!((m.repos.len(), m.assistants.len()), (50, 4));
    let share = |x: f64| x / m.records;
    let near = |what: &str, x: f64, want: f64, tol: f64| {
        assert!(
            (share(x) - want).abs() <= tol,
            "{what}: {} not {want} ± {tol}; {m:?}",
            share(x)
        );
    };
    near("exact", m.exact, 1.0 / 3.0, 0.03);
    near("empty", m.empty, 0.10, 0.01);
    near("error", m.error, 0.01, 0.003);
    near("non-ASCII lines", m.non_ascii, 0.05, 0.01);
    // Truncated ≈ 17.8%; extended (13.3%) also takes substitutions that only append.
    near("truncated", m.truncated, 0.178, 0.02);
    near("extended", m.extended, 0.133, 0.02);
    // Substitutions and random edits: the rest.
    near("substituted or edited", m.other, 0.245, 0.03);
    assert!(share(m.over_120) > 0.02, "{m:?}");
    assert!(m.max_chars <= MAX_CHARS && m.max_chars > 300, "{m:?}");
}
