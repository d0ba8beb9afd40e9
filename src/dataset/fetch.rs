//! Datasets by name (`typist dataset add DIR SPEC...`): real source releases fetched
//! through each registry's own client and unpacked into `DIR/NAME/`, with their licence,
//! the archive's sha256 and the command that runs the package's tests recorded in
//! `DIR/dataset.toml`.
//!
//! - `pypi:NAME==VERSION`: the sdist, by `pip download --no-binary :all: --no-deps`
//!   (tests included where the package ships them);
//! - `npm:NAME@VERSION` (also `npm:@scope/name@VERSION`): the tarball, by `npm pack`;
//! - `crates:NAME@VERSION`: the `.crate` file, by `cargo fetch` of a throwaway package
//!   that depends on exactly that version (cargo checks it against the index), copied
//!   from cargo's cache;
//! - `debian:SOURCE[=VERSION]`: a Debian source package, by `apt-get source
//!   --download-only` with a `deb-src` list of its own (`DIR/.typist/apt`: the system's
//!   archives and keys, its sources untouched), unpacked by `dpkg-source -x` (Debian's
//!   patches applied; they stay in `debian/patches`). The route to Java, C and Go code.
//!
//! A second `add` of the same spec fetches the archive again and compares: the same
//! sha256 is a no-op, another is an error and nothing changes. Archives are unpacked in
//! a scratch folder under `DIR/.typist/` and moved into place whole, so a failed add
//! leaves no half folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};

/// The file each dataset folder's packages are recorded in.
pub const MANIFEST: &str = "dataset.toml";

/// typist's own files inside a dataset folder (scratch, apt lists, environments).
pub const OWN_DIR: &str = ".typist";

/// One package to fetch, as written on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spec {
    Pypi {
        name: String,
        version: String,
    },
    Npm {
        name: String,
        version: String,
    },
    Crates {
        name: String,
        version: String,
    },
    Debian {
        source: String,
        version: Option<String>,
    },
}

const SPEC_FORMS: &str =
    "pypi:NAME==VERSION, npm:NAME@VERSION, crates:NAME@VERSION or debian:SOURCE[=VERSION]";

impl std::str::FromStr for Spec {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> Result<Spec> {
        let (registry, rest) = s
            .split_once(':')
            .ok_or_else(|| anyhow!("'{s}' names no registry: write {SPEC_FORMS}"))?;
        let name_ok = |n: &str| {
            !n.is_empty()
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.+@/".contains(c))
                && !n.contains("..")
                && !n.starts_with(['.', '/'])
        };
        let pinned = |name: &str, version: &str, form: &str| -> Result<(String, String)> {
            if !name_ok(name) || !name_ok(version) || version.contains('/') {
                bail!("'{s}' is not {form}: a name and an exact version");
            }
            Ok((name.to_string(), version.to_string()))
        };
        match registry {
            "pypi" => {
                let (n, v) = rest.split_once("==").ok_or_else(|| {
                    anyhow!(
                        "'{s}' pins no version: write pypi:NAME==VERSION (e.g. pypi:six==1.16.0)"
                    )
                })?;
                let (name, version) = pinned(n, v, "pypi:NAME==VERSION")?;
                Ok(Spec::Pypi { name, version })
            }
            "npm" | "crates" => {
                // A scoped npm name starts with '@': the version follows the last '@'.
                let at = rest.rfind('@').filter(|&i| i > 0).ok_or_else(|| {
                    anyhow!("'{s}' pins no version: write {registry}:NAME@VERSION")
                })?;
                let (name, version) = pinned(
                    &rest[..at],
                    &rest[at + 1..],
                    &format!("{registry}:NAME@VERSION"),
                )?;
                if registry == "npm" {
                    Ok(Spec::Npm { name, version })
                } else {
                    Ok(Spec::Crates { name, version })
                }
            }
            "debian" => {
                let (source, version) = match rest.split_once('=') {
                    Some((src, v)) => (src, Some(v.to_string())),
                    None => (rest, None),
                };
                if !name_ok(source) || source.contains(['/', '@']) {
                    bail!("'{s}' is not debian:SOURCE[=VERSION]");
                }
                if version
                    .as_deref()
                    .is_some_and(|v| !name_ok(v) || v.contains('/'))
                {
                    bail!("'{s}' has a malformed version");
                }
                Ok(Spec::Debian {
                    source: source.to_string(),
                    version,
                })
            }
            other => bail!("unknown registry '{other}' in '{s}': write {SPEC_FORMS}"),
        }
    }
}

impl std::fmt::Display for Spec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Spec::Pypi { name, version } => write!(f, "pypi:{name}=={version}"),
            Spec::Npm { name, version } => write!(f, "npm:{name}@{version}"),
            Spec::Crates { name, version } => write!(f, "crates:{name}@{version}"),
            Spec::Debian {
                source,
                version: Some(v),
            } => write!(f, "debian:{source}={v}"),
            Spec::Debian {
                source,
                version: None,
            } => write!(f, "debian:{source}"),
        }
    }
}

impl Spec {
    pub fn ecosystem(&self) -> &'static str {
        match self {
            Spec::Pypi { .. } => "pypi",
            Spec::Npm { .. } => "npm",
            Spec::Crates { .. } => "crates",
            Spec::Debian { .. } => "debian",
        }
    }

    /// The package's folder in the dataset: its name (a scoped npm name's `/` as `__`).
    pub fn folder(&self) -> String {
        match self {
            Spec::Pypi { name, .. } | Spec::Crates { name, .. } => name.clone(),
            Spec::Npm { name, .. } => name.trim_start_matches('@').replace('/', "__"),
            Spec::Debian { source, .. } => source.clone(),
        }
    }
}

/// One package of a dataset, as `dataset.toml` records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Package {
    /// The spec it was added with.
    pub spec: String,
    pub ecosystem: String,
    /// Its folder under the dataset (`DIR/NAME/`).
    pub folder: String,
    /// The version fetched (for `debian:SOURCE`, the archive's current one).
    pub version: String,
    /// The archive's file name and sha256 (for Debian, the `.dsc`, which lists the
    /// checksums of the tarballs it names).
    pub archive: String,
    pub sha256: String,
    /// The licence as the package's metadata states it (SPDX where it gives one);
    /// absent when it states none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub licence: Option<String>,
    /// The licence files in the folder, relative to it.
    #[serde(default)]
    pub licence_files: Vec<String>,
    /// The command that runs the package's tests, in its folder; absent when it ships
    /// none that typist knows how to run (give one with `--test-command`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_command: Option<String>,
    /// Why there is no test command, when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_tests: Option<String>,
    /// What the tests need, installed by `dataset add` (unless `--no-env`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<Env>,
    /// The client command that fetched the archive.
    pub fetched_with: String,
}

/// A package's test environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Env {
    /// `venv` (a Python virtual environment shared by the dataset's Python packages),
    /// `node_modules` (the package's own, by `npm install`), `cargo` (its dependencies
    /// fetched into cargo's cache).
    pub kind: String,
    /// Where, relative to the dataset (the venv's folder; the package's for the others).
    pub path: String,
    /// What was installed, as the installing commands were given it.
    pub installed: Vec<String>,
    /// Python: the folders, relative to the package's, put on PYTHONPATH so that the
    /// tests import the folder's code (`src` for a src layout, else `.`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pythonpath: Vec<String>,
}

/// The whole of `dataset.toml`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    #[serde(default, rename = "package")]
    pub packages: Vec<Package>,
}

impl Manifest {
    /// `DIR/dataset.toml`, or an empty one when there is none.
    pub fn read(dir: &Path) -> Result<Manifest> {
        let path = dir.join(MANIFEST);
        match std::fs::read_to_string(&path) {
            Ok(text) => toml::from_str(&text).with_context(|| {
                format!(
                    "{} is malformed: fix or remove it (its packages' folders stay)",
                    path.display()
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Manifest::default()),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// Writes it whole (a new file renamed over the old one).
    pub fn write(&self, dir: &Path) -> Result<()> {
        let text = format!(
            "# Written by `typist dataset add` (docs/cli.md#typist-dataset-add): a package table per spec.\n\n{}",
            toml::to_string(self).context("cannot write dataset.toml")?
        );
        let tmp = dir.join(format!("{MANIFEST}.tmp"));
        std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, dir.join(MANIFEST))
            .with_context(|| format!("cannot write {}", dir.join(MANIFEST).display()))
    }
}

/// How `add` treats each spec.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The test command for every package added (instead of the ecosystem's default).
    pub test_command: Option<String>,
    /// Install what the tests need (default on the command line).
    pub env: bool,
    /// The Python that runs pip and makes the dataset's venv (default `python3`).
    pub python: Option<PathBuf>,
}

/// What `add` did with one spec.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Added {
    /// Fetched and unpacked now.
    Added(Package),
    /// Recorded already, the archive unchanged (checked against the registry).
    Unchanged(Package),
    /// Recorded already; the registry could not be reached to check its archive.
    Unchecked { package: Package, why: String },
}

/// Fetches each spec into `dir` (made if missing) and records it in `dir/dataset.toml`.
/// Specs are handled in order; the manifest is written after each, so what was added
/// before an error stays recorded. The first error stops and is returned.
pub fn add(dir: &Path, specs: &[Spec], opts: &Options) -> Result<Vec<Added>> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot make {}", dir.display()))?;
    let mut manifest = Manifest::read(dir)?;
    let mut out = Vec::new();
    for spec in specs {
        let text = spec.to_string();
        let folder = spec.folder();
        if let Some(i) = manifest.packages.iter().position(|p| p.spec == text) {
            let checked = recheck(dir, spec, &manifest.packages[i], opts)?;
            // A package recorded without its environment (an add with --no-env, or
            // one whose environment failed) gets it now.
            let p = &manifest.packages[i];
            if opts.env && p.env.is_none() && p.test_command.is_some() {
                let env = make_env(spec, dir, &p.folder, opts).map_err(|e| {
                    e.context(format!(
                        "{text}: its test environment failed (add --no-env to keep it without)"
                    ))
                })?;
                manifest.packages[i].env = env;
                manifest.write(dir)?;
            }
            out.push(match checked {
                Added::Unchanged(_) => Added::Unchanged(manifest.packages[i].clone()),
                Added::Unchecked { why, .. } => Added::Unchecked {
                    package: manifest.packages[i].clone(),
                    why,
                },
                other => other,
            });
            continue;
        }
        if let Some(p) = manifest.packages.iter().find(|p| p.folder == folder) {
            bail!(
                "{text}: {}/{folder} holds {} already: one version of a package per dataset (remove its folder and its [[package]] from {MANIFEST} first)",
                dir.display(),
                p.spec
            );
        }
        if dir.join(&folder).exists() {
            bail!(
                "{text}: {} exists and {MANIFEST} does not record it: move it away or choose another dataset folder",
                dir.join(&folder).display()
            );
        }
        let scratch = Scratch::new(dir)?;
        let fetched = fetch(spec, dir, &scratch.path, opts)?;
        let unpacked = scratch.path.join("unpacked");
        unpack(&fetched, &unpacked, &scratch.path)
            .with_context(|| format!("{text}: cannot unpack {}", fetched.archive.display()))?;
        let licence = match spec {
            Spec::Debian { .. } => debian_licence(&unpacked),
            _ => fetched.licence.clone(),
        };
        let (licence_files, note) = licence_files(&unpacked, licence.as_deref())?;
        let (mut test_command, no_tests) = match &opts.test_command {
            Some(c) => (Some(c.clone()), None),
            None => default_tests(spec, &unpacked),
        };
        std::fs::rename(&unpacked, dir.join(&folder))
            .with_context(|| format!("{text}: cannot move it into {}", dir.display()))?;
        drop(scratch);
        let mut package = Package {
            spec: text.clone(),
            ecosystem: spec.ecosystem().to_string(),
            folder: folder.clone(),
            version: fetched.version,
            archive: file_name(&fetched.archive),
            sha256: fetched.sha256,
            licence,
            licence_files,
            test_command: None,
            no_tests,
            env: None,
            fetched_with: fetched.command,
        };
        if note {
            tracing::info!(package = %text, "no licence file in the archive: wrote LICENSE.typist.txt from its metadata");
        }
        if opts.env && test_command.is_some() {
            match make_env(spec, dir, &folder, opts) {
                Ok(env) => package.env = env,
                Err(e) => {
                    // Recorded without an environment (a second add makes it); the
                    // error says so.
                    package.test_command = test_command.take();
                    manifest.packages.push(package);
                    manifest.write(dir)?;
                    return Err(e.context(format!(
                        "{text}: fetched into {}, but its test environment failed (run `typist dataset add {} {text}` again to retry, or add --no-env)",
                        dir.join(&folder).display(),
                        dir.display()
                    )));
                }
            }
        }
        package.test_command = test_command.take();
        manifest.packages.push(package.clone());
        manifest.write(dir)?;
        out.push(Added::Added(package));
    }
    Ok(out)
}

/// A spec recorded already: fetch its archive again and compare.
fn recheck(dir: &Path, spec: &Spec, p: &Package, opts: &Options) -> Result<Added> {
    if !dir.join(&p.folder).is_dir() {
        bail!(
            "{spec}: {MANIFEST} records it but {} is missing: remove its [[package]] from {MANIFEST} and add it again",
            dir.join(&p.folder).display()
        );
    }
    let scratch = Scratch::new(dir)?;
    let fetched = match fetch(spec, dir, &scratch.path, opts) {
        Ok(f) => f,
        Err(e) if e.downcast_ref::<Unreachable>().is_some() => {
            return Ok(Added::Unchecked {
                package: p.clone(),
                why: format!("{e:#}"),
            });
        }
        Err(e) => return Err(e),
    };
    if fetched.sha256 != p.sha256 || file_name(&fetched.archive) != p.archive {
        bail!(
            "{spec}: the registry's archive changed: {} sha256 {} now, {} sha256 {} when it was added; nothing changed in {} (remove the package's folder and [[package]] to take the new one)",
            file_name(&fetched.archive),
            fetched.sha256,
            p.archive,
            p.sha256,
            dir.display()
        );
    }
    Ok(Added::Unchanged(p.clone()))
}

/// The registry could not be reached (no network, a refused or timed-out connection):
/// a second `add` then keeps what it has.
#[derive(Debug)]
pub struct Unreachable(pub String);

impl std::fmt::Display for Unreachable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unreachable {}

/// A scratch folder under `DIR/.typist/`, removed when dropped.
struct Scratch {
    path: PathBuf,
}

impl Scratch {
    fn new(dir: &Path) -> Result<Scratch> {
        let own = dir.join(OWN_DIR);
        std::fs::create_dir_all(&own).with_context(|| format!("cannot make {}", own.display()))?;
        let path = tempfile::Builder::new()
            .prefix("add-")
            .tempdir_in(&own)
            .with_context(|| format!("cannot make a scratch folder in {}", own.display()))?
            .keep();
        Ok(Scratch { path })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// An archive fetched into the scratch folder.
struct Fetched {
    /// The archive (for Debian, the `.dsc`).
    archive: PathBuf,
    sha256: String,
    version: String,
    licence: Option<String>,
    command: String,
}

fn sha256_file(p: &Path) -> Result<String> {
    let bytes = std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?;
    Ok(crate::digest::sha256_hex(&bytes))
}

/// Runs a registry client, its output captured; a failure is the client's own last
/// lines, and an `Unreachable` error when they say the network failed.
fn client(cmd: &mut Command, what: &str) -> Result<String> {
    let shown = format!(
        "{} {}",
        cmd.get_program().to_string_lossy(),
        cmd.get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    );
    tracing::debug!(command = %shown, "dataset add");
    let out = cmd.output().map_err(|e| {
        anyhow!(
            "{what}: cannot start `{}` ({e}): install it",
            cmd.get_program().to_string_lossy()
        )
    })?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        return Ok(stdout);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let text = format!("{stderr}\n{stdout}");
    let last: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let tail = last[last.len().saturating_sub(3)..].join(" / ");
    let lower = text.to_lowercase();
    let offline = [
        "network is unreachable",
        "connection refused",
        "could not resolve",
        "temporary failure in name resolution",
        "failed to establish a new connection",
        "enotfound",
        "econnrefused",
        "etimedout",
        "eai_again",
        "timed out",
        "unable to connect",
        "failed to fetch",
        "could not connect",
    ]
    .iter()
    .any(|m| lower.contains(m));
    if offline {
        return Err(anyhow::Error::new(Unreachable(format!(
            "{what}: the registry could not be reached ({tail})"
        ))));
    }
    bail!("{what}: `{shown}` failed: {tail}")
}

fn fetch(spec: &Spec, dir: &Path, scratch: &Path, opts: &Options) -> Result<Fetched> {
    let what = spec.to_string();
    let archives = scratch.join("archive");
    std::fs::create_dir_all(&archives)?;
    match spec {
        Spec::Pypi { name, version } => {
            let python = opts
                .python
                .clone()
                .unwrap_or_else(|| PathBuf::from("python3"));
            let mut cmd = Command::new(&python);
            cmd.args(["-m", "pip", "download", "--no-deps", "--no-binary", ":all:"])
                .args(["--disable-pip-version-check", "--no-input", "-d"])
                .arg(&archives)
                .arg(format!("{name}=={version}"))
                // Local wheel folders (PIP_FIND_LINKS) hold no sdists; the index does.
                .env_remove("PIP_FIND_LINKS");
            client(&mut cmd, &what).map_err(|e| not_found(e, &what, "PyPI"))?;
            let archive = only_file(&archives, &what)?;
            let licence = pkg_info_licence(&archive)?;
            Ok(Fetched {
                sha256: sha256_file(&archive)?,
                archive,
                version: version.clone(),
                licence,
                command: format!(
                    "{} -m pip download --no-deps --no-binary :all: {name}=={version}",
                    python.display()
                ),
            })
        }
        Spec::Npm { name, version } => {
            let mut cmd = Command::new("npm");
            cmd.args(["pack", "--json", "--ignore-scripts", "--pack-destination"])
                .arg(&archives)
                .arg(format!("{name}@{version}"))
                .current_dir(&archives);
            let stdout = client(&mut cmd, &what).map_err(|e| not_found(e, &what, "npm"))?;
            let archive = only_file(&archives, &what)?;
            let info: serde_json::Value = serde_json::from_str(stdout.trim())
                .ok()
                .and_then(|v: serde_json::Value| v.get(0).cloned())
                .unwrap_or_default();
            let licence = package_json_licence(&archive)?;
            Ok(Fetched {
                sha256: sha256_file(&archive)?,
                archive,
                version: info["version"].as_str().unwrap_or(version).to_string(),
                licence,
                command: format!("npm pack {name}@{version}"),
            })
        }
        Spec::Crates { name, version } => fetch_crate(name, version, &archives, &what),
        Spec::Debian { source, version } => {
            fetch_debian(dir, source, version.as_deref(), &archives, &what)
        }
    }
}

/// A client's "no such package or version" as one line naming the registry.
fn not_found(e: anyhow::Error, what: &str, registry: &str) -> anyhow::Error {
    if e.downcast_ref::<Unreachable>().is_some() {
        return e;
    }
    let text = format!("{e:#}").to_lowercase();
    if [
        "no matching distribution",
        "could not find a version",
        "404",
        "e404",
        "no matching version",
        "not found",
        "unable to find a source package",
        "candidate versions found which didn't match",
        "no matching package named",
    ]
    .iter()
    .any(|m| text.contains(m))
    {
        anyhow!("{what}: {registry} has no such package or version ({e:#})")
    } else {
        e
    }
}

fn only_file(dir: &Path, what: &str) -> Result<PathBuf> {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    match files.as_slice() {
        [one] => Ok(one.clone()),
        [] => bail!("{what}: the client wrote no archive"),
        many => bail!(
            "{what}: the client wrote {} files, not one archive",
            many.len()
        ),
    }
}

/// A crate, by cargo itself: a throwaway package depending on exactly `NAME =VERSION`,
/// `cargo fetch`ed (cargo resolves, downloads and checks the `.crate` against the
/// index's checksum, as for any build); the `.crate` is then copied from cargo's cache,
/// and its sha256 checked against the lock file's.
fn fetch_crate(name: &str, version: &str, archives: &Path, what: &str) -> Result<Fetched> {
    let project = archives.parent().unwrap_or(archives).join("cargo-fetch");
    std::fs::create_dir_all(project.join("src"))?;
    std::fs::write(
        project.join("Cargo.toml"),
        format!(
            "[package]\nname = \"typist-dataset-fetch\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[dependencies]\n{name} = \"={version}\"\n\n[workspace]\n"
        ),
    )?;
    std::fs::write(project.join("src/lib.rs"), "")?;
    let mut cmd = Command::new("cargo");
    cmd.arg("fetch")
        .arg("--manifest-path")
        .arg(project.join("Cargo.toml"))
        .current_dir(&project);
    client(&mut cmd, what).map_err(|e| not_found(e, what, "crates.io"))?;
    let lock: toml::Table = toml::from_str(&std::fs::read_to_string(project.join("Cargo.lock"))?)
        .context("cargo wrote an unreadable Cargo.lock")?;
    let entry = (lock.get("package").and_then(|p| p.as_array()))
        .into_iter()
        .flatten()
        .find(|p| {
            p.get("name").and_then(|n| n.as_str()) == Some(name)
                && p.get("version").and_then(|v| v.as_str()) == Some(version)
        })
        .ok_or_else(|| anyhow!("{what}: cargo resolved no {name} {version}"))?;
    let checksum = entry
        .get("checksum")
        .and_then(|c| c.as_str())
        .unwrap_or_default()
        .to_string();
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .ok_or_else(|| anyhow!("{what}: no CARGO_HOME and no HOME: cannot find cargo's cache"))?;
    let file = format!("{name}-{version}.crate");
    let cached = std::fs::read_dir(home.join("registry/cache"))
        .with_context(|| format!("{what}: cargo's cache {} is missing", home.display()))?
        .filter_map(|e| e.ok().map(|e| e.path().join(&file)))
        .find(|p| p.is_file() && sha256_file(p).is_ok_and(|s| s == checksum))
        .ok_or_else(|| anyhow!("{what}: {file} with sha256 {checksum} is not in cargo's cache"))?;
    let archive = archives.join(&file);
    std::fs::copy(&cached, &archive)?;
    let licence = cargo_toml_licence(&archive)?;
    Ok(Fetched {
        archive,
        sha256: checksum,
        version: version.to_string(),
        licence,
        command: format!("cargo fetch (a package depending on {name} = \"={version}\")"),
    })
}

/// The system's Debian archives as `deb-src` lines (one-line format), with their keys.
fn deb_src_lines() -> Result<String> {
    let mut out = String::new();
    let mut seen = std::collections::BTreeSet::new();
    // Debian's own archives only (another vendor's list, say a cloud SDK's, has no
    // Debian sources and may not be reachable).
    let mut push = |line: String| {
        let debian = line.contains("debian-archive-keyring")
            || line
                .split_whitespace()
                .any(|w| w.contains("://") && w.contains("debian"));
        if debian && seen.insert(line.clone()) {
            out.push_str(&line);
            out.push('\n');
        }
    };
    // deb822 files (`*.sources`), then one-line ones (`sources.list`, `*.list`).
    let mut files: Vec<PathBuf> = std::fs::read_dir("/etc/apt/sources.list.d")
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.push(PathBuf::from("/etc/apt/sources.list"));
    files.sort();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        if f.extension().is_some_and(|x| x == "sources") {
            for para in text.split("\n\n") {
                let field = |k: &str| {
                    para.lines()
                        .find_map(|l| l.strip_prefix(&format!("{k}:")))
                        .map(|v| v.trim().to_string())
                };
                let (Some(types), Some(uris), Some(suites)) =
                    (field("Types"), field("URIs"), field("Suites"))
                else {
                    continue;
                };
                if !types.split_whitespace().any(|t| t == "deb") {
                    continue;
                }
                let comps = field("Components").unwrap_or_default();
                let key = field("Signed-By")
                    .map(|k| format!("[signed-by={k}] "))
                    .unwrap_or_default();
                for uri in uris.split_whitespace() {
                    for suite in suites.split_whitespace() {
                        push(format!("deb-src {key}{uri} {suite} {comps}"));
                    }
                }
            }
        } else {
            for l in text.lines().map(str::trim) {
                if let Some(rest) = l.strip_prefix("deb ") {
                    push(format!("deb-src {rest}"));
                }
            }
        }
    }
    if out.is_empty() {
        bail!(
            "no Debian archive in /etc/apt (sources.list, sources.list.d): debian: specs need one"
        );
    }
    Ok(out)
}

fn fetch_debian(
    dir: &Path,
    source: &str,
    version: Option<&str>,
    archives: &Path,
    what: &str,
) -> Result<Fetched> {
    // apt reads a relative Dir:: path from `/`: every path it is given is absolute.
    let apt = std::path::absolute(dir)
        .with_context(|| format!("cannot resolve {}", dir.display()))?
        .join(OWN_DIR)
        .join("apt");
    let lists = apt.join("lists");
    let cache = apt.join("cache");
    let parts = apt.join("sources.list.d");
    for d in [
        &lists.join("partial"),
        &cache.join("archives/partial"),
        &parts,
    ] {
        std::fs::create_dir_all(d).with_context(|| format!("cannot make {}", d.display()))?;
    }
    let list = apt.join("sources.list");
    let lines = deb_src_lines()?;
    std::fs::write(&list, &lines)?;
    let opts = |cmd: &mut Command| {
        cmd.arg("-o")
            .arg(format!("Dir::Etc::SourceList={}", list.display()))
            .arg("-o")
            .arg(format!("Dir::Etc::SourceParts={}", parts.display()))
            .arg("-o")
            .arg(format!("Dir::State::Lists={}", lists.display()))
            .arg("-o")
            .arg(format!("Dir::Cache={}", cache.display()))
            .args(["-o", "Debug::NoLocking=1", "-o", "APT::Sandbox::User=root"])
            .args(["-o", "Acquire::Retries=1", "-q"]);
    };
    // The source indexes, fetched when there are none or they are a day old.
    let stale = std::fs::read_dir(&lists)
        .ok()
        .and_then(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().contains("_Sources"))
                .filter_map(|e| e.metadata().ok()?.modified().ok())
                .max()
        })
        .is_none_or(|t| t.elapsed().map_or(true, |a| a.as_secs() > 86_400));
    if stale {
        let mut cmd = Command::new("apt-get");
        opts(&mut cmd);
        cmd.arg("update");
        let out = client(&mut cmd, what);
        // apt-get update exits 0 with "W: Failed to fetch" when it reached nothing: no
        // source index then is the sign.
        let indexed = std::fs::read_dir(&lists).is_ok_and(|d| {
            d.filter_map(|e| e.ok())
                .any(|e| e.file_name().to_string_lossy().contains("_Sources"))
        });
        if !indexed {
            let why = match out {
                Ok(_) => "no source index came".to_string(),
                Err(e) => format!("{e:#}"),
            };
            return Err(anyhow::Error::new(Unreachable(format!(
                "{what}: the Debian archive could not be reached ({why})"
            ))));
        }
    }
    let mut cmd = Command::new("apt-get");
    opts(&mut cmd);
    cmd.args(["source", "--download-only"])
        .arg(match version {
            Some(v) => format!("{source}={v}"),
            None => source.to_string(),
        })
        .current_dir(archives);
    client(&mut cmd, what).map_err(|e| not_found(e, what, "Debian"))?;
    let dsc = std::fs::read_dir(archives)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "dsc"))
        .ok_or_else(|| anyhow!("{what}: apt-get source wrote no .dsc"))?;
    let text = std::fs::read_to_string(&dsc)?;
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}:")))
            .map(|v| v.trim().to_string())
    };
    Ok(Fetched {
        sha256: sha256_file(&dsc)?,
        version: field("Version").unwrap_or_default(),
        archive: dsc,
        licence: None, // read from debian/copyright once unpacked
        command: format!(
            "apt-get source --download-only {source}{} (deb-src list: {}/{OWN_DIR}/apt/sources.list)",
            version.map(|v| format!("={v}")).unwrap_or_default(),
            dir.display()
        ),
    })
}

/// Reads one member of a gzipped tarball (the first whose path ends with `suffix`, at
/// most one folder deep), by `tar`.
fn tar_member(archive: &Path, suffix: &str) -> Result<Option<String>> {
    let list = Command::new("tar")
        .arg("-tzf")
        .arg(archive)
        .output()
        .context("cannot run tar")?;
    if !list.status.success() {
        bail!(
            "{} is not a gzipped tarball: {}",
            archive.display(),
            String::from_utf8_lossy(&list.stderr).trim()
        );
    }
    let names = String::from_utf8_lossy(&list.stdout);
    let Some(member) = names
        .lines()
        .filter(|n| n.matches('/').count() <= 1)
        .find(|n| n.ends_with(suffix))
    else {
        return Ok(None);
    };
    let out = Command::new("tar")
        .arg("-xzOf")
        .arg(archive)
        .arg(member)
        .output()
        .context("cannot run tar")?;
    Ok(Some(String::from_utf8_lossy(&out.stdout).into_owned()))
}

/// The licence of an sdist, from its PKG-INFO: `License-Expression`, else a one-line
/// `License`, else the licence classifiers.
fn pkg_info_licence(archive: &Path) -> Result<Option<String>> {
    if !archive.to_string_lossy().ends_with(".tar.gz") {
        return Ok(None);
    }
    let Some(info) = tar_member(archive, "/PKG-INFO")? else {
        return Ok(None);
    };
    let field = |k: &str| {
        info.lines()
            .take_while(|l| !l.is_empty())
            .find_map(|l| l.strip_prefix(&format!("{k}: ")))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty() && v != "UNKNOWN")
    };
    if let Some(e) = field("License-Expression") {
        return Ok(Some(e));
    }
    if let Some(l) = field("License").filter(|l| l.len() <= 80) {
        return Ok(Some(l));
    }
    let classifiers: Vec<&str> = info
        .lines()
        .filter_map(|l| l.strip_prefix("Classifier: License :: "))
        .map(|c| c.rsplit(" :: ").next().unwrap_or(c))
        .collect();
    Ok((!classifiers.is_empty()).then(|| classifiers.join(" OR ")))
}

fn package_json_licence(archive: &Path) -> Result<Option<String>> {
    let Some(text) = tar_member(archive, "/package.json")? else {
        return Ok(None);
    };
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    Ok(match &v["license"] {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Object(o) => o.get("type").and_then(|t| t.as_str()).map(String::from),
        _ => v["licenses"].as_array().map(|a| {
            a.iter()
                .filter_map(|l| l["type"].as_str())
                .collect::<Vec<_>>()
                .join(" OR ")
        }),
    }
    .filter(|s| !s.is_empty()))
}

fn cargo_toml_licence(archive: &Path) -> Result<Option<String>> {
    let Some(text) = tar_member(archive, "/Cargo.toml")? else {
        return Ok(None);
    };
    let v: toml::Table = toml::from_str(&text).unwrap_or_default();
    let package = v.get("package").and_then(|p| p.as_table());
    Ok(package
        .and_then(|p| p.get("license"))
        .and_then(|l| l.as_str())
        .map(String::from))
}

/// The first `License:` of a DEP-5 `debian/copyright`'s `Files: *` paragraph (else the
/// first `License:` at all).
fn debian_licence(folder: &Path) -> Option<String> {
    let text = std::fs::read_to_string(folder.join("debian/copyright")).ok()?;
    let licence_of = |para: &str| {
        para.lines()
            .find_map(|l| l.strip_prefix("License:"))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    text.split("\n\n")
        .find(|p| p.lines().any(|l| l.trim() == "Files: *"))
        .and_then(licence_of)
        .or_else(|| licence_of(&text))
}

/// Unpacks a fetched archive into `into` (its one top folder stripped).
fn unpack(f: &Fetched, into: &Path, scratch: &Path) -> Result<()> {
    let name = file_name(&f.archive);
    if name.ends_with(".dsc") {
        let out = Command::new("dpkg-source")
            .args(["--no-check", "-x"])
            .arg(&f.archive)
            .arg(into)
            .current_dir(scratch)
            .output()
            .context("cannot run dpkg-source (apt-get install dpkg-dev)")?;
        if !out.status.success() {
            bail!(
                "dpkg-source -x failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        return Ok(());
    }
    if !(name.ends_with(".tar.gz") || name.ends_with(".tgz") || name.ends_with(".crate")) {
        bail!("{name}: only gzipped tarballs are unpacked (a .zip sdist is not supported)");
    }
    std::fs::create_dir_all(into)?;
    // GNU tar refuses members outside the target (leading '/', '..') by default.
    let out = Command::new("tar")
        .args(["-xzf"])
        .arg(&f.archive)
        .args(["--strip-components=1", "--no-same-owner", "-C"])
        .arg(into)
        .output()
        .context("cannot run tar")?;
    if !out.status.success() {
        bail!(
            "tar failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// The licence files at the folder's top (and `debian/copyright`); with none, one is
/// written from the metadata's licence (`LICENSE.typist.txt`, and the note flag).
fn licence_files(folder: &Path, licence: Option<&str>) -> Result<(Vec<String>, bool)> {
    let mut files: Vec<String> = std::fs::read_dir(folder)?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            let u = n.to_uppercase();
            ["LICENSE", "LICENCE", "COPYING", "NOTICE", "UNLICENSE"]
                .iter()
                .any(|p| u.starts_with(p))
        })
        .collect();
    if folder.join("debian/copyright").is_file() {
        files.push("debian/copyright".to_string());
    }
    files.sort();
    if !files.is_empty() {
        return Ok((files, false));
    }
    let text = match licence {
        Some(l) => format!(
            "The archive this folder was unpacked from holds no licence file; its metadata gives the licence as: {l}\n"
        ),
        None => "The archive this folder was unpacked from holds no licence file, and its metadata names no licence: check the package's terms before use.\n".to_string(),
    };
    std::fs::write(folder.join("LICENSE.typist.txt"), text)?;
    Ok((vec!["LICENSE.typist.txt".to_string()], true))
}

/// The ecosystem's default test command, or why there is none.
fn default_tests(spec: &Spec, folder: &Path) -> (Option<String>, Option<String>) {
    match spec {
        Spec::Pypi { .. } => {
            if has_python_tests(folder) {
                (Some("python -m pytest -q".to_string()), None)
            } else {
                (
                    None,
                    Some("the sdist ships no tests (no tests/ or test_*.py)".to_string()),
                )
            }
        }
        Spec::Npm { .. } => {
            let v: serde_json::Value = std::fs::read_to_string(folder.join("package.json"))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or_default();
            match v["scripts"]["test"].as_str() {
                Some(t) if !t.contains("no test specified") => (Some("npm test".to_string()), None),
                _ => (None, Some("package.json has no test script".to_string())),
            }
        }
        Spec::Crates { .. } => {
            if folder.join("tests").is_dir() || rust_has_tests(&folder.join("src")) {
                (Some("cargo test --offline".to_string()), None)
            } else {
                (None, Some("the crate ships no tests".to_string()))
            }
        }
        Spec::Debian { .. } => (
            None,
            Some(
                "Debian source packages have no one test command: give one with --test-command"
                    .to_string(),
            ),
        ),
    }
}

fn has_python_tests(folder: &Path) -> bool {
    ["tests", "test", "testing"]
        .iter()
        .any(|d| folder.join(d).is_dir())
        || ignore::WalkBuilder::new(folder)
            .max_depth(Some(3))
            .build()
            .filter_map(|e| e.ok())
            .any(|e| {
                let n = e.file_name().to_string_lossy();
                n.ends_with(".py") && (n.starts_with("test_") || n.ends_with("_test.py"))
            })
}

fn rust_has_tests(src: &Path) -> bool {
    ignore::WalkBuilder::new(src)
        .build()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .any(|e| std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("#[test]")))
}

/// Installs what a package's tests need: for Python, the dataset's venv
/// (`DIR/.typist/env/python`) with pytest, pytest-cov, coverage and the package's
/// dependencies (not the package: the tests import the folder's code, on PYTHONPATH);
/// for npm, its `node_modules` (`npm install
/// --ignore-scripts`); for a crate, its dependencies fetched (`cargo fetch`). A command
/// given with `--test-command` gets the ecosystem's environment too.
fn make_env(spec: &Spec, dir: &Path, folder: &str, opts: &Options) -> Result<Option<Env>> {
    let what = spec.to_string();
    let pkg = dir.join(folder);
    match spec {
        Spec::Pypi { .. } => {
            let rel = format!("{OWN_DIR}/env/python");
            let venv = dir.join(&rel);
            let py = venv.join("bin/python");
            if !py.exists() {
                let python = opts
                    .python
                    .clone()
                    .unwrap_or_else(|| PathBuf::from("python3"));
                client(Command::new(&python).args(["-m", "venv"]).arg(&venv), &what)?;
            }
            // The tools, and the package with its dependencies; then the package itself
            // out again, so that its code is always the folder's (PYTHONPATH), never an
            // installed copy (an editable install's import hook would win over the
            // working copy a test run makes).
            // From a copy: pip builds a local folder in place (`build/`, `*.egg-info`),
            // which would add files to the dataset.
            let copy = tempfile::Builder::new()
                .prefix("env-")
                .tempdir_in(dir.join(OWN_DIR))
                .context("cannot make a scratch folder")?;
            let cp = Command::new("cp")
                .arg("-a")
                .arg(format!("{}/.", pkg.display()))
                .arg(copy.path())
                .output()
                .context("cannot run cp")?;
            if !cp.status.success() {
                bail!(
                    "{what}: cannot copy {}: {}",
                    pkg.display(),
                    String::from_utf8_lossy(&cp.stderr).trim()
                );
            }
            let mut cmd = Command::new(&py);
            cmd.args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
                .args(["pytest", "pytest-cov", "coverage"])
                .arg(copy.path());
            client(&mut cmd, &what)?;
            drop(copy);
            let name = match spec {
                Spec::Pypi { name, .. } => name.clone(),
                _ => unreachable!(),
            };
            let mut cmd = Command::new(&py);
            cmd.args([
                "-m",
                "pip",
                "uninstall",
                "-y",
                "-q",
                "--disable-pip-version-check",
            ])
            .arg(&name);
            client(&mut cmd, &what)?;
            let pythonpath = if pkg.join("src").is_dir() && !pkg.join("src/__init__.py").exists() {
                vec!["src".to_string()]
            } else {
                vec![".".to_string()]
            };
            Ok(Some(Env {
                kind: "venv".to_string(),
                path: rel,
                installed: vec![
                    "pytest".to_string(),
                    "pytest-cov".to_string(),
                    "coverage".to_string(),
                    format!("{name}'s dependencies (the package itself comes from its folder)"),
                ],
                pythonpath,
            }))
        }
        Spec::Npm { .. } => {
            let mut cmd = Command::new("npm");
            cmd.args(["install", "--ignore-scripts", "--no-audit", "--no-fund"])
                .current_dir(&pkg);
            client(&mut cmd, &what)?;
            Ok(Some(Env {
                kind: "node_modules".to_string(),
                path: folder.to_string(),
                installed: vec![
                    "npm install --ignore-scripts (dependencies and devDependencies)".to_string(),
                ],
                pythonpath: Vec::new(),
            }))
        }
        Spec::Crates { .. } => {
            let mut cmd = Command::new("cargo");
            cmd.arg("fetch").current_dir(&pkg);
            client(&mut cmd, &what)?;
            Ok(Some(Env {
                kind: "cargo".to_string(),
                path: folder.to_string(),
                installed: vec!["cargo fetch (dependencies into cargo's cache)".to_string()],
                pythonpath: Vec::new(),
            }))
        }
        Spec::Debian { .. } => Ok(None),
    }
}

/// For each package of `dir`'s manifest, by folder: what a reader of the dataset needs.
pub fn packages(dir: &Path) -> Result<BTreeMap<String, Package>> {
    Ok(Manifest::read(dir)?
        .packages
        .into_iter()
        .map(|p| (p.folder.clone(), p))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_print_back() {
        for (text, want) in [
            (
                "pypi:six==1.16.0",
                Spec::Pypi {
                    name: "six".into(),
                    version: "1.16.0".into(),
                },
            ),
            (
                "npm:@types/node@20.1.0",
                Spec::Npm {
                    name: "@types/node".into(),
                    version: "20.1.0".into(),
                },
            ),
            (
                "crates:strsim@0.11.1",
                Spec::Crates {
                    name: "strsim".into(),
                    version: "0.11.1".into(),
                },
            ),
            (
                "debian:libcommons-lang3-java",
                Spec::Debian {
                    source: "libcommons-lang3-java".into(),
                    version: None,
                },
            ),
            (
                "debian:hello=2.10-3",
                Spec::Debian {
                    source: "hello".into(),
                    version: Some("2.10-3".into()),
                },
            ),
        ] {
            let spec: Spec = text.parse().unwrap();
            assert_eq!(spec, want);
            assert_eq!(spec.to_string(), text);
        }
        let scoped: Spec = "npm:@types/node@20.1.0".parse().unwrap();
        assert_eq!(scoped.folder(), "types__node");
    }

    #[test]
    fn malformed_specs_say_the_forms() {
        for (text, says) in [
            ("six", "names no registry"),
            ("pip:six==1", "unknown registry 'pip'"),
            ("pypi:six", "pins no version"),
            ("npm:left-pad", "pins no version"),
            ("crates:../x@1", "is not crates:NAME@VERSION"),
            ("pypi:six==../1", "is not pypi:NAME==VERSION"),
            ("debian:a/b", "is not debian:SOURCE"),
        ] {
            let e = text.parse::<Spec>().unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn the_manifest_reads_back_what_it_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let m = Manifest {
            packages: vec![Package {
                spec: "pypi:six==1.16.0".into(),
                ecosystem: "pypi".into(),
                folder: "six".into(),
                version: "1.16.0".into(),
                archive: "six-1.16.0.tar.gz".into(),
                sha256: "ab".repeat(32),
                licence: Some("MIT".into()),
                licence_files: vec!["LICENSE".into()],
                test_command: Some("python -m pytest -q".into()),
                no_tests: None,
                env: Some(Env {
                    kind: "venv".into(),
                    path: ".typist/env/python".into(),
                    installed: vec!["pytest".into()],
                    pythonpath: vec![".".into()],
                }),
                fetched_with: "python3 -m pip download".into(),
            }],
        };
        m.write(dir.path()).unwrap();
        assert_eq!(Manifest::read(dir.path()).unwrap(), m);
        std::fs::write(dir.path().join(MANIFEST), "[[package]]\nspec = 3\n").unwrap();
        let e = format!("{:#}", Manifest::read(dir.path()).unwrap_err());
        assert!(e.contains("dataset.toml is malformed"), "{e}");
    }

    #[test]
    fn deb_src_lines_follow_the_systems_archives() {
        // Every machine this runs on is Debian (docs/testing.md): its archives become
        // deb-src lines with their keys.
        let lines = deb_src_lines().unwrap();
        assert!(lines.lines().all(|l| l.starts_with("deb-src ")), "{lines}");
    }
}
