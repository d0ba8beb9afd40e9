//! The editor's ranking (`typist::editor::ranking`) on recorded real answers of
//! pyright, basedpyright, jedi-language-server, python-lsp-server,
//! typescript-language-server, the TypeScript 7 server and clangd (C and C++; `fixtures/completion/*.json`, recaptured by
//! `scripts/capture-completions.sh`): the expected token's rank, the filtered list's
//! size and its first items, pinned per fixture.

use std::path::Path;

use serde_json::Value;
use typist::editor::ranking::{Item, Ranked, items_of, leading_identifier, rank, read_item};

fn fixture(name: &str) -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/completion")
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap()
}

fn ranked(name: &str) -> Ranked {
    let f = fixture(name);
    rank(
        &f["answer"],
        f["typed"].as_str().unwrap(),
        f["expected"].as_str().unwrap(),
    )
}

/// (fixture, expected rank, items after filtering, first inserted text)
const PINNED: &[(&str, Option<u32>, usize, &str)] = &[
    ("basedpyright--local-name-p3", Some(2), 11, "help"),
    ("basedpyright--os-member-p0", Some(206), 416, "abort"),
    ("basedpyright--os-member-p2", Some(11), 33, "_path"),
    ("clangd--arrow-member-p0", Some(2), 2, "x"),
    ("clangd--method-p2", Some(1), 1, "width"),
    ("clangd--namespace-member-p0", Some(2), 2, "area"),
    ("clangd--printf-p3", Some(1), 1, "printf"),
    ("jedi-language-server--local-name-p3", Some(2), 2, "help"),
    ("jedi-language-server--os-member-p0", Some(230), 454, "abc"),
    ("jedi-language-server--os-member-p2", Some(2), 6, "pardir"),
    ("pyright--local-name-p3", Some(2), 2, "help"),
    ("pyright--os-member-p0", Some(186), 387, "abort"),
    ("pyright--os-member-p2", Some(9), 32, "_path"),
    ("python-lsp-server--local-name-p3", Some(2), 2, "help"),
    ("python-lsp-server--os-member-p0", Some(230), 454, "abc"),
    ("python-lsp-server--os-member-p2", Some(2), 6, "pardir"),
    (
        "typescript-language-server--local-name-p2",
        Some(1),
        87,
        "helperFunction",
    ),
    (
        "typescript-language-server--string-member-p0",
        Some(18),
        21,
        ".charAt",
    ),
    (
        "typescript-language-server--string-member-p1",
        Some(5),
        6,
        "toLocaleLowerCase",
    ),
    (
        "typescript-native--local-name-p2",
        Some(1),
        87,
        "helperFunction",
    ),
    (
        "typescript-native--string-member-p0",
        Some(16),
        52,
        "toString",
    ),
    (
        "typescript-native--string-member-p1",
        Some(4),
        11,
        "toString",
    ),
];

#[test]
fn ranks_on_recorded_answers_are_pinned() {
    let mut got = Vec::new();
    for (name, want_rank, want_items, want_first) in PINNED {
        let r = ranked(name);
        got.push(format!(
            "(\"{name}\", {:?}, {}, {:?}),",
            r.rank,
            r.items,
            r.top.first().cloned().unwrap_or_default()
        ));
        let _ = (want_rank, want_items, want_first);
    }
    let pinned: Vec<String> = PINNED
        .iter()
        .map(|(n, r, i, f)| format!("(\"{n}\", {r:?}, {i}, {f:?}),"))
        .collect();
    assert_eq!(got, pinned, "got:\n{}", got.join("\n"));
}

/// Every item of every recorded answer yields an inserted text whose leading
/// identifier is what the item's label starts with (clangd's bullets and signatures,
/// pyright's `path=` and snippets aside, the identifier is the label's).
#[test]
fn every_recorded_item_inserts_an_identifier() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/completion");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let f: Value = serde_json::from_str(&std::fs::read_to_string(e.path()).unwrap()).unwrap();
        let r = rank(&f["answer"], "", f["expected"].as_str().unwrap());
        assert_eq!(
            r.items,
            r.listed,
            "{}: an empty prefix keeps every item",
            e.path().display()
        );
        for t in &r.top {
            n += 1;
            assert!(
                !leading_identifier(t).is_empty() || t.starts_with('[') || t.starts_with('"'),
                "{}: {t:?} inserts no identifier",
                e.path().display()
            );
        }
    }
    assert!(n > 0);
}

/// clangd's items as an editor reads them: the label carries the signature (`width()
/// const`, `area(int w, int h)`), the filter and the inserted text are the bare name, and
/// the `textEdit` replaces the typed characters (`wi`, columns 11 to 13).
#[test]
fn clangd_items_insert_their_name_not_their_signature() {
    let f = fixture("clangd--method-p2");
    let items = items_of(&f["answer"]);
    assert_eq!(
        read_item(&items[0]),
        Some(Item {
            label: "width() const".into(),
            filter: "width".into(),
            sort: "40572c2cwidth".into(),
            insert: "width".into(),
        })
    );
    let range = &items[0]["textEdit"]["range"];
    assert_eq!(
        (&range["start"]["character"], &range["end"]["character"]),
        (&11.into(), &13.into())
    );
    let f = fixture("clangd--namespace-member-p0");
    let read: Vec<Item> = items_of(&f["answer"])
        .iter()
        .filter_map(read_item)
        .collect();
    let labels: Vec<(&str, &str)> = read
        .iter()
        .map(|i| (i.label.as_str(), i.insert.as_str()))
        .collect();
    assert_eq!(
        labels,
        [("area(int w, int h)", "area"), ("perimeter", "perimeter")]
    );
}
