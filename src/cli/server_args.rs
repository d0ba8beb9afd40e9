//! The flags that point typist at any server without a TOML file (`--server`,
//! `--dialect`, `--language`, `--name`, `--readiness`) or at one already running
//! (`--connect`), shared by `run`, `doctor` and `profiles`, and mapped onto the
//! library's plain [`Profile`] (`editor::ad_hoc`).

use anyhow::{Result, bail};

use super::choice::{DIALECT, READINESS, choice};
use typist::editor::ad_hoc::AdHoc;
use typist::editor::{DialectKind, Profile, ReadinessRule, profile};

#[derive(clap::Args, Debug, Clone, Default)]
pub struct ServerFlags {
    /// A server's command line, split as a shell would ('pyright-langserver --stdio'):
    /// a profile is built from the flags, no TOML needed (`typist profiles --show`
    /// prints it for saving).
    #[arg(long, value_name = "COMMAND")]
    pub server: Option<String>,
    /// How the server is asked (with --server or --connect).
    #[arg(long, value_parser = choice(DIALECT))]
    pub dialect: Option<DialectKind>,
    /// LSP language ids the server handles (repeatable, or comma-separated).
    #[arg(long = "language", value_name = "ID", value_delimiter = ',')]
    pub languages: Vec<String>,
    /// The built profile's name (default: the program's file name).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// When the built profile's answers are trusted (default: stable for completion,
    /// none otherwise).
    #[arg(long, value_parser = choice(READINESS))]
    pub readiness: Option<ReadinessRule>,
    /// Attach to a server already running at tcp://HOST:PORT, unix:PATH or a socket
    /// path instead of starting one: with --server/--dialect flags, or with one named
    /// profile. Each session opens its own connection; nothing is restarted or killed.
    #[arg(long, value_name = "ADDRESS")]
    pub connect: Option<String>,
}

impl ServerFlags {
    /// Whether the flags describe a server of their own (rather than only `--connect`
    /// for a named profile).
    pub fn builds(&self) -> bool {
        self.server.is_some()
            || self.dialect.is_some()
            || !self.languages.is_empty()
            || self.name.is_some()
            || self.readiness.is_some()
    }

    /// The profile the flags build, if they build one.
    pub fn ad_hoc(&self) -> Result<Option<Profile>> {
        if !self.builds() {
            return Ok(None);
        }
        if self.server.is_none() && self.connect.is_none() {
            bail!(
                "--dialect, --language, --name and --readiness describe a server given with --server COMMAND or --connect ADDRESS"
            );
        }
        let p = Profile::ad_hoc(&AdHoc {
            command_line: self.server.clone().unwrap_or_default(),
            dialect: self.dialect,
            languages: self.languages.clone(),
            name: self.name.clone(),
            readiness: self.readiness,
            connect: self.connect.clone(),
        })?;
        Ok(Some(p))
    }

    /// The profiles of a command: those `named` (from editors/) and the one the flags
    /// build; `--connect` goes to the built one, or to the single named one.
    pub fn profiles(
        &self,
        named: &[String],
        editors: Option<&std::path::Path>,
    ) -> Result<Vec<Profile>> {
        let mut list = named
            .iter()
            .map(|n| profile::find_profile(n, editors))
            .collect::<Result<Vec<_>>>()?;
        match (self.ad_hoc()?, &self.connect) {
            (Some(p), _) => list.push(p),
            (None, Some(address)) => {
                let [one] = list.as_mut_slice() else {
                    bail!(
                        "--connect {address} attaches one server: name one profile (for its dialect and settings), or describe it with --dialect and --language"
                    );
                };
                one.connect = Some(address.clone());
                one.check_connect()?;
            }
            (None, None) => {}
        }
        Ok(list)
    }
}

/// A built profile whose program cannot be found, as a clear error (for `run`; `doctor`
/// reports it as missing instead).
pub fn require_program(p: &Profile) -> Result<()> {
    if p.connect.is_none() && !p.is_plugin_only() && p.resolve_command().is_none() {
        bail!(
            "{}: program {:?} not found (looked in .servers/ and PATH); {}",
            p.name,
            p.command,
            p.install_hint
        );
    }
    Ok(())
}
