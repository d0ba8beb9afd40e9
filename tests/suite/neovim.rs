//! A real Neovim as the editor (`--editor neovim`, issue 26): the same plan gives the
//! same suggestions through Neovim as through typist's own client; the cheating server
//! finds no target line through Neovim either; Neovim writes no swap, backup, undo or
//! shada file; a Lua error and a crash of Neovim are the case's error and the next case
//! gets a fresh editor. Neovim must be installed (`scripts/install-servers.sh`): a
//! missing one fails these tests, never skips them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::tokens::{patient_profile, python_token_plan, require_installed, run_in_editor};
use crate::common::{
    DATASET, TYPIST, assert_line_above, editors_with, line_above, line_above_suggestion, ok, typist,
};

/// The Neovim typist uses (the install script's), or a failure saying how to get it.
pub(crate) fn require_neovim() -> PathBuf {
    let nvim = Path::new(env!("CARGO_MANIFEST_DIR")).join(".servers/bin/nvim");
    assert!(
        nvim.is_file(),
        "Neovim is not installed at {}: run scripts/install-servers.sh",
        nvim.display()
    );
    nvim
}

fn parsed(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("records.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn run_in(out: &Path, args: &[&str]) -> std::process::Output {
    require_neovim();
    typist()
        .args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
        .args(["--dataset", DATASET, "--out", out.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap()
}

/// Same plan, two editors: typist-ngram and typist-fixed through typist's own client
/// and through Neovim, with three characters typed at 20 ms a key. At least 99% of the
/// cases give the same outcome and the same predicted line; the records through Neovim
/// name the editor and its version, typist's own carry no such field.
#[test]
fn the_same_plan_through_neovim_gives_the_same_suggestions() {
    let tmp = tempfile::tempdir().unwrap();
    let common = [
        "--assistant",
        "typist-ngram",
        "--assistant",
        "typist-fixed",
        "--rate",
        "0.02",
        "--seed",
        "1",
        "--typed-prefix",
        "3",
        "--jobs",
        "2",
    ];
    let own = tmp.path().join("typist");
    ok(&run_in(&own, &common));
    let nv = tmp.path().join("neovim");
    let mut args = common.to_vec();
    args.extend(["--editor", "neovim", "--key-interval-ms", "20"]);
    ok(&run_in(&nv, &args));
    let (a, b) = (parsed(&own), parsed(&nv));
    assert_eq!(a.len(), b.len());
    assert!(a.len() >= 60, "{} records", a.len());
    let mut differ = Vec::new();
    for (x, y) in a.iter().zip(&b) {
        assert_eq!((&x["case"], &x["assistant"]), (&y["case"], &y["assistant"]));
        if (&x["outcome"], &x["predicted"]) != (&y["outcome"], &y["predicted"]) {
            differ.push(format!(
                "{} {}: typist {} {} | neovim {} {} {}",
                x["assistant"],
                x["case"],
                x["outcome"],
                x["predicted"],
                y["outcome"],
                y["predicted"],
                y["error"]
            ));
        }
        assert!(x.get("editor").is_none(), "{x}");
        assert_eq!(y["editor"], "neovim");
        assert!(
            y["editor_version"].as_str().unwrap().starts_with("0.12."),
            "{y}"
        );
    }
    for d in &differ {
        eprintln!("differs: {d}");
    }
    assert!(
        differ.len() * 100 <= a.len(),
        "{} of {} cases differ",
        differ.len(),
        a.len()
    );
    let answered = |r: &&Value| r["outcome"] == "suggestion";
    assert!(
        b.iter().filter(answered).count() * 2 > b.len(),
        "mostly suggestions"
    );
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(nv.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["editor"]["kind"], "neovim");
    assert_eq!(m["editor"]["key_interval_ms"], 20);
    assert_eq!(m["conditions"]["app"]["kind"], "neovim");
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(own.join("manifest.json")).unwrap()).unwrap();
    assert!(
        m.get("editor").is_none() && m["conditions"].get("app").is_none(),
        "{m}"
    );
}

/// The honesty invariant through Neovim: the cheating server (it reads the workspace at
/// `initialize`, every `didOpen`, every version Neovim sends and every request) never
/// finds the line it is asked for, with lines below and a typed prefix, and when the
/// file is typed from the top. With lines below, the version Neovim sends before the
/// Enter that opens the case's line holds, at that line's number, the first line below
/// (context the user has): the cheater may answer with it, never with the case's line.
#[test]
fn a_cheating_server_finds_no_target_line_through_neovim() {
    let tmp = tempfile::tempdir().unwrap();
    let editors = editors_with(tmp.path(), "cheat", &["--backend", "cheat"], 10_000);
    let modes: &[(&str, &[&str])] = &[
        (
            "suffix-typed",
            &["--suffix-lines", "4", "--typed-prefix", "4"],
        ),
        ("type", &["--typing", "type", "--typed-prefix", "2"]),
    ];
    for (label, extra) in modes {
        let out = tmp.path().join(label);
        let mut args = vec![
            "--assistant",
            "cheat",
            "--editors",
            editors.to_str().unwrap(),
            "--editor",
            "neovim",
            "--key-interval-ms",
            "10",
            "--rate",
            "0.02",
            "--seed",
            "5",
            "--jobs",
            "2",
        ];
        args.extend_from_slice(extra);
        ok(&run_in(&out, &args));
        let recs = parsed(&out);
        assert!(recs.len() > 30, "{label}: {} records", recs.len());
        for r in &recs {
            assert_eq!(r["editor"], "neovim");
            if *label == "type" || r["outcome"] != "suggestion" {
                assert_eq!(r["outcome"], "empty", "{label}: the cheater found {r}");
                continue;
            }
            assert_ne!(
                r["predicted"], r["expected"],
                "{label}: the cheater found {r}"
            );
            // What it found is the line below, which the user has.
            let text = std::fs::read_to_string(
                Path::new(DATASET)
                    .join(r["repo"].as_str().unwrap())
                    .join(r["file"].as_str().unwrap()),
            )
            .unwrap();
            let below = text.lines().nth(r["line"].as_u64().unwrap() as usize);
            assert_eq!(r["predicted"].as_str(), below, "{label}: {r}");
        }
    }
}

/// Neovim writes nothing but what typist writes: after a few cases the session's folder
/// holds only the workspace's files and Neovim's empty logs where typist put them (no
/// swap, backup, undo or shada file), and the
/// HOME and XDG folders Neovim and the server were given stay empty.
#[test]
fn neovim_writes_no_swap_backup_undo_or_shada_file() {
    require_neovim();
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut profile = typist::editor::Profile::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/typist-fixed.toml"),
    )
    .unwrap();
    profile.command = TYPIST.to_string();
    for (k, sub) in [
        ("HOME", ""),
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_STATE_HOME", ".local/state"),
        ("XDG_CACHE_HOME", ".cache"),
    ] {
        profile
            .env
            .insert(k.into(), home.join(sub).display().to_string());
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (files, suggested) = rt.block_on(async {
        use typist::editor::{EditorApp, EditorKind, EditorSession, Position};
        let app = EditorApp {
            kind: EditorKind::Neovim,
            key_interval_ms: 5,
            ..EditorApp::default()
        };
        let opts = typist::editor::SessionOptions {
            contents: vec![("pkg/a.py".into(), String::new())],
            ..Default::default()
        };
        let mut s = EditorSession::start(
            &Default::default(),
            &app,
            &profile,
            &Default::default(),
            opts,
        )
        .await
        .unwrap();
        s.open("pkg/a.py", "").await.unwrap();
        let mut text = String::new();
        let mut suggested = Vec::new();
        for (i, line) in ["import os", "def f():", "    return 1"].iter().enumerate() {
            text.push_str(&line[..3]);
            s.set_text("pkg/a.py", &text).unwrap();
            let t = s
                .suggest(
                    "pkg/a.py",
                    Position {
                        line: i as u32,
                        character: 3,
                    },
                )
                .await
                .unwrap();
            suggested.push(t.value.top(1));
            text.push_str(&line[3..]);
            text.push('\n');
            s.set_text("pkg/a.py", &text).unwrap();
        }
        let folder = s.workspace().parent().unwrap().to_path_buf();
        let files = all_files(&folder);
        for log in ["nvim.log", "lsp.log"] {
            let text = std::fs::read_to_string(folder.join(log)).unwrap_or_default();
            assert_eq!(text, "", "{log}");
        }
        s.shutdown(std::time::Duration::from_secs(5)).await;
        (files, suggested)
    });
    // Neovim's logs are where typist points them (NVIM_LOG_FILE, the client's log
    // file), and empty; its RPC socket is in the session's `run/` (TMPDIR and
    // XDG_RUNTIME_DIR), never in the user's temporary folder.
    let (run, files): (Vec<String>, Vec<String>) =
        files.into_iter().partition(|f| f.starts_with("run/"));
    assert!(
        run.iter()
            .all(|f| f.starts_with("run/nvim.") && f.ends_with(".0")),
        "{run:?}"
    );
    assert_eq!(
        files,
        vec![
            "lsp.log".to_string(),
            "nvim.log".into(),
            "workspace/pkg/a.py".into()
        ],
        "the session's folder"
    );
    // typist-fixed answers `pass` at the cursor: the shown line is the typed prefix
    // and the ghost text.
    assert_eq!(
        suggested,
        vec![
            vec!["imppass".to_string()],
            vec!["defpass".into()],
            vec!["   pass".into()]
        ]
    );
    let written: Vec<(String, String)> = all_files(&home)
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(home.join(&f)).unwrap_or_default();
            (f, text)
        })
        .collect();
    assert_eq!(written, Vec::<(String, String)>::new(), "HOME");
}

/// Every file under `dir`, relative to it, sorted.
fn all_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

/// A plugin's Lua error is the case's error with its message, and the next case gets a
/// fresh editor: a configuration that fails on the second time insert mode is entered
/// in a Neovim fails exactly every second case of a file (each file starts a Neovim, and
/// each failure replaces it). A Neovim that exits (`os.exit(3)` on even lines) is the
/// error of each even line's case, saying how it ended, and every odd line's case is
/// answered by a fresh one.
#[test]
fn a_lua_error_or_a_crash_is_the_cases_error_and_the_next_case_gets_a_fresh_editor() {
    let tmp = tempfile::tempdir().unwrap();
    let failing = tmp.path().join("failing.lua");
    std::fs::write(
        &failing,
        "local n = 0\nvim.api.nvim_create_autocmd('InsertEnter', { callback = function()\n  n = n + 1\n  if n == 2 then error('typist test: plugin failure') end\nend })\n",
    )
    .unwrap();
    let crashing = tmp.path().join("crashing.lua");
    std::fs::write(
        &crashing,
        "vim.api.nvim_create_autocmd('TextChangedI', { callback = function()\n  if vim.api.nvim_win_get_cursor(0)[1] % 2 == 0 then os.exit(3) end\nend })\n",
    )
    .unwrap();
    let base = [
        "--assistant",
        "typist-fixed",
        "--editor",
        "neovim",
        "--rate",
        "0.01",
        "--seed",
        "1",
        "--max-restarts",
        "1000",
    ];
    let out = tmp.path().join("failing");
    let mut args = base.to_vec();
    args.extend(["--editor-config", failing.to_str().unwrap()]);
    ok(&run_in(&out, &args));
    let recs = parsed(&out);
    let mut by_file: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for r in &recs {
        by_file
            .entry(format!("{}/{}", r["repo"], r["file"]))
            .or_default()
            .push(r);
    }
    let mut errors = 0;
    for rs in by_file.values() {
        for (i, r) in rs.iter().enumerate() {
            if i % 2 == 1 {
                errors += 1;
                assert_eq!(r["outcome"], "error", "{r}");
                let e = r["error"].as_str().unwrap();
                assert!(e.contains("typist test: plugin failure"), "{e}");
            } else {
                assert_eq!(r["outcome"], "suggestion", "{r}");
            }
        }
    }
    assert!(errors >= 5, "{errors} failing cases");

    let out = tmp.path().join("crashing");
    let mut args = base.to_vec();
    args.extend(["--editor-config", crashing.to_str().unwrap()]);
    ok(&run_in(&out, &args));
    let recs = parsed(&out);
    let even = recs.iter().filter(|r| r["line"].as_u64().unwrap() % 2 == 0);
    assert!(even.clone().count() >= 5);
    for r in even {
        assert_eq!(r["outcome"], "error", "{r}");
        let e = r["error"].as_str().unwrap();
        assert!(
            e.contains("neovim exited") && e.contains("exit code 3"),
            "{e}"
        );
    }
    for r in recs.iter().filter(|r| r["line"].as_u64().unwrap() % 2 == 1) {
        assert_eq!(r["outcome"], "suggestion", "{r}");
    }
}

/// `doctor --editor neovim`: Neovim's version, and each inline profile attached inside
/// it and answering its probe through Neovim's ghost text.
#[test]
fn doctor_examines_profiles_inside_neovim() {
    require_neovim();
    let out = typist()
        .args(["doctor", "--editor", "neovim", "--json"])
        .args(["--profile", "typist-fixed", "--profile", "typist-ngram"])
        .output()
        .unwrap();
    ok(&out);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let by_name: BTreeMap<&str, &Value> = v["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p))
        .collect();
    for (name, server, top) in [
        ("typist-fixed", "typist-host (fixed)", "pass"),
        ("typist-ngram", "typist-host (ngram)", "for i in range(10):"),
    ] {
        let p = by_name[name];
        assert_eq!(p["status"], "ok", "{p}");
        assert!(
            p["editor"].as_str().unwrap().starts_with("neovim 0.12."),
            "{p}"
        );
        assert_eq!(p["server"]["name"], server);
        assert_eq!(p["probe"]["top"], serde_json::json!([top]), "{p}");
    }
}

/// A plugin-only assistant: `fixtures/neovim/ghost.lua` (no LSP, its own extmark
/// namespace, a 150 ms debounce, as copilot.vim draws), loaded two ways: with
/// `--editor-config` and `--editor-namespace` (beside typist-fixed's server, whose
/// inline completion is then off), and through a profile with no server at all whose
/// `[neovim]` table names the plugin and its namespace
/// (`fixtures/neovim/editors/ghost-plugin.toml`). It shows the rest of the line above
/// when the typed prefix starts it, else nothing: every record is what the plugin drew,
/// computed here from the dataset, and nothing drawn is an `empty` with its reason,
/// counted in the score's empty rate.
#[test]
fn a_plugin_only_assistant_is_measured_from_its_own_namespace() {
    let tmp = tempfile::tempdir().unwrap();
    let plugin = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/neovim/ghost.lua");
    let common = [
        "--editor",
        "neovim",
        "--typed-prefix",
        "2",
        "--key-interval-ms",
        "20",
        "--rate",
        "0.01",
        "--seed",
        "1",
    ];
    let flags = tmp.path().join("flags");
    let mut args = vec![
        "--assistant",
        "typist-fixed",
        "--editor-config",
        plugin,
        "--editor-namespace",
        "typist.fixture.ghost",
    ];
    args.extend(common);
    ok(&run_in(&flags, &args));
    let m = check_ghost(&flags, "typist-fixed");
    assert_eq!(
        m["editor"]["namespaces"],
        serde_json::json!(["typist.fixture.ghost"])
    );
    assert_eq!(m["editor"]["display_deadline_ms"], 1000);
    assert_eq!(m["editor"]["config"], plugin);

    let by_profile = tmp.path().join("profile");
    let editors = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/neovim/editors");
    let mut args = vec!["--editors", editors, "--assistant", "ghost-plugin"];
    args.extend(common);
    ok(&run_in(&by_profile, &args));
    let m = check_ghost(&by_profile, "ghost-plugin");
    let nv = &m["assistants"][0]["profile"]["neovim"];
    assert_eq!(nv["config"], plugin);
    assert_eq!(
        nv["namespaces"],
        serde_json::json!(["typist.fixture.ghost"])
    );
    let bytes = std::fs::read(plugin).unwrap();
    assert_eq!(nv["config_sha256"], typist::digest::sha256_hex(&bytes));
    // A plugin with no server is refused with typist's own client.
    let o = typist()
        .args([
            "run",
            "--config",
            "/dev/null",
            "--quiet",
            "--dataset",
            DATASET,
        ])
        .args([
            "--editors",
            editors,
            "--assistant",
            "ghost-plugin",
            "--rate",
            "0.01",
            "--out",
        ])
        .arg(tmp.path().join("refused"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("runs only with --editor neovim"), "{err}");
}

/// The ghost plugin's records in `out` (assistant `name`) checked against the dataset,
/// and its score's figures; returns the manifest.
fn check_ghost(out: &Path, name: &str) -> Value {
    let recs = parsed(out);
    assert_eq!(recs.len(), 23);
    let mut empties = 0;
    for r in &recs {
        let above = line_above(r);
        let typed: String = r["expected"].as_str().unwrap().chars().take(2).collect();
        if !above.is_empty() && above.starts_with(&typed) && above.len() > typed.len() {
            assert_eq!(r["outcome"], "suggestion", "{r}");
            assert_eq!(r["predicted"], above, "{r}");
        } else {
            empties += 1;
            assert_eq!(r["outcome"], "empty", "{r}");
            assert_eq!(
                r["reason"], "nothing shown within the display deadline (1000 ms)",
                "{r}"
            );
        }
    }
    assert!(
        empties >= 2 && empties < recs.len() / 2,
        "{empties} empties"
    );
    let score = typist()
        .args(["score", "--json"])
        .arg(out.join("records.jsonl"))
        .output()
        .unwrap();
    ok(&score);
    let s: Value = serde_json::from_slice(&score.stdout).unwrap();
    let a = &s["assistants"][name];
    assert_eq!(a["cases"], 23);
    assert_eq!(a["empty_rate"], empties as f64 / 23.0);
    assert_eq!(a["error_rate"], 0.0);
    serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap()
}

/// Every record of `out` is exactly what a "line above" fixture drew, with `k` characters
/// typed: the two lines as a suggestion, or nothing shown as an `empty` with its reason.
/// Returns how many suggestions.
fn check_line_above(out: &Path, k: usize) -> usize {
    let recs = parsed(out);
    assert_eq!(recs.len(), 23);
    let shown = assert_line_above(&recs, k);
    assert!(shown >= recs.len() / 2, "{shown} suggestions");
    shown
}

/// Plugins in the manner of the real ones (issue 39), each measured with nothing typed
/// and with two characters typed, every record exact:
/// - `overlay.vim`, as llama.vim: Vimscript, asks on `CursorMovedI` only (a case is
///   reached by Enter at the end of the line above, which moves the cursor in insert
///   mode), hides with `silent! iunmap` (v:errmsg set, no error shown: never the case's
///   error), draws its first line as `overlay` with an info chunk in another highlight
///   (left out by the profile's `highlights`) and its other lines from a second mark at
///   column 0 (read together, never the typed prefix in place of the drawn line);
/// - `wincol.lua`, as codeium.vim: asks on `TextChangedI` only, draws by window column.
///
/// Without a highlight named, the overlay plugin's info chunk makes every shown case an
/// error naming both groups and the flag, never a suggestion with the info in it.
#[test]
fn plugins_drawn_as_the_real_ones_draw_are_read_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    let editors = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/neovim/editors");
    for plugin in ["overlay-plugin", "wincol-plugin"] {
        for k in [0, 2] {
            let out = tmp.path().join(format!("{plugin}-{k}"));
            let k_s = k.to_string();
            ok(&run_in(
                &out,
                &[
                    "--editors",
                    editors,
                    "--assistant",
                    plugin,
                    "--editor",
                    "neovim",
                    "--typed-prefix",
                    &k_s,
                    "--key-interval-ms",
                    "20",
                    "--rate",
                    "0.01",
                    "--seed",
                    "1",
                ],
            ));
            check_line_above(&out, k);
            let m: Value =
                serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap())
                    .unwrap();
            assert_eq!(m["editor"]["arrival"], "enter-above");
        }
    }
    let out = tmp.path().join("unfiltered");
    let plugin = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/neovim/overlay.vim");
    // No case answered: the run ends with exit code 3.
    let o = run_in(
        &out,
        &[
            "--assistant",
            "typist-fixed",
            "--editor",
            "neovim",
            "--editor-config",
            plugin,
            "--editor-namespace",
            "typist.fixture.overlay",
            "--rate",
            "0.01",
            "--seed",
            "1",
            "--max-restarts",
            "1000",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for r in parsed(&out) {
        if line_above_suggestion(&r, 0).is_some() {
            assert_eq!(r["outcome"], "error", "{r}");
            let e = r["error"].as_str().unwrap();
            assert!(
                e.contains("TypistOverlayHint, TypistOverlayInfo")
                    && e.contains("--editor-highlight"),
                "{e}"
            );
        }
    }
}

/// The keys that reach a case fire what a person's keys fire, in a person's order: a
/// plugin logging its autocommands sees, for each case, `InsertEnter` (at the line above),
/// then for the Enter and for each typed key `CursorMovedI` and `TextChangedI`, and
/// `silent!` errors it makes are no error of the case.
#[test]
fn a_case_is_reached_with_the_events_of_a_persons_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("events.log");
    let config = tmp.path().join("events.lua");
    std::fs::write(
        &config,
        format!(
            "local f = io.open({log:?}, 'a')\nfor _, e in ipairs({{'InsertEnter', 'CursorMovedI', 'TextChangedI', 'TextChangedP', 'InsertLeave'}}) do\n  vim.api.nvim_create_autocmd(e, {{ callback = function()\n    vim.cmd('silent! iunmap <buffer> <F13>')\n    local r, c = unpack(vim.api.nvim_win_get_cursor(0))\n    f:write(e .. ' ' .. r .. ':' .. c .. '\\n') f:flush()\n  end }})\nend\n"
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    ok(&run_in(
        &out,
        &[
            "--assistant",
            "typist-fixed",
            "--editor",
            "neovim",
            "--editor-config",
            config.to_str().unwrap(),
            "--typed-prefix",
            "2",
            "--rate",
            "0.002",
            "--seed",
            "3",
            "--jobs",
            "1",
        ],
    ));
    let recs = parsed(&out);
    assert!(!recs.is_empty());
    for r in &recs {
        assert_ne!(r["outcome"], "error", "{r}");
    }
    let events = std::fs::read_to_string(&log).unwrap();
    // The first case run: Enter at the end of the line above it.
    let above: u64 = events
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("InsertEnter "))
        .and_then(|l| l.split(':').next())
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("no InsertEnter first: {events}"));
    let first = above + 1;
    assert!(recs.iter().any(|r| r["line"] == first), "{events}");
    let at = |c: usize| format!("{first}:{c}");
    let want = [
        format!("InsertEnter {above}:"),
        format!("CursorMovedI {}", at(0)),
        format!("TextChangedI {}", at(0)),
        format!("CursorMovedI {}", at(1)),
        format!("TextChangedI {}", at(1)),
        format!("CursorMovedI {}", at(2)),
        format!("TextChangedI {}", at(2)),
        "InsertLeave".to_string(),
    ];
    let got: Vec<&str> = events.lines().take(want.len()).collect();
    assert_eq!(got.len(), want.len(), "events {got:?}, want {want:?}");
    for (g, w) in got.iter().zip(&want) {
        assert!(g.starts_with(w.as_str()), "events {got:?}, want {want:?}");
    }
}

/// Neovim asks again for an incomplete list after a key only once its average round
/// trip since its last request has passed (`next_debounce` in Neovim's
/// `vim/lsp/completion.lua`): after a slow first answer (pyright's, seconds on a
/// loaded machine) the request for the next key comes seconds late. typist waits for
/// it as long as Neovim's slowest answer so far, never calling it missing (the CI run
/// of 2026-11-28 did, once). A fake server, named so: typist's host, the oracle's
/// lists marked incomplete, its first list 12 s late.
#[test]
fn a_list_asked_again_after_a_slow_first_answer_is_waited_for() {
    let tmp = tempfile::tempdir().unwrap();
    let plan_path = python_token_plan(tmp.path(), 6);
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let plan = plan_path.to_str().unwrap();
    let args = [
        "host",
        "--backend",
        "oracle",
        "--truth",
        plan,
        "--incomplete-lists",
        "--first-list-delay-ms",
        "12000",
    ];
    std::fs::write(
        editors.join("slow-first.toml"),
        format!(
            "name = \"slow-first\"\ncommand = \"@typist\"\nargs = {args:?}\n\
             dialect = \"completion\"\nlanguages = [\"python\"]\nextensions = [\"py\"]\n\
             request_timeout_ms = 30000\n"
        ),
    )
    .unwrap();
    let out = tmp.path().join("neovim");
    ok(&typist()
        .args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
        .args([
            "--dataset",
            DATASET,
            "--assistant",
            "slow-first",
            "--jobs",
            "1",
        ])
        .arg("--plan")
        .arg(&plan_path)
        .arg("--editors")
        .arg(&editors)
        .args(["--editor", "neovim", "--key-interval-ms", "20", "--out"])
        .arg(&out)
        .output()
        .unwrap());
    let recs = parsed(&out);
    assert_eq!(recs.len(), 6);
    for r in &recs {
        assert_eq!(r["outcome"], "suggestion", "{r}");
        assert_eq!(r["rank"], 1, "{r}");
    }
    // The plan types keys after the first lists (each one a request Neovim sends again
    // for the incomplete list, after its debounce): the outcomes above are theirs.
    let typed: u64 = recs.iter().map(|r| r["typed"].as_u64().unwrap_or(0)).sum();
    assert!(typed >= 3, "{typed} keys typed in all");
}

/// Completion lists through Neovim's popup: the real pyright on a sampled token plan
/// (its Python cases, the first 40), through typist's own client and through Neovim.
/// The server answers the same requests (same outcome in every case, the same found or
/// missed token). Under VS Code's rule (typist's default) the ranks differ as Neovim's
/// own rule says (docs/neovim.md); under `--list-rule neovim` typist's own client ranks
/// and shows every list as Neovim's popup does, wherever pyright listed the same items.
#[test]
fn completion_lists_are_read_from_neovims_popup() {
    require_installed("pyright");
    let tmp = tempfile::tempdir().unwrap();
    let plan_path = python_token_plan(tmp.path(), 40);
    let editors = patient_profile(tmp.path(), "pyright");
    let run = |editor: &str| {
        parsed(&run_in_editor(
            tmp.path(),
            &plan_path,
            &editors,
            "pyright",
            editor,
        ))
    };
    let (own, nv) = (run("typist"), run("neovim"));
    let like_nv = {
        let out = tmp.path().join("typist-neovim-rule");
        ok(&typist()
            .args(["run", "--config", "/dev/null", "--quiet", "--no-latency"])
            .args(["--dataset", DATASET, "--assistant", "pyright"])
            .args(["--jobs", "2", "--list-rule", "neovim", "--plan"])
            .arg(&plan_path)
            .arg("--editors")
            .arg(&editors)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap());
        parsed(&out)
    };
    let mut same_list = 0;
    assert_eq!(like_nv.len(), 40);
    for (x, y) in like_nv.iter().zip(&nv) {
        assert_eq!(x["case"], y["case"]);
        assert_eq!(x["outcome"], y["outcome"], "{x}\n{y}");
        if x["listed"] == y["listed"] {
            same_list += 1;
            for f in ["rank", "items", "top"] {
                assert_eq!(x[f], y[f], "{f} under Neovim's rule: {x}\n{y}");
            }
        }
    }
    // pyright's auto-import items vary a little from run to run.
    assert!(
        same_list >= 36,
        "{same_list} of 40 lists of the same length"
    );
    assert_eq!(own.len(), 40);
    assert_eq!(nv.len(), 40);
    let mut nothing_typed = 0;
    let mut ranks_differ = 0;
    for (x, y) in own.iter().zip(&nv) {
        assert_eq!(x["case"], y["case"]);
        assert_eq!(y["editor"], "neovim");
        assert!(
            matches!(x["outcome"].as_str(), Some("suggestion" | "empty")),
            "{x}"
        );
        assert_eq!(x["outcome"], y["outcome"], "{x}\n{y}");
        assert_eq!(x["listed"], y["listed"], "the same answer: {x}\n{y}");
        assert_eq!(x["rank"].is_null(), y["rank"].is_null(), "{x}\n{y}");
        if x["prefix_len"] == 0 {
            nothing_typed += 1;
            assert_eq!(x["items"], y["items"], "{x}\n{y}");
        }
        ranks_differ += usize::from(x["rank"] != y["rank"]);
    }
    assert!(
        nothing_typed >= 10,
        "{nothing_typed} cases with nothing typed"
    );
    // Neovim's order is its own: were the ranks all equal, the popup would not be read.
    assert!(ranks_differ > 0);
}

/// lsp-ai through Neovim: the real lsp-ai in front of SmolLM2 (llama-server, one slot,
/// temperature 0) on a tiny line plan with three characters typed, through typist's own
/// client and through Neovim, whose client asks lsp-ai with `textDocument/completion`
/// from its popup. Every case gives the same outcome and the same line.
#[test]
fn lsp_ai_runs_through_neovims_completion_popup() {
    require_installed("lsp-ai-smollm2");
    let tmp = tempfile::tempdir().unwrap();
    let common = [
        "--assistant",
        "lsp-ai-smollm2",
        "--rate",
        "0.005",
        "--seed",
        "1",
        "--typed-prefix",
        "3",
        "--jobs",
        "1",
    ];
    let own = tmp.path().join("typist");
    ok(&run_in(&own, &common));
    let nv = tmp.path().join("neovim");
    let mut args = common.to_vec();
    args.extend(["--editor", "neovim", "--key-interval-ms", "20"]);
    ok(&run_in(&nv, &args));
    let (a, b) = (parsed(&own), parsed(&nv));
    assert!(a.len() >= 10, "{} records", a.len());
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x["case"], y["case"]);
        assert_eq!(y["editor"], "neovim");
        assert_eq!(
            (&x["outcome"], &x["predicted"]),
            (&y["outcome"], &y["predicted"]),
            "{x}\n{y}"
        );
    }
    let answered = b.iter().filter(|r| r["outcome"] == "suggestion").count();
    assert!(answered * 2 > b.len(), "{answered} suggestions");
}

/// Processes whose parent is `pid`, with their state letter, from `/proc`.
fn children_of(pid: u32) -> Vec<(u32, char)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        // After the command name's closing parenthesis: state, then the parent.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r.trim().to_string()) else {
            continue;
        };
        let mut f = rest.split_whitespace();
        let state = f.next().and_then(|s| s.chars().next()).unwrap_or('?');
        if f.next().and_then(|s| s.parse::<u32>().ok()) == Some(pid) {
            out.push((p, state));
        }
    }
    out
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(')').map(|(_, r)| r.trim().starts_with('Z')))
        .is_some_and(|zombie| !zombie)
}

/// SIGKILL of typist mid-run takes every Neovim and every server Neovim started with
/// it (Neovim dies with its parent; its servers lose their editor), and what they leave
/// in `TMPDIR` is only typist's own session folders (Neovim's socket and temporary
/// folder among them), which the next run sweeps.
#[test]
fn no_neovim_or_server_outlives_a_killed_typist() {
    require_neovim();
    let tmp = tempfile::tempdir().unwrap();
    let tmpdir = tmp.path().join("tmp");
    std::fs::create_dir_all(&tmpdir).unwrap();
    let mut child = typist()
        .env("TMPDIR", &tmpdir)
        .args([
            "run",
            "--config",
            "/dev/null",
            "--quiet",
            "--dataset",
            DATASET,
        ])
        .args([
            "--assistant",
            "typist-fixed",
            "--editor",
            "neovim",
            "--rate",
            "0.05",
        ])
        .args(["--jobs", "2", "--out"])
        .arg(tmp.path().join("out"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let started = loop {
        let editors: Vec<u32> = children_of(child.id()).iter().map(|c| c.0).collect();
        let servers: Vec<u32> = editors
            .iter()
            .flat_map(|&e| children_of(e).into_iter().map(|c| c.0))
            .collect();
        if editors.len() == 2 && servers.len() == 2 {
            break [editors, servers].concat();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no Neovim with its server started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while started.iter().any(|&p| alive(p)) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let left: Vec<u32> = started.iter().copied().filter(|&p| alive(p)).collect();
    assert!(
        left.is_empty(),
        "left running after typist's SIGKILL: {left:?}"
    );
    let names = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let killed = format!("typist-{}-", child.id());
    let left = names(&tmpdir);
    assert!(
        !left.is_empty() && left.iter().all(|n| n.starts_with(&killed)),
        "in TMPDIR after the kill: {left:?}"
    );
    // The next run sweeps the killed typist's folders.
    ok(&typist()
        .env("TMPDIR", &tmpdir)
        .args([
            "run",
            "--config",
            "/dev/null",
            "--quiet",
            "--dataset",
            DATASET,
        ])
        .args(["--assistant", "typist-fixed", "--rate", "0.005", "--out"])
        .arg(tmp.path().join("again"))
        .output()
        .unwrap());
    assert_eq!(
        names(&tmpdir),
        Vec::<String>::new(),
        "TMPDIR after the next run"
    );
}

/// The model behind the host gets the same prompts through Neovim as through typist's
/// own client: `typist bench model` captures every HTTP request that reached the real
/// llama-server with SmolLM2, and the bodies are equal request for request. (Neovim's
/// incremental changes once gave the server's document a line break after the cursor
/// that the buffer did not hold, which moved the prompt's 512-character window by one.)
#[test]
fn the_model_gets_the_same_prompts_through_neovim() {
    require_neovim();
    require_installed("smollm2");
    let tmp = tempfile::tempdir().unwrap();
    let bodies = |editor: &str| -> Vec<Value> {
        let out = tmp.path().join(editor);
        ok(&typist()
            .args([
                "bench",
                "model",
                "--config",
                "/dev/null",
                "--dataset",
                DATASET,
            ])
            .args(["--assistant", "smollm2", "--rate", "0.002", "--seed", "1"])
            .args(["--jobs", "1", "--editor", editor, "--key-interval-ms", "20"])
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap());
        std::fs::read_to_string(out.join("smollm2/requests.jsonl"))
            .unwrap()
            .lines()
            .map(|l| {
                let r: Value = serde_json::from_str(l).unwrap();
                serde_json::from_str(r["body"].as_str().unwrap()).unwrap()
            })
            .collect()
    };
    let (own, nv) = (bodies("typist"), bodies("neovim"));
    assert!(own.len() >= 3, "{} requests", own.len());
    assert_eq!(own.len(), nv.len());
    for (a, b) in own.iter().zip(&nv) {
        assert_eq!(a, b, "the request through Neovim differs");
    }
}
