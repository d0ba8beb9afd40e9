//! `typist sample --cases edits`: an edits plan from version control (methodology
//! §13): the commits of each `--git` repository, the `debian/patches` of each
//! repository of a `--dataset` (Debian source trees, unpacked with their patches
//! applied by `typist dataset add DIR debian:SOURCE`), and the files changed between
//! two `--releases` of a package.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};

use super::args::SampleArgs;
use typist::dataset::edits::import::{ImportOptions, from_git, from_patches, from_releases};
use typist::dataset::edits::{EditsHeader, Session, write_edits_plan};

pub(super) fn sample_edits(a: SampleArgs) -> Result<ExitCode> {
    if !a.prefix.is_empty() || a.context.is_some() || !a.kinds.is_empty() || a.max_lines.is_some() {
        bail!("--prefix, --context, --kinds and --max-lines are not options of --cases edits");
    }
    let sm = &a.sampling;
    if sm.rate.is_some() || sm.lines.is_some() || sm.max_per_file.is_some() || sm.single_repo {
        bail!(
            "--rate, --lines, --max-per-file and --single-repo are not options of --cases edits (every pause of a session is a moment; --max-per-repo N keeps N sessions a repository)"
        );
    }
    if a.commits.is_some() && a.git.is_empty() {
        bail!("--commits goes with --git REPO");
    }
    if a.out.exists() && !a.force {
        bail!(
            "{} exists: runs made from it would be orphaned; choose another --out, or add --force to replace it",
            a.out.display()
        );
    }
    let sampling = a.sampling.layer();
    let opts = ImportOptions {
        seed: sampling.seed.unwrap_or(1),
        max_sessions: sampling.max_per_repo,
        ..Default::default()
    };
    let mut sessions: Vec<Session> = Vec::new();
    for repo in &a.git {
        sessions.extend(from_git(repo, a.commits.as_deref(), &opts)?);
    }
    if let Some(ds) = &a.dataset {
        sessions.extend(debian_patches(ds, &opts)?);
    }
    if let [old, new] = a.releases.as_slice() {
        for d in [old, new] {
            if !d.is_dir() {
                bail!("--releases: {} is not a folder", d.display());
            }
        }
        sessions.extend(from_releases(old, new, &package_name(new), &opts)?);
    }
    if sessions.is_empty() {
        bail!(
            "no edit session: no commit (or patch) within the limits changed code ({} files, {} changed lines at most); nothing written",
            opts.max_files,
            opts.max_changed_lines
        );
    }
    let header = EditsHeader {
        edits_plan: "edits".into(),
        pause_ms: opts.pause_ms,
        seed: opts.seed,
    };
    write_edits_plan(&a.out, &header, &sessions)?;
    let moments: usize = sessions.iter().map(|s| s.moments.len()).sum();
    let silence: usize = sessions
        .iter()
        .flat_map(|s| &s.moments)
        .filter(|m| m.silence)
        .count();
    let repos: std::collections::BTreeSet<&str> =
        sessions.iter().map(|s| s.repo.as_str()).collect();
    out!(
        "{} ({} of them silence) in {} from {} -> {}",
        typist::score::count(moments as u64, "moment"),
        silence,
        typist::score::count(sessions.len() as u64, "edit session"),
        typist::score::count(repos.len() as u64, "repository"),
        a.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// A release folder's package name: its name up to a `-` or `_` before a digit
/// (`zlib-1.3` is `zlib`), else its whole name.
fn package_name(dir: &std::path::Path) -> String {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "release".into());
    let b = name.as_bytes();
    (1..b.len())
        .find(|&i| matches!(b[i - 1], b'-' | b'_') && b[i].is_ascii_digit())
        .map_or(name.clone(), |i| name[..i - 1].to_string())
}

/// The sessions of every repository of `ds` that has `debian/patches/series`.
fn debian_patches(ds: &std::path::Path, opts: &ImportOptions) -> Result<Vec<Session>> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(ds)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", ds.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("debian/patches/series").is_file())
        .collect();
    entries.sort();
    if entries.is_empty() {
        bail!(
            "{} has no repository with debian/patches/series (typist dataset add {} debian:SOURCE fetches Debian sources)",
            ds.display(),
            ds.display()
        );
    }
    for tree in entries {
        let repo = tree
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // Every patch the series names (`NAME [-pN]`, `#` comments), applied in the
        // tree by dpkg-source.
        let dir = tree.join("debian/patches");
        let series = std::fs::read_to_string(dir.join("series")).unwrap_or_default();
        let patches: Vec<PathBuf> = series
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter_map(|l| l.split_whitespace().next())
            .map(|name| dir.join(name))
            .collect();
        out.extend(from_patches(&tree, &repo, &patches, true, opts)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::package_name;
    use std::path::Path;

    #[test]
    fn a_release_folder_names_its_package() {
        assert_eq!(package_name(Path::new("/x/zlib-1.3")), "zlib");
        assert_eq!(package_name(Path::new("bc_1.07.1")), "bc");
        assert_eq!(package_name(Path::new("gnu-tar-1.35")), "gnu-tar");
        assert_eq!(package_name(Path::new("mypkg")), "mypkg");
    }
}
