//! The README's own-code and before-and-after recipes, run as written: the shell block under a recipe's heading is
//! read from README.md and each line given to `sh` with `typist` on the PATH and HOME a
//! scratch folder (so `~/src/myproject` is a project made there). A recipe changed in
//! the README is the recipe tested.

use std::path::Path;
use std::process::Command;

use crate::common::TYPIST;

/// The command lines of the first ```sh block after `heading` in README.md.
fn recipe(heading: &str) -> Vec<String> {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let at = readme
        .find(heading)
        .unwrap_or_else(|| panic!("README.md has no {heading:?}"));
    let block = readme[at..].split("```sh\n").nth(1).unwrap();
    let block = block.split("```").next().unwrap();
    block
        .lines()
        .map(|l| l.split(" # ").next().unwrap().trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// Runs `line` in `home` as a user's shell would, with `typist` on the PATH.
fn sh(home: &Path, line: &str) -> std::process::Output {
    sh_env(home, line, &[])
}

/// [`sh`] with more variables set (a user's own, such as where rustup keeps its
/// toolchains, which a scratch HOME does not hold).
fn sh_env(home: &Path, line: &str, env: &[(&str, String)]) -> std::process::Output {
    let bin = home.join("bin");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("sh")
        .arg("-c")
        .arg(line)
        .current_dir(home)
        .env("HOME", home)
        .env("PATH", path)
        .env("TYPIST_EXE", TYPIST)
        .env("TYPIST_CONFIG_DIR", home.join(".config/typist"))
        .env("RUST_LOG", "warn")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .unwrap()
}

/// Runs each line, which must succeed; what each printed (stdout, then stderr).
fn run_all(home: &Path, lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|line| {
            let o = sh(home, line);
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            assert!(o.status.success(), "{line}\n{said}");
            said
        })
        .collect()
}

#[test]
fn the_readmes_own_code_and_before_after_recipes_run_as_written() {
    let lines = recipe("**Your own code, two assistants, a comparison.**");
    assert_eq!(lines.len(), 3, "three commands: {lines:?}");
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    std::fs::create_dir_all(home.join("bin")).unwrap();
    std::os::unix::fs::symlink(TYPIST, home.join("bin/typist")).unwrap();
    // A user's project: a package folder and its pyproject.toml.
    let project = home.join("src/myproject");
    std::fs::create_dir_all(&project).unwrap();
    let status = Command::new("cp")
        .arg("-a")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/default-dataset/colorama/colorama"
        ))
        .arg(&project)
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::write(
        project.join("pyproject.toml"),
        "[project]\nname = \"mine\"\n",
    )
    .unwrap();
    let outs = run_all(home, &lines);
    // The sampling said how it read the folder; the score names both assistants and
    // the pair between them.
    assert!(
        outs[0].contains("in 1 repository (") && outs[0].contains("it holds pyproject.toml"),
        "{}",
        outs[0]
    );
    let score = outs.last().unwrap();
    for name in ["typist-ngram", "typist-previous-line"] {
        assert!(score.contains(name), "{name} not in {score}");
    }
    assert!(
        score.lines().any(|l| l.contains("| typist-ngram ")
            && l.contains("| typist-previous-line ")
            && l.contains("integral_help")),
        "no pair in {score}"
    );

    // Before and after: the same plan again under another condition, compared as
    // labelled arms, the differing condition said.
    let lines = recipe("**Before and after.**");
    assert_eq!(lines.len(), 2, "{lines:?}");
    let said = run_all(home, &lines).pop().unwrap();
    for needle in [
        "before/typist-ngram",
        "after/typist-ngram",
        "shared cases",
        "settle_ms",
    ] {
        assert!(said.contains(needle), "{needle} not in {said}");
    }
}

/// The README's "real releases by name" recipe, run as written: four registries into
/// one dataset folder, then a plan of the four repositories' code.
#[test]
fn the_readmes_real_releases_recipe_runs_as_written() {
    let lines = recipe("**Real releases by name.**");
    assert_eq!(lines.len(), 2, "two commands: {lines:?}");
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    std::fs::create_dir_all(home.join("bin")).unwrap();
    std::os::unix::fs::symlink(TYPIST, home.join("bin/typist")).unwrap();
    // The user's rustup and cargo homes (cargo is a rustup proxy that looks there).
    let real_home = std::env::var("HOME").unwrap_or_default();
    let var = |k: &str, default: &str| {
        std::env::var(k).unwrap_or_else(|_| format!("{real_home}/{default}"))
    };
    let env = [
        ("RUSTUP_HOME", var("RUSTUP_HOME", ".rustup")),
        ("CARGO_HOME", var("CARGO_HOME", ".cargo")),
    ];
    let mut said = Vec::new();
    for line in &lines {
        let o = sh_env(home, line, &env);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.status.success(), "{line}\n{text}");
        said.push(text);
    }
    assert_eq!(
        said[0].matches(": added in data/real/").count(),
        4,
        "{}",
        said[0]
    );
    assert!(said[1].contains("in 4 repositories"), "{}", said[1]);
    let plan = std::fs::read_to_string(home.join("real.jsonl")).unwrap();
    for lang in ["python", "rust", "javascript", "java"] {
        assert!(
            plan.contains(&format!("\"language\":\"{lang}\"")),
            "no {lang} case"
        );
    }
    let manifest = std::fs::read_to_string(home.join("data/real/dataset.toml")).unwrap();
    assert_eq!(manifest.matches("[[package]]").count(), 4, "{manifest}");
}
