//! Uploaded code (docs/service.md): a VS Code extension (`.vsix`), a Neovim plugin (a zip
//! of its folder, with the Lua file Neovim loads and the extmark namespace its ghost text
//! is drawn in), or an LSP server's profile (TOML) with its program in a zip. Each is
//! checked whole, in memory, before anything is kept: its size, every path in its
//! archive (relative, inside its folder, no links), the bytes it unpacks to, the files
//! it must have (a `.vsix`'s manifests, the plugin's Lua file), and a profile's every
//! path inside the upload. Only then is it written into `uploads/KEY/`, a folder of its
//! own named by a random key (moved there whole, so a job never sees half of it). The
//! code itself runs only inside the sandbox (`src/sandbox.rs`).

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::editor::profile::Profile;

/// Largest file a submission may upload.
pub const MAX_UPLOAD: usize = 64 << 20;
/// Most bytes an archive may unpack to.
pub const MAX_UNPACKED: u64 = 512 << 20;
/// Most entries an archive may hold.
pub const MAX_ENTRIES: usize = 20_000;
/// Largest profile.
pub const MAX_PROFILE: usize = 64 << 10;

/// What a submission uploaded, as the multipart form or `typist submit` sends it.
#[derive(Debug, Default)]
pub struct Files {
    /// `extension`: a `.vsix`.
    pub extension: Option<Vec<u8>>,
    /// `neovim_plugin`: a zip of the plugin's folder.
    pub neovim_plugin: Option<Vec<u8>>,
    /// `neovim_config`: the Lua file in it that Neovim loads (default `init.lua`).
    pub neovim_config: Option<String>,
    /// `neovim_namespace`: the extmark namespaces of its ghost text (comma-separated).
    pub neovim_namespace: Option<String>,
    /// `profile`: an LSP server's profile (TOML).
    pub profile: Option<Vec<u8>>,
    /// `archive`: the server's program, a zip unpacked beside the profile.
    pub archive: Option<Vec<u8>>,
}

impl Files {
    pub fn any(&self) -> bool {
        self.extension.is_some() || self.neovim_plugin.is_some() || self.profile.is_some()
    }
}

/// Checked uploads, ready to be written: the files of `uploads/KEY/`, and what the
/// submission's spec keeps of them.
pub struct Checked {
    /// `(path in the folder, bytes, unpack as a zip into that folder)`.
    files: Vec<(String, Vec<u8>, bool)>,
    /// The spec's fields (`extension`, `neovim_plugin` or `profile`), the key added
    /// when written.
    pub spec: Value,
}

/// A zip entry's path: relative, nothing but normal components (no `..`, no root, no
/// drive), not empty.
fn entry_path(name: &str) -> Option<PathBuf> {
    if name.contains('\\') || name.contains('\0') {
        return None;
    }
    let p = Path::new(name);
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => out.push(s),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

/// A zip's entries, checked: every path inside the archive's folder, no links, at most
/// [`MAX_ENTRIES`], at most [`MAX_UNPACKED`] bytes unpacked (counted as read, not as the
/// archive claims). `what` names the upload in errors. With `into`, written there.
fn walk_zip(bytes: &[u8], what: &str, into: Option<&Path>) -> Result<Vec<PathBuf>> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| anyhow::anyhow!("{what}: not a zip archive ({e})"))?;
    if zip.len() > MAX_ENTRIES {
        bail!(
            "{what}: {} entries; at most {MAX_ENTRIES} are taken",
            zip.len()
        );
    }
    let mut paths = Vec::new();
    let mut total = 0u64;
    for i in 0..zip.len() {
        let mut f = zip
            .by_index(i)
            .map_err(|e| anyhow::anyhow!("{what}: entry {i} cannot be read ({e})"))?;
        let name = f.name().map(|n| n.to_string()).unwrap_or_default();
        let Some(rel) = entry_path(&name) else {
            bail!("{what}: entry {name:?} is outside its folder (absolute, or with ..): refused");
        };
        if f.is_symlink() {
            bail!("{what}: entry {name:?} is a symbolic link: links are refused");
        }
        if f.is_dir() {
            if let Some(d) = into {
                std::fs::create_dir_all(d.join(&rel))?;
            }
            continue;
        }
        let room = MAX_UNPACKED - total;
        let mut buf = Vec::new();
        (&mut f)
            .take(room + 1)
            .read_to_end(&mut buf)
            .map_err(|e| anyhow::anyhow!("{what}: entry {name:?} cannot be unpacked ({e})"))?;
        total += buf.len() as u64;
        if total > MAX_UNPACKED {
            bail!(
                "{what}: unpacks to more than {} MiB: refused",
                MAX_UNPACKED >> 20
            );
        }
        if let Some(d) = into {
            let to = d.join(&rel);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&to, &buf).with_context(|| format!("cannot write {}", to.display()))?;
            if let Some(mode) = f.unix_mode() {
                use std::os::unix::fs::PermissionsExt;
                // Owner's bits as given, less setuid/setgid/sticky; readable by all.
                let mode = (mode & 0o755) | 0o444;
                std::fs::set_permissions(&to, std::fs::Permissions::from_mode(mode))?;
            }
        }
        paths.push(rel);
    }
    Ok(paths)
}

/// A `.vsix`'s identity (`publisher.name`) and version, once checked: a zip with its
/// `extension.vsixmanifest` and `extension/package.json` (with `publisher`, `name`,
/// `version` and `engines.vscode`).
pub fn check_vsix(bytes: &[u8]) -> Result<(String, String)> {
    let what = "the extension (.vsix)";
    let paths = walk_zip(bytes, what, None)?;
    let has = |p: &str| paths.iter().any(|x| x == Path::new(p));
    if !has("extension.vsixmanifest") || !has("extension/package.json") {
        bail!(
            "{what}: no manifest (a .vsix holds extension.vsixmanifest and extension/package.json; pack it with vsce package or scripts/pack-vsix.py)"
        );
    }
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))?;
    let mut text = String::new();
    zip.by_name("extension/package.json")?
        .take(1 << 20)
        .read_to_string(&mut text)
        .map_err(|e| anyhow::anyhow!("{what}: extension/package.json is not text ({e})"))?;
    let pkg: Value = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{what}: extension/package.json is not JSON ({e})"))?;
    let field = |k: &str| {
        pkg[k]
            .as_str()
            .filter(|s| {
                !s.is_empty()
                    && s.len() <= 100
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            })
            .map(str::to_string)
    };
    let (Some(publisher), Some(name), Some(version)) =
        (field("publisher"), field("name"), field("version"))
    else {
        bail!("{what}: extension/package.json lacks a publisher, name or version");
    };
    if pkg["engines"]["vscode"].as_str().is_none() {
        bail!("{what}: extension/package.json names no engines.vscode: not a VS Code extension");
    }
    Ok((format!("{publisher}.{name}"), version))
}

/// The namespaces of `neovim_namespace`: comma-separated names.
fn namespaces(s: &str) -> Result<Vec<String>> {
    let v: Vec<String> = s
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect();
    if v.is_empty()
        || v.iter().any(|n| {
            n.len() > 100
                || !n
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.:/".contains(c))
        })
    {
        bail!(
            "`neovim_namespace`: the extmark namespaces the plugin draws its ghost text in (nvim_create_namespace's names), comma-separated"
        );
    }
    Ok(v)
}

/// A path a profile names, inside the upload: relative, no `..`.
fn inside(what: &str, p: &str) -> Result<PathBuf> {
    entry_path(p).with_context(|| {
        format!("the profile's {what} {p:?} is outside the upload (absolute, or with ..): refused")
    })
}

/// An uploaded profile, checked: its name, what it may not have (a connection to a
/// server elsewhere, model services, a sign-in), and every file it names inside the
/// upload (`command` a file in the archive unless `@typist` or a program's bare name,
/// no argument an absolute path or with `..`). The archive's paths are given.
fn check_profile(text: &str, archive: &[PathBuf]) -> Result<Profile> {
    let p: Profile = toml::from_str(text).map_err(|e| {
        anyhow::anyhow!(
            "the profile: not a valid profile ({}); see docs/profiles.md",
            e.to_string().lines().next().unwrap_or_default()
        )
    })?;
    if p.name.is_empty()
        || p.name.starts_with('.')
        || p.name.len() > 64
        || !p
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        bail!("the profile: `name` must be 1 to 64 letters, digits, -, _ or .");
    }
    if p.languages.is_empty() {
        bail!("the profile: `languages` lists none (the LSP language ids its server handles)");
    }
    if p.connect.is_some() || p.service.is_some() || p.signin.is_some() {
        bail!(
            "the profile: `connect`, `service` and `[signin]` are not taken from uploads (a job's server runs from its archive, signed out)"
        );
    }
    let in_archive = |what: &str, f: &str| -> Result<()> {
        let rel = inside(what, f)?;
        if !archive.contains(&rel) {
            bail!("the profile's {what} {f:?} is not a file of the uploaded archive");
        }
        Ok(())
    };
    if p.command.contains('/') {
        in_archive("command", &p.command)?;
    } else if p.command.is_empty() && p.neovim.is_none() && p.vscode.is_none() {
        bail!("the profile: no `command` (the server's program in the archive, e.g. bin/server)");
    }
    for a in &p.args {
        if a.starts_with('/') || Path::new(a).components().any(|c| c == Component::ParentDir) {
            bail!("the profile's argument {a:?} names a file outside the upload: refused");
        }
    }
    if let Some(n) = &p.neovim
        && let Some(c) = &n.config
    {
        in_archive("[neovim] config", c)?;
    }
    if let Some(v) = &p.vscode {
        for x in &v.extensions {
            in_archive("[vscode] extension", x)?;
        }
    }
    Ok(p)
}

/// Checks what a submission uploaded (one kind of code) for `editor`, whole and in
/// memory: the error says what to change.
pub fn check(files: Files, editor: &str) -> Result<Checked> {
    let kinds = usize::from(files.extension.is_some())
        + usize::from(files.neovim_plugin.is_some())
        + usize::from(files.profile.is_some());
    if kinds > 1 {
        bail!("upload one of `extension`, `neovim_plugin` and `profile` (with its `archive`)");
    }
    for (k, b) in [
        ("extension", &files.extension),
        ("neovim_plugin", &files.neovim_plugin),
        ("archive", &files.archive),
    ] {
        if b.as_ref().is_some_and(|b| b.len() > MAX_UPLOAD) {
            bail!("`{k}`: larger than {} MiB: refused", MAX_UPLOAD >> 20);
        }
    }
    if files.archive.is_some() && files.profile.is_none() {
        bail!("`archive`: a server's program comes with its `profile`");
    }
    if let Some(vsix) = files.extension {
        if editor != "vscode" {
            bail!("`extension`: a .vsix runs in VS Code: set `editor` to vscode");
        }
        let (id, version) = check_vsix(&vsix)?;
        let sha = crate::digest::sha256_hex(&vsix);
        return Ok(Checked {
            files: vec![("extension.vsix".into(), vsix, false)],
            spec: json!({"extension": {"id": id, "version": version, "sha256": sha}}),
        });
    }
    if let Some(zip) = files.neovim_plugin {
        if editor != "neovim" {
            bail!("`neovim_plugin`: a Neovim plugin runs in Neovim: set `editor` to neovim");
        }
        let config = files
            .neovim_config
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .unwrap_or("init.lua")
            .to_string();
        let ns = namespaces(files.neovim_namespace.as_deref().unwrap_or_default())?;
        let what = "the Neovim plugin (zip)";
        let paths = walk_zip(&zip, what, None)?;
        let rel = entry_path(&config)
            .with_context(|| format!("`neovim_config` {config:?}: a path inside the plugin"))?;
        if !config
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c))
        {
            bail!("`neovim_config` {config:?}: letters, digits, ., _, - and / only");
        }
        if !config.ends_with(".lua") || !paths.contains(&rel) {
            bail!(
                "`neovim_config` {config:?}: no such .lua file in the plugin (it holds {} files)",
                paths.len()
            );
        }
        let sha = crate::digest::sha256_hex(&zip);
        return Ok(Checked {
            files: vec![("plugin".into(), zip, true)],
            spec: json!({"neovim_plugin": {"config": config, "namespaces": ns, "sha256": sha}}),
        });
    }
    if let Some(profile) = files.profile {
        if profile.len() > MAX_PROFILE {
            bail!("`profile`: larger than {} KiB: refused", MAX_PROFILE >> 10);
        }
        let text =
            String::from_utf8(profile).map_err(|_| anyhow::anyhow!("`profile`: not UTF-8 text"))?;
        let paths = match &files.archive {
            Some(a) => walk_zip(a, "the server's archive (zip)", None)?,
            None => Vec::new(),
        };
        let p = check_profile(&text, &paths)?;
        let mut spec = json!({"profile": {"name": p.name, "sha256": crate::digest::sha256_hex(text.as_bytes())}});
        let mut kept = vec![("profile.toml".to_string(), text.into_bytes(), false)];
        if let Some(a) = files.archive {
            spec["profile"]["archive_sha256"] = json!(crate::digest::sha256_hex(&a));
            kept.push(("server".into(), a, true));
        }
        return Ok(Checked { files: kept, spec });
    }
    bail!("nothing uploaded")
}

impl Checked {
    /// Writes the uploads into `uploads/KEY/` of `data` (a new random key), whole or not
    /// at all; the spec's fields with the key.
    pub fn store(self, data: &Path) -> Result<Value> {
        let root = data.join("uploads");
        std::fs::create_dir_all(&root)
            .with_context(|| format!("cannot make {}", root.display()))?;
        let key = super::token::new_token()?
            .trim_start_matches("typ_")
            .chars()
            .take(24)
            .collect::<String>();
        let staging = root.join(format!(".new-{key}"));
        let written = (|| -> Result<()> {
            std::fs::create_dir(&staging)?;
            for (name, bytes, unpack) in &self.files {
                let to = staging.join(name);
                if *unpack {
                    std::fs::create_dir(&to)?;
                    walk_zip(bytes, name, Some(&to))?;
                } else {
                    std::fs::write(&to, bytes)
                        .with_context(|| format!("cannot write {}", to.display()))?;
                }
            }
            // Readable by every job's own user, whatever the service's umask.
            readable_by_all(&staging)?;
            std::fs::rename(&staging, root.join(&key))?;
            Ok(())
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e.context("the upload could not be kept"));
        }
        let mut spec = self.spec;
        if let Some(o) = spec.as_object_mut().and_then(|o| o.values_mut().next()) {
            o["upload"] = json!(key);
        }
        Ok(spec)
    }
}

/// Makes every folder under `dir` (itself included) 0755 and every file readable by
/// all: a job's sandbox runs as a user of its own.
fn readable_by_all(dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755))?;
        for e in std::fs::read_dir(&d)? {
            let e = e?;
            let m = std::fs::symlink_metadata(e.path())?;
            if m.is_dir() {
                stack.push(e.path());
            } else if m.is_file() {
                let mode = (m.permissions().mode() & 0o755) | 0o444;
                std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(mode))?;
            }
        }
    }
    Ok(())
}

/// The folder of upload `key`, when the key is one the service made.
pub fn folder(data: &Path, key: &str) -> Result<PathBuf> {
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_hexdigit()) {
        bail!("upload key {key:?} is not one of the service's");
    }
    let d = data.join("uploads").join(key);
    if !d.is_dir() {
        bail!("the upload {} is missing", d.display());
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A zip of `(name, bytes)` entries, each a file (`Some(mode)`: with Unix mode bits,
    /// a link when they say so).
    pub fn zip_of(entries: &[(&str, &[u8], Option<u32>)]) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, bytes, mode) in entries {
            let mut o = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated);
            if let Some(m) = mode {
                o = o.unix_permissions(*m);
            }
            if mode.is_some_and(|m| m & 0o170000 == 0o120000) {
                w.add_symlink(*name, std::str::from_utf8(bytes).unwrap(), o)
                    .unwrap();
            } else {
                w.start_file(*name, o).unwrap();
                w.write_all(bytes).unwrap();
            }
        }
        w.finish().unwrap().into_inner()
    }

    fn vsix(pkg: &str) -> Vec<u8> {
        zip_of(&[
            ("extension.vsixmanifest", b"<PackageManifest/>", None),
            ("extension/package.json", pkg.as_bytes(), None),
            (
                "extension/extension.js",
                b"exports.activate = () => {};",
                None,
            ),
        ])
    }

    const PKG: &str = r#"{"publisher": "acme", "name": "ghost", "version": "1.2.3", "engines": {"vscode": "^1.90.0"}}"#;

    #[test]
    fn a_vsix_is_taken_only_whole_with_its_manifests() {
        assert_eq!(
            check_vsix(&vsix(PKG)).unwrap(),
            ("acme.ghost".to_string(), "1.2.3".to_string())
        );
        let no_manifest = zip_of(&[("extension/package.json", PKG.as_bytes(), None)]);
        assert!(
            check_vsix(&no_manifest)
                .unwrap_err()
                .to_string()
                .contains("no manifest")
        );
        let e = check_vsix(&vsix(r#"{"name": "x"}"#))
            .unwrap_err()
            .to_string();
        assert!(e.contains("publisher"), "{e}");
        let e = check_vsix(b"not a zip").unwrap_err().to_string();
        assert!(e.contains("not a zip"), "{e}");
        let e = check(
            Files {
                extension: Some(vsix(PKG)),
                ..Files::default()
            },
            "neovim",
        )
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains("set `editor` to vscode"), "{e}");
    }

    #[test]
    fn archives_that_escape_link_or_unpack_too_big_are_refused() {
        for (name, says) in [
            ("../evil.js", "outside its folder"),
            ("/etc/cron.d/evil", "outside its folder"),
            ("extension/../../evil", "outside its folder"),
        ] {
            let z = zip_of(&[(name, b"x", None)]);
            let e = walk_zip(&z, "up", None).unwrap_err().to_string();
            assert!(e.contains(says), "{name}: {e}");
        }
        let link = zip_of(&[("extension/home", b"/root", Some(0o120777))]);
        assert!(
            walk_zip(&link, "up", None)
                .unwrap_err()
                .to_string()
                .contains("symbolic link")
        );
        // A bomb: 600 MiB of zeros that deflate to under a megabyte.
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        w.start_file(
            "zeros",
            zip::write::SimpleFileOptions::default().large_file(true),
        )
        .unwrap();
        let mb = vec![0u8; 1 << 20];
        for _ in 0..600 {
            w.write_all(&mb).unwrap();
        }
        let bomb = w.finish().unwrap().into_inner();
        assert!(bomb.len() < 2 << 20, "{}", bomb.len());
        let e = walk_zip(&bomb, "up", None).unwrap_err().to_string();
        assert!(e.contains("more than 512 MiB"), "{e}");
    }

    #[test]
    fn a_profile_names_nothing_outside_its_upload() {
        let archive = vec![PathBuf::from("bin/server")];
        let base = "name = \"up\"\ndialect = \"inline\"\nlanguages = [\"python\"]\n";
        let ok = format!("{base}command = \"bin/server\"\nargs = [\"--stdio\"]\n");
        assert_eq!(check_profile(&ok, &archive).unwrap().name, "up");
        assert!(
            check_profile(
                &format!("{base}command = \"@typist\"\nargs = [\"host\"]\n"),
                &[]
            )
            .is_ok()
        );
        for (extra, says) in [
            ("command = \"/usr/bin/python3\"", "outside the upload"),
            ("command = \"../../bin/sh\"", "outside the upload"),
            (
                "command = \"bin/other\"",
                "not a file of the uploaded archive",
            ),
            (
                "command = \"bin/server\"\nargs = [\"/root/.ssh/id_rsa\"]",
                "outside the upload",
            ),
            (
                "command = \"bin/server\"\nconnect = \"tcp://10.0.0.1:9\"",
                "not taken from uploads",
            ),
            (
                "command = \"bin/server\"\n[neovim]\nconfig = \"/etc/passwd\"",
                "outside the upload",
            ),
        ] {
            let e = check_profile(&format!("{base}{extra}\n"), &archive)
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{extra}: {e}");
        }
    }

    #[test]
    fn uploads_are_kept_whole_in_a_folder_of_their_own() {
        let data = tempfile::tempdir().unwrap();
        let plugin = zip_of(&[
            ("init.lua", b"require('ghost').setup()", None),
            ("lua/ghost.lua", b"return {setup = function() end}", None),
        ]);
        let c = check(
            Files {
                neovim_plugin: Some(plugin.clone()),
                neovim_namespace: Some("ghost, ghost.b".into()),
                ..Files::default()
            },
            "neovim",
        )
        .unwrap();
        let spec = c.store(data.path()).unwrap();
        let key = spec["neovim_plugin"]["upload"].as_str().unwrap();
        let dir = folder(data.path(), key).unwrap();
        assert!(dir.join("plugin/lua/ghost.lua").is_file());
        assert_eq!(
            spec["neovim_plugin"]["namespaces"],
            json!(["ghost", "ghost.b"])
        );
        assert!(folder(data.path(), "../x").is_err());
        let e = check(
            Files {
                neovim_plugin: Some(plugin),
                neovim_config: Some("missing.lua".into()),
                neovim_namespace: Some("ghost".into()),
                ..Files::default()
            },
            "neovim",
        )
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains("no such .lua file"), "{e}");
    }
}
