//! Completion-list sessions end to end (issue 11): a hand-written token plan over a tiny
//! repository replayed by `typist run` against the real pyright and
//! typescript-language-server (scripts/install-servers.sh installs both; a missing one
//! fails its test, naming that step), exact ranks for known cases;
//! and typist's own cheating host, which lists every identifier it can read on disk and
//! in the documents, finding no token that only appears later in the file.

use std::collections::BTreeMap;

use crate::common::tokens::{
    case, patient_profile, ranks, require_installed, run_plan, run_plan_on_with,
};
use crate::common::typist;
use typist::dataset::token::{TokenContext, TokenKind};

const PY: &str = "import os
import collections


def helper_function(value):
    return value + 1


counter = collections.Counter()
result = helper_function(2)
print(os.path.join(\"a\", \"b\"))
";

#[test]
fn pyright_ranks_known_tokens() {
    require_installed("pyright");
    use TokenContext::{Full, Prefix};
    use TokenKind::*;
    let f = |line, col, kind, p, ctx| case("demo", "app.py", PY, line, col, kind, p, ctx);
    let plan = vec![
        f(11, 9, Member, 0, Prefix),
        f(11, 9, Member, 2, Prefix),
        f(11, 14, Call, 1, Prefix),
        f(10, 9, Call, 3, Prefix),
        f(9, 22, Call, 0, Prefix),
        f(9, 22, Call, 2, Full),
    ];
    let tmp = tempfile::tempdir().unwrap();
    let records = run_plan(
        tmp.path(),
        "demo",
        &[("app.py", PY)],
        &plan,
        "pyright",
        Some(&patient_profile(tmp.path(), "pyright")),
    );
    let got = ranks(&records);
    eprintln!("{got:?}");
    let want: BTreeMap<&str, Option<u64>> = BTreeMap::from([
        // `os.` lists every member of os in sort-text order (case-insensitive).
        ("demo/app.py:11:10+0", Some(186)),
        // `os.pa`: `_path`, `O_PATH`, `P_…` match `pa` at a word start and sort first.
        ("demo/app.py:11:10+2", Some(9)),
        ("demo/app.py:11:15+1", Some(1)),
        // `hel`: `help` sorts before `helper_function`.
        ("demo/app.py:10:10+3", Some(2)),
        ("demo/app.py:9:23+0", Some(2)),
        ("demo/app.py:9:23+2", Some(3)),
    ]);
    assert_eq!(got, want, "{records:#?}");
    let r = &records["demo/app.py:11:10+2"];
    assert_eq!(r["token_kind"], "member");
    assert_eq!(r["prefix_len"], 2);
    assert_eq!(r["expected"], "path");
    assert_eq!(r["top"][8], "path");
    // The whole list is kept (it was cut at 20): `os.`'s 186th item is `path`, and the
    // record holds as many texts as the list had items.
    let whole = &records["demo/app.py:11:10+0"];
    let top = whole["top"].as_array().unwrap();
    assert!(top.len() >= 186, "{} texts", top.len());
    assert_eq!(top.len() as u64, whole["items"].as_u64().unwrap());
    assert_eq!(top[185], "path");
    assert_eq!(whole["list_cap"], serde_json::Value::Null);
}

const TS: &str = "const greeting: string = \"hello\";
function helperFunction(n: number): number {
  return n + 1;
}
const shout = greeting.toUpperCase();
const value = helperFunction(2);
";

#[test]
fn typescript_language_server_ranks_known_tokens() {
    require_installed("typescript-language-server");
    use TokenContext::Prefix;
    use TokenKind::*;
    let f = |line, col, kind, p| case("demo", "app.ts", TS, line, col, kind, p, Prefix);
    let plan = vec![
        f(5, 23, Call, 0),
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
        "typescript-language-server",
        Some(&patient_profile(tmp.path(), "typescript-language-server")),
    );
    let got = ranks(&records);
    eprintln!("{got:?}");
    let want: BTreeMap<&str, Option<u64>> = BTreeMap::from([
        ("demo/app.ts:5:24+0", Some(18)),
        // `toU` matches `toLocaleUpperCase` too, which sorts first (same sort text).
        ("demo/app.ts:5:24+3", Some(2)),
        ("demo/app.ts:6:15+2", Some(1)),
        ("demo/app.ts:5:15+1", Some(1)),
    ]);
    assert_eq!(got, want, "{records:#?}");
}

const CHEAT_PY: &str = "alpha = 1
beta = alpha + 1
zebra_total = beta * 2
print(zebra_total)
only_once_here = 3
";

/// The same shape with other names, replayed with context `full` (a case id names no
/// context, so the two contexts are two files).
const CHEAT_FULL: &str = "gamma = 1
delta = gamma + 1
yak_total = delta * 2
print(yak_total)
full_once_here = 3
";

/// The adversary lists every identifier of every version of every file it has read
/// (the workspace on disk at `initialize`, at `didOpen` and at each request, and every
/// document version), the identifier at the cursor in any remembered version first. A
/// token that appears only later in the file must never be found in context `prefix`,
/// and the token itself never in context `full`; tokens that occur earlier are found.
/// The same through Neovim, whose own client asks the cheater and whose popup is read.
#[test]
fn a_cheating_server_finds_no_token_that_only_appears_later() {
    use TokenContext::{Full, Prefix};
    use TokenKind::Name;
    let tmp = tempfile::tempdir().unwrap();
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    std::fs::write(
        editors.join("cheat-lists.toml"),
        "name = \"cheat-lists\"\ncommand = \"@typist\"\nargs = [\"host\", \"--backend\", \"cheat\"]\n\
         dialect = \"completion\"\nlanguages = [\"python\"]\nextensions = [\"py\"]\nrequest_timeout_ms = 10000\n",
    )
    .unwrap();
    let f = |line, col, p| case("demo", "app.py", CHEAT_PY, line, col, Name, p, Prefix);
    let g = |line, col, p| case("demo", "full.py", CHEAT_FULL, line, col, Name, p, Full);
    let mut plan = Vec::new();
    // Whether the token is legitimately in what the server may see.
    let mut legit = BTreeMap::new();
    for p in 0..=3 {
        for (c, ok) in [
            (f(3, 0, p), false), // zebra_total: only later
            (f(4, 6, p), true),  // zebra_total: on line 3
            (f(2, 7, p), true),  // alpha: on line 1
            (f(5, 0, p), false), // only_once_here
            (g(3, 0, p), true),  // yak_total: line 4 is context
            (g(5, 0, p), false), // full_once_here: the token itself
        ] {
            legit.insert(c.case.clone(), ok);
            plan.push(c);
        }
    }
    let ds = tmp.path().join("ds");
    for (name, text) in [
        ("app.py", CHEAT_PY),
        ("full.py", CHEAT_FULL),
        ("other.py", "unrelated_name = 0\n"),
    ] {
        std::fs::create_dir_all(ds.join("demo")).unwrap();
        std::fs::write(ds.join("demo").join(name), text).unwrap();
    }
    let neovim: &[&str] = &["--editor", "neovim", "--key-interval-ms", "10"];
    for extra in [&[][..], neovim] {
        let records =
            run_plan_on_with(tmp.path(), &ds, &plan, "cheat-lists", Some(&editors), extra);
        let mut found = 0;
        for (id, r) in &records {
            if legit[id] {
                assert!(r["rank"].is_u64(), "the cheater should find {id}: {r}");
                found += 1;
            } else {
                assert!(r["rank"].is_null(), "leak: the cheater found {id}: {r}");
            }
            if !extra.is_empty() {
                assert_eq!(r["editor"], "neovim", "{r}");
            }
        }
        assert_eq!(found, 12, "{extra:?}");
    }
}

/// A token plan is refused for an inline assistant, and a plan mixing line and token
/// cases is refused, each with a message saying why, before anything is written.
#[test]
fn token_plans_refuse_inline_assistants_and_mixed_plans() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = tmp.path().join("ds");
    std::fs::create_dir_all(ds.join("demo")).unwrap();
    std::fs::write(ds.join("demo/app.py"), CHEAT_PY).unwrap();
    let token = case(
        "demo",
        "app.py",
        CHEAT_PY,
        2,
        7,
        TokenKind::Name,
        1,
        TokenContext::Prefix,
    );
    let mut line = token.clone();
    line.case = "demo/app.py:2".into();
    line.expected = "beta = alpha + 1".into();
    line.token = None;
    for (plan, assistant, want) in [
        (
            vec![token.clone()],
            "typist-ngram",
            "needs a completion-list server",
        ),
        (
            vec![token, line],
            "pyright",
            "mixes 1 line case(s) and 1 token case(s)",
        ),
    ] {
        let plan_path = tmp.path().join("plan.jsonl");
        typist::dataset::write_plan(&plan_path, &plan, None).unwrap();
        let out = tmp.path().join("out");
        let o = typist()
            .arg("run")
            .arg("--dataset")
            .arg(&ds)
            .arg("--plan")
            .arg(&plan_path)
            .args(["--assistant", assistant, "--quiet"])
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "{assistant}: {err}");
        assert!(!out.join("records.jsonl").exists());
    }
}
