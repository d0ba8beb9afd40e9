//! Completion-list sessions end to end against clangd on the bundled C/C++ dataset
//! (`fixtures/dataset-c`, with each project's `compile_flags.txt`) and the TypeScript 7
//! native server (issue 11): a hand-written token plan replayed by `typist run`, exact
//! ranks for known cases. scripts/install-servers.sh installs both; a missing one fails
//! its test, naming that step.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::tokens::{
    case, patient_profile, ranks, require_installed, run_plan, run_plan_on,
};
use typist::dataset::token::TokenContext::Prefix;
use typist::dataset::token::TokenKind::{self, Call, Member, Name, Type};

const DATASET_C: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/dataset-c");

fn fixture(rel: &str) -> String {
    std::fs::read_to_string(Path::new(DATASET_C).join(rel)).unwrap()
}

/// Copies the repositories of dataset-c into `to`, each without its
/// `compile_flags.txt`.
fn without_flags(to: &Path) {
    for rel in [
        "mmh3/src/mmh3/murmurhash3.c",
        "mmh3/src/mmh3/murmurhash3.h",
        "bcrypt/src/bcrypt.cc",
        "bcrypt/src/node_blf.h",
    ] {
        let p = to.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, fixture(rel)).unwrap();
    }
}

/// clangd on mmh3 (C, `Python.h` found through its compile_flags.txt) and bcrypt (C++,
/// its own `node_blf.h`): a type from Python's headers, a macro call whose lower-case
/// twin sorts first, a function declared in node_blf.h. Without compile_flags.txt
/// clangd cannot know `Py_ssize_t`: the replay must copy the file into the workspace.
#[test]
fn clangd_ranks_known_tokens_with_the_projects_compile_flags() {
    require_installed("clangd");
    let c = fixture("mmh3/src/mmh3/murmurhash3.c");
    let cc = fixture("bcrypt/src/bcrypt.cc");
    let m = |line, col, kind: TokenKind, p| {
        case(
            "mmh3",
            "src/mmh3/murmurhash3.c",
            &c,
            line,
            col,
            kind,
            p,
            Prefix,
        )
    };
    let b = |line, col, kind: TokenKind, p| {
        case("bcrypt", "src/bcrypt.cc", &cc, line, col, kind, p, Prefix)
    };
    let plan = vec![
        m(27, 36, Type, 0),
        m(27, 36, Type, 2),
        m(115, 13, Call, 1),
        b(230, 1, Call, 3),
        b(244, 2, Call, 1),
        b(244, 11, Name, 1),
    ];
    let tmp = tempfile::tempdir().unwrap();
    let editors = patient_profile(tmp.path(), "clangd");
    let records = run_plan_on(
        tmp.path(),
        Path::new(DATASET_C),
        &plan,
        "clangd",
        Some(&editors),
    );
    let got = ranks(&records);
    eprintln!("{got:?}");
    let want: BTreeMap<&str, Option<u64>> = BTreeMap::from([
        // `Py_ssize_t` from Python.h: second at prefix 0, first after `Py`.
        ("mmh3/src/mmh3/murmurhash3.c:27:37+0", Some(2)),
        ("mmh3/src/mmh3/murmurhash3.c:27:37+2", Some(1)),
        // `R`: the function `rotl32` and the macro `ROTL32` tie on sort text
        // (compared case-insensitively), so the server's order stands.
        ("mmh3/src/mmh3/murmurhash3.c:115:14+1", Some(2)),
        // Declared in node_blf.h.
        ("bcrypt/src/bcrypt.cc:230:2+3", Some(4)),
        ("bcrypt/src/bcrypt.cc:244:3+1", Some(36)),
        ("bcrypt/src/bcrypt.cc:244:12+1", Some(3)),
    ]);
    assert_eq!(got, want, "{records:#?}");
    // The same plan on the same files without compile_flags.txt.
    let bare = tmp.path().join("bare");
    without_flags(&bare);
    let records = run_plan_on(
        &tmp.path().join("b"),
        &bare,
        &plan,
        "clangd",
        Some(&editors),
    );
    let r = &records["mmh3/src/mmh3/murmurhash3.c:27:37+2"];
    assert!(
        r["rank"].is_null(),
        "Py_ssize_t known without Python.h: {r}"
    );
}

const TS: &str = "const greeting: string = \"hello\";
function helperFunction(n: number): number {
  return n + 1;
}
const shout = greeting.toUpperCase();
const value = helperFunction(2);
";

/// The TypeScript 7 server on the snippet typescript-language-server is pinned on
/// (tests/suite/completion.rs).
#[test]
fn typescript_native_ranks_known_tokens() {
    require_installed("typescript-native");
    let f = |line, col, kind: TokenKind, p| case("demo", "app.ts", TS, line, col, kind, p, Prefix);
    let plan = vec![
        f(5, 23, Member, 0),
        f(5, 23, Call, 3),
        f(6, 14, Call, 2),
        f(5, 14, Name, 1),
    ];
    let tmp = tempfile::tempdir().unwrap();
    let records = run_plan(
        tmp.path(),
        "demo",
        &[("app.ts", TS)],
        &plan,
        "typescript-native",
        Some(&patient_profile(tmp.path(), "typescript-native")),
    );
    let got = ranks(&records);
    eprintln!("{got:?}");
    let want: BTreeMap<&str, Option<u64>> = BTreeMap::from([
        // typescript-language-server: 18, 2, 1, 1 (TypeScript 5's tsserver).
        ("demo/app.ts:5:24+0", Some(16)),
        ("demo/app.ts:5:24+3", Some(1)),
        ("demo/app.ts:6:15+2", Some(1)),
        ("demo/app.ts:5:15+1", Some(1)),
    ]);
    assert_eq!(got, want, "{records:#?}");
}
