//! Recaptures `fixtures/completion/*.json`: real `textDocument/completion` answers of the
//! installed language servers on small snippets, with the request's context, for the
//! ranking tests (`editor::ranking`). Run through `scripts/capture-completions.sh`.
//!
//! Each snippet's cursor is at the end of its text; `typed` is the token's prefix
//! already in the text. A prefix of 0 after a trigger character is asked with
//! `TriggerCharacter` when the server declares it, everything else `Invoked`; the
//! profile's readiness rule applies (asked until two answers agree).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;
use typist::editor::conditions::Trigger;
use typist::editor::typist::TypistSession;
use typist::editor::{Conditions, SessionOptions, profile};

struct Snippet {
    name: &'static str,
    file: &'static str,
    text: &'static str,
    typed: &'static str,
    expected: &'static str,
}

const PY: &[Snippet] = &[
    Snippet {
        name: "os-member-p0",
        file: "snippet.py",
        text: "import os\nos.",
        typed: "",
        expected: "path",
    },
    Snippet {
        name: "os-member-p2",
        file: "snippet.py",
        text: "import os\nos.pa",
        typed: "pa",
        expected: "path",
    },
    Snippet {
        name: "local-name-p3",
        file: "snippet.py",
        text: "def helper_function():\n    return 1\n\n\nvalue = hel",
        typed: "hel",
        expected: "helper_function",
    },
];

const TS: &[Snippet] = &[
    Snippet {
        name: "string-member-p0",
        file: "snippet.ts",
        text: "const s: string = \"abc\";\ns.",
        typed: "",
        expected: "toUpperCase",
    },
    Snippet {
        name: "string-member-p1",
        file: "snippet.ts",
        text: "const s: string = \"abc\";\ns.t",
        typed: "t",
        expected: "toUpperCase",
    },
    Snippet {
        name: "local-name-p2",
        file: "snippet.ts",
        text: "function helperFunction(): number {\n  return 1;\n}\nconst v = he",
        typed: "he",
        expected: "helperFunction",
    },
];

const C: &[Snippet] = &[
    Snippet {
        name: "printf-p3",
        file: "snippet.c",
        text: "#include <stdio.h>\nint main(void) {\n  pri",
        typed: "pri",
        expected: "printf",
    },
    Snippet {
        name: "arrow-member-p0",
        file: "snippet.c",
        text: "struct point { int x; int yy; };\nint f(struct point *p) {\n  return p->",
        typed: "",
        expected: "yy",
    },
    // C++: a namespace's members after `::`, and a method whose inserted text and
    // `textEdit` range (over the typed `wi`) differ from its label `width()`.
    Snippet {
        name: "namespace-member-p0",
        file: "snippet.cc",
        text: "namespace geo {\nint area(int w, int h);\nint perimeter;\n}\nint main() {\n  return geo::",
        typed: "",
        expected: "perimeter",
    },
    Snippet {
        name: "method-p2",
        file: "snippet.cc",
        text: "struct Box {\n  int width() const;\n  int weight;\n};\nint f(Box b) {\n  return b.wi",
        typed: "wi",
        expected: "width",
    },
];

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let out = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or("fixtures/completion".into()),
    );
    std::fs::create_dir_all(&out)?;
    let servers: &[(&str, &[Snippet])] = &[
        ("pyright", PY),
        ("basedpyright", PY),
        ("jedi-language-server", PY),
        ("python-lsp-server", PY),
        ("typescript-language-server", TS),
        ("typescript-native", TS),
        ("clangd", C),
    ];
    let only: Vec<String> = std::env::args().skip(2).collect();
    for (name, snippets) in servers {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        let mut p = profile::find_profile(name, None)?;
        // A loaded machine makes first answers slow; a fixture waits for them.
        p.request_timeout_ms = p.request_timeout_ms.max(60_000);
        if p.resolve_command().is_none() {
            eprintln!("{name}: not installed ({}), skipped", p.install_hint);
            continue;
        }
        for s in *snippets {
            if let Err(e) = capture(&p, name, s, &out).await {
                eprintln!("{name} {}: {e:#}; not captured", s.name);
            }
        }
    }
    Ok(())
}

async fn capture(
    p: &typist::editor::Profile,
    name: &str,
    s: &Snippet,
    out: &std::path::Path,
) -> anyhow::Result<()> {
    let mut session =
        TypistSession::start(p, &Conditions::default(), SessionOptions::default()).await?;
    let info = session.server_info().clone();
    session.open(s.file, s.text)?;
    let cursor = session.end_of(s.file).expect("open");
    let before = s.text[..s.text.len() - s.typed.len()].chars().last();
    let tc = before
        .filter(|c| matches!(c, '.' | '>' | ':') && s.typed.is_empty())
        .map(String::from);
    let trigger = Trigger::for_character(tc.as_deref(), session.trigger_characters());
    let answer = session
        .complete_when_ready(s.file, cursor, &trigger)
        .await?;
    let _ = tokio::time::timeout(Duration::from_secs(10), session.shutdown()).await;
    let fixture = json!({
        "server": name,
        "server_info": {"name": info.name, "version": info.version},
        "file": s.file,
        "text": s.text,
        "position": cursor.to_json(),
        "trigger": format!("{trigger:?}"),
        "typed": s.typed,
        "expected": s.expected,
        "answer": answer.value,
    });
    let path = out.join(format!("{name}--{}.json", s.name));
    std::fs::write(&path, serde_json::to_string_pretty(&fixture)? + "\n")?;
    eprintln!("{}", path.display());
    Ok(())
}
