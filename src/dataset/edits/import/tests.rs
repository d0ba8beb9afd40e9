//! Imports from real git repositories, patches and release trees made in temporary
//! folders.

use super::*;
use crate::dataset::Language;
use crate::dataset::edits::EventKind;

/// Runs git in `dir` with no user or system configuration.
fn run_git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn commit(dir: &Path, files: &[(&str, &str)], message: &str) {
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    run_git(dir, &["add", "-A"]);
    run_git(dir, &["commit", "-q", "-m", message]);
}

const SCALE_OLD: &str = "\
import math


def scale(value, factor):
    checked = abs(value)
    logged = str(value)
    return value * factor + checked + len(logged)
";

const SCALE_NEW: &str = "\
import math


def scale(amount, factor):
    checked = abs(amount)
    logged = str(amount)
    return amount * factor + checked + len(logged)
";

const UTIL_NEW: &str = "\
def clamp(x, lo, hi):
    return max(lo, min(x, hi))
";

const APP_NEW: &str = "\
import math


def scale(amount, factor):
    checked = abs(amount)
    logged = str(amount)
    return amount * factor + checked + len(logged)


def bounded(amount):
    return clamp(amount, 0, 10)
";

const GREET: &str = "\
def greet(person):
    return \"hello \" + person
";

/// A repository of five commits: the first (no parent) gives no session, then a
/// renamed parameter, a helper defined in one file and used in another, a new function,
/// a non-ASCII change.
fn repo() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    std::fs::create_dir(&dir).unwrap();
    run_git(&dir, &["init", "-q"]);
    commit(
        &dir,
        &[("app.py", SCALE_OLD), ("README", "demo\n")],
        "start",
    );
    commit(
        &dir,
        &[("app.py", SCALE_NEW), ("README", "demo 2\n")],
        "rename value",
    );
    commit(
        &dir,
        &[("app.py", APP_NEW), ("util.py", UTIL_NEW)],
        "bounded scale",
    );
    commit(
        &dir,
        &[("greet.py", &format!("import os\n\n\n{GREET}"))],
        "prepare greet",
    );
    let g2 = format!(
        "import os\n\n\n{GREET}\n\n{}",
        GREET.replace("greet", "welcome")
    );
    commit(&dir, &[("greet.py", &g2)], "add welcome");
    let names = "GREETING = \"héllo\"  # ü\n";
    commit(&dir, &[("names.py", names)], "names");
    let names2 = "GREETING = \"héllo wörld ✓\"  # ü\nFAREWELL = \"tschüß\"\n";
    commit(&dir, &[("names.py", names2)], "more names");
    tmp
}

fn check_session(s: &Session, new: &BTreeMap<&str, &str>, opts: &ImportOptions) {
    s.validate().unwrap();
    let end = s.buffers_after(s.events.len()).unwrap();
    for (path, text) in new {
        assert_eq!(end.files[*path], *text, "{}: {path}", s.session);
    }
    assert!(
        s.events.windows(2).all(|w| w[0].t < w[1].t),
        "{}: times",
        s.session
    );
    for m in &s.moments {
        let prev = if m.after == 0 {
            0
        } else {
            s.events[m.after - 1].t
        };
        assert_eq!(s.events[m.after].t - prev, m.pause_ms);
        assert!(m.pause_ms >= opts.pause_ms);
        assert_eq!(m.until, s.events.len());
    }
    // Every long gap is a moment.
    let gaps = s
        .events
        .iter()
        .enumerate()
        .filter(|(i, e)| e.t - if *i == 0 { 0 } else { s.events[i - 1].t } >= opts.pause_ms)
        .count();
    assert_eq!(gaps, s.moments.len());
}

#[test]
fn commits_become_sessions_typed_as_a_person_would() {
    let tmp = repo();
    let dir = tmp.path().join("demo");
    let opts = ImportOptions::default();
    let sessions = from_git(&dir, None, &opts).unwrap();
    // The first commit has no parent; the others, one session each.
    let subjects: Vec<&str> = sessions
        .iter()
        .map(|s| match &s.origin {
            Origin::Git {
                subject,
                commit,
                parent,
            } => {
                assert_eq!((commit.len(), parent.len()), (40, 40));
                assert_eq!(s.session, format!("demo@{}", &commit[..12]));
                subject.as_str()
            }
            o => panic!("{o:?}"),
        })
        .collect();
    assert_eq!(
        subjects,
        [
            "rename value",
            "bounded scale",
            "prepare greet",
            "add welcome",
            "names",
            "more names"
        ]
    );
    assert!(sessions.iter().all(|s| s.repo == "demo"));

    // The renamed parameter: one hunk, four words replaced in place, no line retyped.
    let rename = &sessions[0];
    check_session(rename, &BTreeMap::from([("app.py", SCALE_NEW)]), &opts);
    assert_eq!(
        rename.files.keys().collect::<Vec<_>>(),
        ["app.py"],
        "README is not code"
    );
    let deletes: Vec<_> = rename
        .events
        .iter()
        .filter_map(|e| match &e.what {
            EventKind::Delete { from, to, .. } => Some((*from, *to)),
            _ => None,
        })
        .collect();
    assert_eq!(deletes.len(), 4);
    assert!(
        deletes
            .iter()
            .all(|(f, t)| f[0] == t[0] && t[1] - f[1] == 5)
    );
    assert_eq!(deletes[0], ([3, 10], [3, 15]));
    assert!(
        matches!(&rename.events[0].what, EventKind::Open { file, at } if file == "app.py" && *at == [3, 10])
    );
    // The first moment: before the file is opened, the cursor at its start (not where
    // the person goes: that is the answer), the whole hunk ahead (lines 3 to 6), not
    // silence (the hunk changes lines).
    let m = &rename.moments[0];
    assert_eq!((m.after, m.file.as_str(), m.cursor), (0, "app.py", [0, 0]));
    assert_eq!(
        (m.next_file.as_str(), m.next_lines, m.silence),
        ("app.py", [3, 6], false)
    );
    // As written in a plan: the event's kind is its key; `silence` left out when false.
    let e = serde_json::to_value(&rename.events[0]).unwrap();
    assert_eq!(
        e["open"],
        serde_json::json!({"file": "app.py", "at": [3, 10]})
    );
    assert!(e["t"].as_u64().unwrap() >= 1200);
    let m = serde_json::to_value(&rename.moments[0]).unwrap();
    assert!(m.get("silence").is_none() && m["next_lines"] == serde_json::json!([3, 6]));
    let o = serde_json::to_value(&rename.origin).unwrap();
    assert_eq!(o["git"]["subject"], "rename value");

    // Defined in util.py, used in app.py: util.py typed first, though after in order.
    let two = &sessions[1];
    check_session(
        two,
        &BTreeMap::from([("app.py", APP_NEW), ("util.py", UTIL_NEW)]),
        &opts,
    );
    let opened: Vec<&str> = two
        .events
        .iter()
        .filter_map(|e| match &e.what {
            EventKind::Open { file, .. } => Some(file.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(opened, ["util.py", "app.py"]);
    assert!(!two.files.contains_key("util.py"), "util.py is created");
    // The new helper is silence; so is the moment before going to app.py, for util.py
    // (the cursor's file), which is not changed again: an edit proposed there can only be
    // a false alarm.
    let first = &two.moments[0];
    assert_eq!((first.next_file.as_str(), first.silence), ("util.py", true));
    let to_app = two
        .moments
        .iter()
        .find(|m| matches!(&two.events[m.after].what, EventKind::Open { file, .. } if file == "app.py"))
        .unwrap();
    assert_eq!(
        (to_app.file.as_str(), to_app.next_lines, to_app.silence),
        ("util.py", [7, 7], true)
    );

    // A new function whose names nothing typed before mentions: silence.
    let welcome = &sessions[3];
    let g2 = format!(
        "import os\n\n\n{GREET}\n\n{}",
        GREET.replace("greet", "welcome")
    );
    check_session(welcome, &BTreeMap::from([("greet.py", g2.as_str())]), &opts);
    assert!(welcome.moments[0].silence);
    assert_eq!(welcome.moments[0].next_lines[0], 5);
    // Mid-line moments of the same hunk are not silence.
    assert!(welcome.moments[1..].iter().all(|m| !m.silence));

    // Non-ASCII: positions in characters, the replay gives the new text.
    let names2 = "GREETING = \"héllo wörld ✓\"  # ü\nFAREWELL = \"tschüß\"\n";
    check_session(&sessions[5], &BTreeMap::from([("names.py", names2)]), &opts);

    // Deterministic: the same bytes again; another seed, other times, same edits.
    assert_eq!(from_git(&dir, None, &opts).unwrap(), sessions);
    let other = from_git(
        &dir,
        None,
        &ImportOptions {
            seed: 7,
            ..opts.clone()
        },
    )
    .unwrap();
    assert_ne!(other, sessions);
    for (a, b) in other.iter().zip(&sessions) {
        assert_eq!(
            a.buffers_after(a.events.len()).unwrap(),
            b.buffers_after(b.events.len()).unwrap()
        );
    }
}

#[test]
fn ranges_limits_and_errors() {
    let tmp = repo();
    let dir = tmp.path().join("demo");
    let opts = ImportOptions::default();
    let last = from_git(&dir, Some("HEAD~2..HEAD"), &opts).unwrap();
    assert_eq!(last.len(), 2);
    let capped = from_git(
        &dir,
        None,
        &ImportOptions {
            max_sessions: Some(1),
            ..opts.clone()
        },
    )
    .unwrap();
    assert_eq!(capped.len(), 1);
    let one_file = from_git(
        &dir,
        None,
        &ImportOptions {
            max_files: 1,
            ..opts.clone()
        },
    )
    .unwrap();
    assert_eq!(one_file.len(), 5, "the two-file commit is skipped");
    let small = from_git(
        &dir,
        None,
        &ImportOptions {
            max_changed_lines: 3,
            ..opts.clone()
        },
    )
    .unwrap();
    assert!(
        small.iter().all(
            |s| !matches!(&s.origin, Origin::Git { subject, .. } if subject == "bounded scale")
        )
    );
    let rust_only = ImportOptions {
        languages: Some(vec![Language::Rust]),
        ..opts.clone()
    };
    assert!(from_git(&dir, None, &rust_only).unwrap().is_empty());

    let err = from_git(&dir, Some("nosuch..HEAD"), &opts).unwrap_err();
    assert!(
        format!("{err:#}").contains(&dir.display().to_string()),
        "{err:#}"
    );
    let plain = tmp.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let err = from_git(&plain, None, &opts).unwrap_err();
    assert!(err.to_string().contains("not a git repository"), "{err:#}");
    assert!(
        err.to_string().contains(&plain.display().to_string()),
        "{err:#}"
    );
}

const COUNT_OLD: &str = "\
#include <stdio.h>

int count(int n) {
    return n - 1;
}
";

const COUNT_FIXED: &str = "\
#include <stdio.h>

int count(int n) {
    return n;
}
";

const COUNT_TWICE: &str = "\
#include <stdio.h>

int count(int n) {
    return n;
}

int twice(int n) {
    return 2 * count(n);
}
";

const FIX: &str = "\
Description: Fix the off-by-one in count
 count returned one less than it should.
Author: A Person <a@example.org>
Forwarded: no
Last-Update: 2024-01-01
---
Index: pkg-1.0/src/count.c
===================================================================
--- pkg-1.0.orig/src/count.c
+++ pkg-1.0/src/count.c
@@ -2,4 +2,4 @@
 
 int count(int n) {
-    return n - 1;
+    return n;
 }
";

const TWICE: &str = "\
From: B <b@example.org>
Subject: Add twice
---
 src/count.c | 4 ++++
--- a/src/count.c
+++ b/src/count.c
@@ -3,3 +3,7 @@
 int count(int n) {
     return n;
 }
+
+int twice(int n) {
+    return 2 * count(n);
+}
";

const BAD: &str = "\
Description: Does not apply
--- a/src/count.c
+++ b/src/count.c
@@ -1,2 +1,2 @@
-int nothing_like_this(void);
+int something(void);
 
";

fn patched_tree(text: &str) -> (tempfile::TempDir, Vec<PathBuf>) {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    std::fs::create_dir_all(t.join("src")).unwrap();
    std::fs::create_dir_all(t.join("debian/patches")).unwrap();
    std::fs::write(t.join("src/count.c"), text).unwrap();
    let p = t.join("debian/patches");
    std::fs::write(p.join("fix-count.patch"), FIX).unwrap();
    std::fs::write(p.join("add-twice.patch"), TWICE).unwrap();
    std::fs::write(p.join("bad.patch"), BAD).unwrap();
    std::fs::write(
        p.join("series"),
        "# comment\nfix-count.patch\nadd-twice.patch -p1\nbad.patch\n",
    )
    .unwrap();
    // Given out of order: the series decides.
    let given = ["bad.patch", "add-twice.patch", "fix-count.patch"]
        .map(|n| p.join(n))
        .to_vec();
    (tmp, given)
}

#[test]
fn debian_patches_applied_or_not() {
    let opts = ImportOptions::default();
    for applied in [true, false] {
        let (tmp, given) = patched_tree(if applied { COUNT_TWICE } else { COUNT_OLD });
        let sessions = from_patches(tmp.path(), "pkg", &given, applied, &opts).unwrap();
        let ids: Vec<&str> = sessions.iter().map(|s| s.session.as_str()).collect();
        assert_eq!(
            ids,
            ["pkg@fix-count.patch", "pkg@add-twice.patch"],
            "applied: {applied}"
        );
        let (fix, twice) = (&sessions[0], &sessions[1]);
        assert_eq!(
            fix.origin,
            Origin::Patch {
                patch: "fix-count.patch".into(),
                subject: "Fix the off-by-one in count".into()
            }
        );
        assert!(matches!(&twice.origin, Origin::Patch { subject, .. } if subject == "Add twice"));
        assert_eq!(fix.files["src/count.c"], COUNT_OLD);
        check_session(fix, &BTreeMap::from([("src/count.c", COUNT_FIXED)]), &opts);
        assert_eq!(twice.files["src/count.c"], COUNT_FIXED);
        check_session(
            twice,
            &BTreeMap::from([("src/count.c", COUNT_TWICE)]),
            &opts,
        );
        // " - 1" deleted in place.
        let dels: Vec<_> = fix
            .events
            .iter()
            .filter(|e| matches!(e.what, EventKind::Delete { .. }))
            .collect();
        assert_eq!(dels.len(), 1);
        assert!(
            matches!(&dels[0].what, EventKind::Delete { from, to, .. } if *from == [3, 12] && *to == [3, 16])
        );
    }
}

#[test]
fn two_releases_one_session_per_changed_code_file() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("pkg-1.0"), tmp.path().join("pkg-1.1"));
    for (d, m, readme) in [(&a, SCALE_OLD, "one"), (&b, SCALE_NEW, "two")] {
        std::fs::create_dir_all(d.join("src")).unwrap();
        std::fs::write(d.join("src/m.py"), m).unwrap();
        std::fs::write(d.join("src/same.py"), "x = 1\n").unwrap();
        std::fs::write(d.join("README"), readme).unwrap();
    }
    std::fs::write(b.join("src/only_new.py"), "y = 2\n").unwrap();
    let opts = ImportOptions::default();
    let s = from_releases(&a, &b, "pkg", &opts).unwrap();
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].session, "pkg@pkg-1.0..pkg-1.1:src/m.py");
    check_session(&s[0], &BTreeMap::from([("src/m.py", SCALE_NEW)]), &opts);
}
