//! Server profiles: one TOML file per server or assistant in `editors/`, saying how to
//! start it, what to tell it, which dialect it speaks and how to know it is ready.
//!
//! A profile is read from TOML and written back (`Profile::to_toml`). A server's program
//! is found in the servers folder (`.servers/`), then on `PATH`. With `connect` typist
//! attaches to a server already running instead of starting one, and never restarts it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How suggestions are asked for and read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DialectKind {
    /// LSP 3.18 `textDocument/inlineCompletion`.
    Inline,
    /// `textDocument/completion`, ranked as an editor shows it.
    Completion,
    /// Copilot: inline completion plus `didFocus`, version and formatting options.
    Copilot,
    /// lsp-ai (and tabby-agent 1.5): `textDocument/completion` whose first item carries
    /// the generated text, inserted at the cursor.
    LspAi,
    /// lsp-ai's own `textDocument/generation` (`model` and `parameters` from
    /// `request_params`), answered with `{generatedText}`.
    LspAiGeneration,
    /// llm-ls: `llm-ls/getCompletions`.
    LlmLs,
}

impl DialectKind {
    /// The server capability (a key of `ServerCapabilities` in the `initialize` answer)
    /// this dialect's request needs, when the request is a standard one.
    pub fn required_capability(self) -> Option<&'static str> {
        match self {
            DialectKind::Inline | DialectKind::Copilot => Some("inlineCompletionProvider"),
            DialectKind::Completion | DialectKind::LspAi => Some("completionProvider"),
            DialectKind::LspAiGeneration | DialectKind::LlmLs => None,
        }
    }
}

/// One service a profile needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceSpec {
    /// Services of the same name are started once per run and shared.
    pub name: String,
    /// A program name (found like a server's: `.servers/`, then `PATH`), a path, or
    /// `@typist`.
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// Answers 200 when the service is ready.
    pub health: String,
    #[serde(default = "default_service_startup_ms")]
    pub startup_timeout_ms: u64,
    /// The model file it serves: hashed into the manifest.
    #[serde(default)]
    pub model: Option<String>,
    /// Arguments that make the program print its version (recorded in the manifest).
    #[serde(default)]
    pub version_args: Option<Vec<String>>,
}

fn default_service_startup_ms() -> u64 {
    120_000
}

/// `[service]` or `[[service]]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(Box<ServiceSpec>),
    Many(Vec<ServiceSpec>),
}

impl OneOrMany {
    pub fn list(&self) -> Vec<&ServiceSpec> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v.iter().collect(),
        }
    }
}

/// When the server's answers can be trusted after a document is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ReadinessRule {
    /// Ask at once.
    #[default]
    None,
    /// Wait until every `$/progress` the server began has ended.
    Progress,
    /// rust-analyzer: wait for `experimental/serverStatus` with `quiescent: true`.
    ServerStatus,
    /// Ask repeatedly until two answers in a row are the same.
    Stable,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Readiness {
    #[serde(default)]
    pub rule: ReadinessRule,
    /// Upper bound on the wait, whatever the rule.
    #[serde(default = "default_ready_ms")]
    pub max_wait_ms: u64,
    /// For `stable`: at most this many asks.
    #[serde(default = "default_ready_tries")]
    pub max_tries: u32,
}

impl Default for Readiness {
    fn default() -> Self {
        Readiness {
            rule: ReadinessRule::None,
            max_wait_ms: default_ready_ms(),
            max_tries: default_ready_tries(),
        }
    }
}

fn default_ready_ms() -> u64 {
    30_000
}
fn default_ready_tries() -> u32 {
    6
}
fn default_timeout_ms() -> u64 {
    10_000
}
fn default_init_timeout_ms() -> u64 {
    60_000
}

/// A tiny document `doctor` opens to ask for one suggestion at its end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    pub file: String,
    pub text: String,
    /// An item the answer should contain (reported, not enforced).
    #[serde(default)]
    pub expect: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// A program name (looked up in the server prefix, then `PATH`) or a path. Empty
    /// (left out) only for a Neovim plugin with no server (`[neovim] config`).
    #[serde(default)]
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Give the server a fresh `HOME` (and XDG dirs) inside the session's temp folder.
    #[serde(default)]
    pub sandbox_home: bool,
    pub dialect: DialectKind,
    /// LSP language ids this server handles.
    pub languages: Vec<String>,
    /// File extensions (without dot) this server handles.
    #[serde(default)]
    pub extensions: Vec<String>,
    #[serde(default = "default_timeout_ms")]
    pub request_timeout_ms: u64,
    #[serde(default = "default_init_timeout_ms")]
    pub init_timeout_ms: u64,
    /// After this many timeouts in a row, the server is taken as hung: restarted with the
    /// editor's state, and the case asked once more (as after a crash). 0: never.
    #[serde(default = "default_restart_after_timeouts")]
    pub restart_after_timeouts: u32,
    #[serde(default)]
    pub readiness: Readiness,
    #[serde(default = "empty_object")]
    pub initialization_options: Value,
    /// Sent with `workspace/didChangeConfiguration` and answered to `workspace/configuration`.
    #[serde(default = "empty_object")]
    pub settings: Value,
    /// Extra fields merged into every suggestion request (llm-ls needs model, url, …).
    #[serde(default = "empty_object")]
    pub request_params: Value,
    /// Files written into the workspace before the server starts (go.mod, compile_flags.txt).
    #[serde(default)]
    pub workspace_files: BTreeMap<String, String>,
    /// Files written into the sandbox HOME (with `sandbox_home`) before the server
    /// starts: configuration that a server reads only from there.
    #[serde(default)]
    pub home_files: BTreeMap<String, String>,
    #[serde(default)]
    pub install_hint: String,
    #[serde(default)]
    pub probe: Option<Probe>,
    /// Model services started for this profile before its first session (`service.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<OneOrMany>,
    /// Attach to a server already running there (`tcp://HOST:PORT`, `unix:PATH` or a
    /// socket path) instead of starting `command`: each session opens its own
    /// connection, and a server that is gone is reported, never restarted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<String>,
    /// What a real Neovim loads for this assistant (`--editor neovim`): a plugin's Lua
    /// configuration and the extmark namespaces its ghost text is drawn in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neovim: Option<NeovimPlugin>,
    /// What a real VS Code installs for this assistant (`--editor vscode`): extensions
    /// and their settings. With no `command`, the extensions are the assistant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vscode: Option<VscodeExtensions>,
    /// How the assistant signs in (`typist login`): its sessions start from its vault
    /// entry, and a run without one is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signin: Option<Signin>,
    /// Where the profile was loaded from.
    #[serde(skip)]
    pub source: PathBuf,
}

/// `[neovim]`: a plugin for this assistant, as `--editor-config` and
/// `--editor-namespace` give one for a run (the flags win).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NeovimPlugin {
    /// A Lua file Neovim loads after typist's own setup; relative to the profile's file
    /// (read as an absolute path).
    #[serde(default)]
    pub config: Option<String>,
    /// Extmark namespaces read for the ghost text instead of Neovim's own inline
    /// completion (which is then not turned on).
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// The highlight groups of the suggestion's chunks, as `--editor-highlight` gives
    /// them (empty: every chunk).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub highlights: Vec<String>,
    /// sha256 of `config`'s bytes, computed when the profile is read (in the manifest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_sha256: Option<String>,
}

/// `[signin]`: how an assistant signs in, for `typist login` and the vault
/// (`src/vault.rs`, `docs/signin.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Signin {
    /// Files or folders, relative to the session's `HOME` (its XDG folders are under
    /// it), that hold the credential: what the vault keeps and gives every session
    /// back. VS Code's secret storage is kept whatever this says.
    #[serde(default)]
    pub files: Vec<String>,
    /// The sign-in command `typist login` runs when no `--command` is given: a
    /// palette command's title or id in VS Code, an Ex command in Neovim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Neovim: a Lua chunk that returns `true` when the plugin is signed in, else a
    /// string saying why not (the plugin's own state); asked before a run and after an
    /// empty answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neovim_status: Option<String>,
    /// The assistant signs in with GitHub: its sessions get the GitHub sign-in of
    /// `typist login copilot` (VS Code: through typist's own `github` authentication
    /// provider) instead of an entry of their own.
    #[serde(default)]
    pub github: bool,
}

/// `[vscode]`: extensions for this assistant, as `--extension` gives them for a run
/// (the flag's are added).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VscodeExtensions {
    /// Each a `.vsix` file (relative to the profile's file, or a file name in a server
    /// prefix's `vscode/` folder; read as an absolute path) or a marketplace id
    /// (`publisher.name`, installed by code-server from its gallery).
    #[serde(default)]
    pub extensions: Vec<String>,
    /// User settings the extensions need, added to those typist writes.
    #[serde(default = "empty_object")]
    pub settings: Value,
}

/// A `.vsix` file named by a profile or `--extension`, as an absolute path: relative to
/// `base` (the profile's folder, or the working folder), else a file of that name in a
/// server prefix's `vscode/` folder; an id (`publisher.name`, `publisher.name@1.2.3`) is
/// kept as it is. Anything else is an error naming it.
pub fn resolve_extension(entry: &str, base: Option<&Path>) -> Result<String> {
    let here = base.map_or_else(|| PathBuf::from(entry), |d| d.join(entry));
    if here.is_file() {
        let p = std::fs::canonicalize(&here).unwrap_or(here);
        return Ok(p.display().to_string());
    }
    if here.is_dir() {
        bail!(
            "VS Code extension {}: a folder; pack it into a .vsix first (scripts/pack-vsix.py FOLDER OUT.vsix, or vsce package)",
            here.display()
        );
    }
    if !entry.contains('/')
        && let Some(p) = server_prefixes()
            .into_iter()
            .map(|pre| pre.join("vscode").join(entry))
            .find(|p| p.is_file())
    {
        let p = std::fs::canonicalize(&p).unwrap_or(p);
        return Ok(p.display().to_string());
    }
    let id = entry.split('@').next().unwrap_or("");
    let is_id = id.split('.').count() == 2
        && id.split('.').all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        });
    if !entry.ends_with(".vsix") && is_id {
        return Ok(entry.to_string());
    }
    bail!(
        "VS Code extension {entry}: no such .vsix file ({}), and not a marketplace id (publisher.name)",
        here.display()
    )
}

fn default_restart_after_timeouts() -> u32 {
    3
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

impl Profile {
    pub fn parse(text: &str, source: &Path) -> Result<Profile> {
        let mut p: Profile = toml::from_str(text)
            .with_context(|| format!("invalid profile {}", source.display()))?;
        p.source = source.to_path_buf();
        p.register_secrets();
        if p.languages.is_empty() {
            bail!("profile {} lists no languages", source.display());
        }
        p.check_connect()?;
        p.pin_neovim_config(source)?;
        if let Some(vs) = p.vscode.as_mut() {
            let base = source.parent();
            vs.extensions = vs
                .extensions
                .iter()
                .map(|e| resolve_extension(e, base))
                .collect::<Result<_>>()
                .with_context(|| format!("profile {}", source.display()))?;
        }
        if p.command.is_empty() && p.connect.is_none() && !p.is_plugin_only() {
            bail!(
                "profile {} has no command: only a Neovim plugin ([neovim] config) or VS Code extensions ([vscode]) run with no server",
                source.display()
            );
        }
        Ok(p)
    }

    /// The profile as TOML, as `editors/NAME.toml` would hold it: [`Profile::parse`]
    /// reads it back to an equal profile (but for `source`).
    pub fn to_toml(&self) -> Result<String> {
        toml::to_string_pretty(self)
            .with_context(|| format!("cannot write profile {} as TOML", self.name))
    }

    /// An editor's plugin or extensions with no server at all: no command, only
    /// `[neovim] config` or `[vscode]`.
    pub fn is_plugin_only(&self) -> bool {
        self.command.is_empty()
            && self.connect.is_none()
            && (self.neovim.as_ref().is_some_and(|n| n.config.is_some()) || self.vscode.is_some())
    }

    /// What a profile with no server runs in: "neovim" (a plugin) or "vscode"
    /// (extensions); `None` for a profile with a server.
    pub fn plugin_editor(&self) -> Option<&'static str> {
        if !self.is_plugin_only() {
            None
        } else if self.neovim.as_ref().is_some_and(|n| n.config.is_some()) {
            Some("neovim")
        } else {
            Some("vscode")
        }
    }

    /// `[neovim] config` as an absolute path (relative to the profile's file) with the
    /// sha256 of its bytes.
    fn pin_neovim_config(&mut self, source: &Path) -> Result<()> {
        let Some(nv) = self.neovim.as_mut() else {
            return Ok(());
        };
        let Some(config) = &nv.config else {
            return Ok(());
        };
        let path = source
            .parent()
            .map_or_else(|| PathBuf::from(config), |d| d.join(config));
        let bytes = std::fs::read(&path).with_context(|| {
            format!(
                "profile {}: cannot read [neovim] config {}",
                source.display(),
                path.display()
            )
        })?;
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        nv.config = Some(path.display().to_string());
        nv.config_sha256 = Some(crate::digest::sha256_hex(&bytes));
        Ok(())
    }

    /// A `connect` address, when there is one, is one typist can attach to.
    pub fn check_connect(&self) -> Result<()> {
        if let Some(a) = &self.connect {
            crate::lsp::Address::parse(a)
                .map_err(|e| anyhow::anyhow!("profile {}: connect: {e}", self.name))?;
        }
        Ok(())
    }

    /// The server's program as found, or the error that names what is missing and how
    /// to install it.
    pub fn server_program(&self) -> Result<PathBuf, super::error::SessionError> {
        self.resolve_command()
            .ok_or_else(|| super::error::SessionError::Missing {
                server: self.name.clone(),
                command: self.command.clone(),
                hint: self.install_hint.clone(),
            })
    }

    /// A server typist starts itself can be restarted after a crash or a hang; an
    /// attached one (`connect`) cannot: its failures are reported instead.
    pub fn can_restart(&self) -> bool {
        self.connect.is_none()
    }

    pub fn load(path: &Path) -> Result<Profile> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read profile {}", path.display()))?;
        Profile::parse(&text, path)
    }

    /// Makes every secret this profile holds or names known to [`crate::secrets`]:
    /// token-like values in its options, settings, request parameters and home files,
    /// secret-named variables of its `env`, and the variables its arguments name after
    /// `--api-key-env`.
    pub(crate) fn register_secrets(&self) {
        use crate::secrets;
        for v in [
            &self.initialization_options,
            &self.settings,
            &self.request_params,
        ] {
            secrets::register_value(v);
        }
        for (k, v) in &self.env {
            if secrets::is_secret_name(k) {
                secrets::register(v);
            }
        }
        for text in self.home_files.values() {
            if let Ok(v) = serde_json::from_str::<Value>(text) {
                secrets::register_value(&v);
            }
        }
        for pair in self.args.windows(2) {
            if pair[0] == "--api-key-env"
                && let Ok(v) = std::env::var(&pair[1])
            {
                secrets::register(&v);
            }
        }
    }

    /// Where the program is, or `None` when it is not installed.
    pub fn resolve_command(&self) -> Option<PathBuf> {
        resolve_program(&self.command)
    }

    pub fn request_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.request_timeout_ms)
    }

    /// This profile as a fresh server's first request should be asked: that request
    /// loads what a run's later ones find loaded (jedi's first completion of `os.` takes
    /// 3 s on an idle machine, over 10 s on a busy one), so its deadline is the
    /// readiness wait's when that is longer than the request deadline. `typist doctor`
    /// probes with it; a run does not (its deadline is one of its conditions).
    pub fn cold_start(&self) -> Profile {
        let mut p = self.clone();
        p.request_timeout_ms = p.request_timeout_ms.max(p.readiness.max_wait_ms);
        p
    }

    /// The LSP language id for a file extension, when this profile handles it.
    pub fn language_for(&self, path: &Path) -> Option<String> {
        let ext = path.extension()?.to_str()?;
        if !self.extensions.iter().any(|e| e == ext) {
            return None;
        }
        Some(
            language_id_for_extension(ext)
                .unwrap_or(&self.languages[0])
                .to_string(),
        )
    }
}

/// The LSP language id of a file extension (`crate::lang`'s table).
pub fn language_id_for_extension(ext: &str) -> Option<&'static str> {
    crate::lang::extension(ext).map(|e| e.lsp_id)
}

/// Folders that hold installed servers: `$TYPIST_SERVERS`, `./.servers`, and the
/// `.servers` of the source tree this binary was built from.
pub fn server_prefixes() -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Some(p) = std::env::var_os("TYPIST_SERVERS") {
        v.push(PathBuf::from(p));
    }
    v.push(PathBuf::from(".servers"));
    v.push(Path::new(env!("CARGO_MANIFEST_DIR")).join(".servers"));
    v
}

/// `@typist` in a profile names this program itself (for `typist host`): `$TYPIST_EXE`,
/// else the running executable when it is `typist`, else the source tree's build.
pub fn typist_exe() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TYPIST_EXE") {
        return Some(PathBuf::from(p));
    }
    if let Ok(me) = std::env::current_exe()
        && me.file_name().is_some_and(|n| n == "typist")
    {
        return Some(me);
    }
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    ["release", "debug"]
        .iter()
        .map(|d| target.join(d).join("typist"))
        .filter(|p| p.is_file())
        .max_by_key(|p| p.metadata().and_then(|m| m.modified()).ok())
        .or_else(|| resolve_program("typist"))
}

pub fn resolve_program(command: &str) -> Option<PathBuf> {
    if command == "@typist" {
        return typist_exe();
    }
    let is_file = |p: &Path| p.is_file();
    let prefixes = server_prefixes();
    if command.contains('/') {
        let p = Path::new(command);
        if p.is_absolute() {
            return is_file(p).then(|| p.to_path_buf());
        }
        // Relative paths are relative to a server prefix (e.g. ts7/lib/...).
        return prefixes
            .iter()
            .map(|pre| pre.join(p))
            .find(|c| is_file(c))
            .and_then(|c| c.canonicalize().ok());
    }
    for pre in &prefixes {
        for sub in ["npm/bin", "venv/bin", "bin", "cargo/bin", "llama/bin"] {
            let c = pre.join(sub).join(command);
            if is_file(&c) {
                return c.canonicalize().ok();
            }
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(command))
        .find(|c| is_file(c))
}

/// Folders searched for profiles, first first: `--editors`, `$TYPIST_EDITORS`,
/// `./editors`, and the source tree's `editors/` (the built-in profiles). Each adds to
/// the ones after it; a profile named in an earlier folder replaces one of the same name
/// in a later folder.
pub fn profile_dirs(explicit: Option<&Path>) -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Some(p) = explicit {
        v.push(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("TYPIST_EDITORS") {
        v.push(PathBuf::from(p));
    }
    v.push(PathBuf::from("editors"));
    v.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("editors"));
    v
}

/// Loads the profile called `name` (a file `NAME.toml` in the first folder that has it,
/// or a path to a TOML file). An unknown name is refused with the known ones, and the
/// closest of them when one is close.
pub fn find_profile(name: &str, explicit_dir: Option<&Path>) -> Result<Profile> {
    if name.ends_with(".toml") && Path::new(name).is_file() {
        return Profile::load(Path::new(name));
    }
    for dir in profile_dirs(explicit_dir) {
        let p = dir.join(format!("{name}.toml"));
        if p.is_file() {
            return Profile::load(&p);
        }
    }
    let known = profile_files(explicit_dir).unwrap_or_default();
    let names: Vec<&str> = known.iter().map(|(n, _)| n.as_str()).collect();
    let hint = did_you_mean(name, names.iter().copied())
        .map(|n| format!("; did you mean `{n}`?"))
        .unwrap_or_default();
    bail!(
        "no profile named {name:?}{hint} (known: {})",
        names.join(", ")
    )
}

/// Every profile of every profile folder that exists, sorted by name: the folders of
/// [`profile_dirs`] add to each other, and of two files of the same name the earlier
/// folder's is taken (`--editors DIR` adds to the built-in profiles, and overrides one
/// by naming a file after it).
pub fn all_profiles(explicit_dir: Option<&Path>) -> Result<Vec<Profile>> {
    let mut out = profile_files(explicit_dir)?
        .into_iter()
        .map(|(_, path)| Profile::load(&path))
        .collect::<Result<Vec<_>>>()?;
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// The profile files of every folder of [`profile_dirs`], by name (the file's stem, as
/// [`find_profile`] looks it up), the earliest folder's file for each name.
fn profile_files(explicit_dir: Option<&Path>) -> Result<Vec<(String, PathBuf)>> {
    let dirs: Vec<PathBuf> = profile_dirs(explicit_dir)
        .into_iter()
        .filter(|d| d.is_dir())
        .collect();
    anyhow::ensure!(!dirs.is_empty(), "no editors/ folder with profiles found");
    let mut by_name = BTreeMap::new();
    for dir in dirs {
        let entries =
            std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))?;
        for e in entries {
            let path = e?.path();
            if path.extension().and_then(|e| e.to_str()) != Some("toml") {
                continue;
            }
            let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            by_name.entry(stem.to_string()).or_insert(path);
        }
    }
    Ok(by_name.into_iter().collect())
}

/// The one of `known` that `input` most likely misspells (Jaro similarity above 0.7,
/// the measure and threshold clap's own "did you mean" uses), if any.
pub fn did_you_mean<'a>(input: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    known
        .into_iter()
        .map(|k| {
            (
                rapidfuzz::distance::jaro::normalized_similarity(input.chars(), k.chars()),
                k,
            )
        })
        .filter(|(sim, k)| *sim > 0.7 && *k != input)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}
