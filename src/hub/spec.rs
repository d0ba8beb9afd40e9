//! What a submission asks to measure (the JSON of `POST /api/submissions`, less its
//! benchmark and name), checked before it is queued, and made ready for `typist run`.
//!
//! What is measured: an assistant profile the service knows (`"assistant": "typist-ngram"`,
//! any profile `typist profiles` lists), an HTTP model endpoint measured through
//! typist's host (`"model": {"endpoint": URL, "api": "openai"|"ollama"|"llamacpp"|"tgi",
//! "name": MODEL}`), or uploaded code (`upload.rs`: a `.vsix`, a Neovim plugin, a
//! server's profile with its archive), kept by the service under `uploads/KEY/` and
//! named here by its key; the editor (`typist`, `neovim`, `vscode`) and the passes (1
//! to 5). Uploads come only as files of a multipart form: a JSON body naming them is
//! refused ([`Spec::from_request`]).

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde::Deserialize;
use serde_json::Value;

/// Most passes a submission may ask.
pub const MAX_PASSES: u32 = 5;

#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub what: What,
    pub editor: Editor,
    pub passes: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub enum What {
    /// A profile by name.
    Assistant(String),
    /// A model server over HTTP, asked by typist's host.
    Model {
        endpoint: String,
        api: String,
        name: String,
    },
    /// An uploaded `.vsix`, measured alone in VS Code.
    Extension { id: String, upload: String },
    /// An uploaded Neovim plugin: its folder, the Lua file Neovim loads, the extmark
    /// namespaces of its ghost text.
    NeovimPlugin {
        config: String,
        namespaces: Vec<String>,
        upload: String,
    },
    /// An uploaded server profile (`profile.toml`), with its program's archive
    /// unpacked beside it (`server/`) when it came with one.
    Profile {
        name: String,
        archive: bool,
        upload: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Editor {
    Typist,
    Neovim,
    Vscode,
}

impl Editor {
    pub fn as_str(self) -> &'static str {
        match self {
            Editor::Typist => "typist",
            Editor::Neovim => "neovim",
            Editor::Vscode => "vscode",
        }
    }
}

/// The assistant a job runs: its name, and the profiles folder that holds it when the
/// service wrote its profile.
pub struct Prepared {
    pub name: String,
    pub editors: Option<PathBuf>,
    /// The upload's folder (the sandbox binds it read-only), for uploaded code.
    pub upload: Option<PathBuf>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Body {
    assistant: Option<String>,
    model: Option<ModelBody>,
    editor: Option<Editor>,
    passes: Option<u32>,
    extension: Option<ExtensionBody>,
    neovim_plugin: Option<PluginBody>,
    profile: Option<ProfileBody>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExtensionBody {
    id: String,
    #[allow(dead_code)]
    version: String,
    #[allow(dead_code)]
    sha256: String,
    upload: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PluginBody {
    config: String,
    namespaces: Vec<String>,
    #[allow(dead_code)]
    sha256: String,
    upload: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileBody {
    name: String,
    #[allow(dead_code)]
    sha256: String,
    #[serde(default)]
    archive_sha256: Option<String>,
    upload: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelBody {
    endpoint: String,
    #[serde(default = "openai")]
    api: String,
    #[serde(default = "default_model")]
    name: String,
}

fn openai() -> String {
    "openai".into()
}
fn default_model() -> String {
    "default".into()
}

/// Keys of uploaded code: files of a multipart form, never a JSON body's.
pub const UPLOADS: &[&str] = &["extension", "neovim_plugin", "profile", "archive"];

impl Spec {
    /// The spec of a submission's JSON body as sent to the API: uploads refused (they
    /// come as files of a multipart form, which the service checks and keeps itself).
    pub fn from_request(v: &Value) -> Result<Spec> {
        if let Some(k) = UPLOADS.iter().find(|k| v.get(**k).is_some()) {
            bail!(
                "`{k}`: uploaded code comes as a file of a multipart/form-data request \
                 (typist submit --extension FILE.vsix, --neovim-plugin DIR or --profile FILE \
                 sends one), not in a JSON body"
            );
        }
        Spec::from_json(v)
    }

    /// The spec of a submission's JSON (its `benchmark` and `name` left aside), as kept:
    /// checked, the error says what to change.
    pub fn from_json(v: &Value) -> Result<Spec> {
        let mut v = v.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove("benchmark");
            o.remove("name");
        }
        let b: Body = serde_json::from_value(v)
            .map_err(|e| anyhow::anyhow!("the submission is not valid: {e}"))?;
        let uploads = [
            b.extension.is_some(),
            b.neovim_plugin.is_some(),
            b.profile.is_some(),
        ];
        let given = usize::from(b.assistant.is_some())
            + usize::from(b.model.is_some())
            + uploads.iter().filter(|u| **u).count();
        if given != 1 {
            bail!(
                "give exactly one of `assistant` (a profile's name), `model` (an endpoint) and uploaded code (`extension`, `neovim_plugin`, `profile`)"
            );
        }
        let what = match (b.assistant, b.model) {
            _ if uploads.iter().any(|u| *u) => {
                if let Some(e) = b.extension {
                    What::Extension {
                        id: e.id,
                        upload: e.upload,
                    }
                } else if let Some(p) = b.neovim_plugin {
                    What::NeovimPlugin {
                        config: p.config,
                        namespaces: p.namespaces,
                        upload: p.upload,
                    }
                } else if let Some(p) = b.profile {
                    What::Profile {
                        name: p.name,
                        archive: p.archive_sha256.is_some(),
                        upload: p.upload,
                    }
                } else {
                    unreachable!("one upload is given")
                }
            }
            (Some(a), None) => {
                if a.is_empty() || a.contains('/') || a.ends_with(".toml") {
                    bail!("`assistant`: a profile's name (typist profiles lists them), not a path");
                }
                What::Assistant(a)
            }
            (None, Some(m)) => {
                if !(m.endpoint.starts_with("http://") || m.endpoint.starts_with("https://"))
                    || m.endpoint
                        .chars()
                        .any(|c| c.is_whitespace() || c.is_control())
                {
                    bail!("`model.endpoint`: an http:// or https:// URL");
                }
                if !["openai", "ollama", "llamacpp", "tgi"].contains(&m.api.as_str()) {
                    bail!("`model.api`: one of openai, ollama, llamacpp, tgi");
                }
                if m.name.is_empty() || m.name.len() > 200 || m.name.chars().any(|c| c.is_control())
                {
                    bail!("`model.name`: the model's name, 1 to 200 characters");
                }
                What::Model {
                    endpoint: m.endpoint,
                    api: m.api,
                    name: m.name,
                }
            }
            _ => unreachable!("exactly one is given"),
        };
        let passes = b.passes.unwrap_or(1);
        if !(1..=MAX_PASSES).contains(&passes) {
            bail!("`passes`: 1 to {MAX_PASSES}");
        }
        Ok(Spec {
            what,
            editor: b.editor.unwrap_or(Editor::Typist),
            passes,
        })
    }

    /// Checks that the service can run it: a named profile must exist, uploaded code
    /// runs in its own editor.
    pub fn check(&self) -> Result<()> {
        match &self.what {
            What::Assistant(a) => {
                crate::editor::profile::find_profile(a, None)
                    .map_err(|e| anyhow::anyhow!("`assistant`: {e}"))?;
            }
            What::Extension { .. } if self.editor != Editor::Vscode => {
                bail!("`extension`: a .vsix runs in VS Code: set `editor` to vscode")
            }
            What::NeovimPlugin { .. } if self.editor != Editor::Neovim => {
                bail!("`neovim_plugin`: a Neovim plugin runs in Neovim: set `editor` to neovim")
            }
            _ => {}
        }
        Ok(())
    }

    /// Makes the assistant ready in the job's folder `dir`: a profile written into
    /// `dir/editors` for a model and for uploaded code (found in `data`'s uploads, its
    /// paths made absolute). A model's endpoint is asked at `inside` when given: the
    /// sandbox's own address that the service forwards to it.
    pub fn prepare(&self, dir: &Path, data: &Path, inside: Option<&str>) -> Result<Prepared> {
        let editors = dir.join("editors");
        // The job's folder is its sandbox's: links there are replaced, never followed.
        let write = |name: &str, text: String| -> Result<Prepared> {
            super::layout::fresh_dir(&editors)?;
            super::layout::write_fresh(&editors.join(format!("{name}.toml")), text.as_bytes())?;
            Ok(Prepared {
                name: name.to_string(),
                editors: Some(editors.clone()),
                upload: None,
            })
        };
        let strings = |v: &[&str]| {
            toml::Value::Array(
                v.iter()
                    .map(|a| toml::Value::String(a.to_string()))
                    .collect(),
            )
        };
        let quoted = |s: &str| toml::Value::String(s.to_string()).to_string();
        match &self.what {
            What::Assistant(a) => Ok(Prepared {
                name: a.clone(),
                editors: None,
                upload: None,
            }),
            What::Model {
                endpoint,
                api,
                name,
            } => {
                let endpoint = inside.unwrap_or(endpoint);
                let args = [
                    "host",
                    "--backend",
                    api,
                    "--endpoint",
                    endpoint,
                    "--model",
                    name,
                    "--max-tokens",
                    "32",
                    "--temperature",
                    "0",
                    "--stop",
                    "\n",
                    "--http-timeout-ms",
                    "60000",
                ];
                write(
                    "model",
                    format!(
                        "name = \"model\"\ndescription = \"a model endpoint submitted to typist serve\"\n\
                         command = \"@typist\"\nargs = {}\ndialect = \"inline\"\n{LANGUAGES}\
                         request_timeout_ms = 90000\n",
                        strings(&args)
                    ),
                )
            }
            What::Extension { id, upload } => {
                let up = super::upload::folder(data, upload)?;
                let vsix = up.join("extension.vsix");
                let mut p = write(
                    "extension",
                    format!(
                        "name = \"extension\"\ndescription = {}\ndialect = \"inline\"\n{LANGUAGES}\
                         request_timeout_ms = 10000\n\n[vscode]\nextensions = [{}]\n",
                        quoted(&format!("{id}, uploaded to typist serve")),
                        quoted(&vsix.display().to_string())
                    ),
                )?;
                p.upload = Some(up);
                Ok(p)
            }
            What::NeovimPlugin {
                config,
                namespaces,
                upload,
            } => {
                let up = super::upload::folder(data, upload)?;
                let plugin = up.join("plugin");
                super::layout::fresh_dir(&editors)?;
                // The plugin's folder on the runtime path (its lua/ modules found by
                // require), then its file.
                let lua = editors.join("plugin.lua");
                let long = |p: &Path| format!("[==[{}]==]", p.display());
                super::layout::write_fresh(
                    &lua,
                    format!(
                        "vim.opt.runtimepath:prepend({})\ndofile({})\n",
                        long(&plugin),
                        long(&plugin.join(config))
                    )
                    .as_bytes(),
                )?;
                let ns: Vec<&str> = namespaces.iter().map(String::as_str).collect();
                let mut p = write(
                    "plugin",
                    format!(
                        "name = \"plugin\"\ndescription = \"a Neovim plugin uploaded to typist serve\"\n\
                         dialect = \"inline\"\n{LANGUAGES}\n[neovim]\nconfig = {}\nnamespaces = {}\n",
                        quoted(&lua.display().to_string()),
                        strings(&ns)
                    ),
                )?;
                p.upload = Some(up);
                Ok(p)
            }
            What::Profile {
                name,
                archive,
                upload,
            } => {
                let up = super::upload::folder(data, upload)?;
                let server = up.join("server");
                let text = std::fs::read_to_string(up.join("profile.toml"))?;
                let mut t: toml::Table = toml::from_str(&text)?;
                let abs = |f: &str| toml::Value::String(server.join(f).display().to_string());
                if let Some(toml::Value::String(c)) = t.get("command").cloned()
                    && *archive
                    && (c.contains('/') || server.join(&c).is_file())
                {
                    t.insert("command".into(), abs(&c));
                }
                if let Some(toml::Value::Table(n)) = t.get_mut("neovim")
                    && let Some(toml::Value::String(c)) = n.get("config").cloned()
                {
                    n.insert("config".into(), abs(&c));
                }
                if let Some(toml::Value::Table(v)) = t.get_mut("vscode")
                    && let Some(toml::Value::Array(xs)) = v.get_mut("extensions")
                {
                    for x in xs.iter_mut() {
                        if let toml::Value::String(f) = x {
                            *x = abs(f);
                        }
                    }
                }
                let mut p = write(name, toml::to_string(&t)?)?;
                p.upload = Some(up);
                Ok(p)
            }
        }
    }
}

/// The languages a profile the service writes serves.
const LANGUAGES: &str = "languages = [\"python\", \"typescript\", \"javascript\", \"java\", \"go\", \"rust\", \"c\", \"cpp\"]\n\
    extensions = [\"py\", \"ts\", \"tsx\", \"js\", \"jsx\", \"mjs\", \"java\", \"go\", \"rs\", \"c\", \"h\", \"cc\", \"cpp\", \"hpp\"]\n";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_submission_is_checked_before_it_is_queued() {
        let s =
            Spec::from_json(&json!({"benchmark": "b", "name": "n", "assistant": "typist-ngram"}))
                .unwrap();
        assert_eq!(s.what, What::Assistant("typist-ngram".into()));
        assert_eq!((s.editor, s.passes), (Editor::Typist, 1));
        let m = Spec::from_json(&json!({"model": {"endpoint": "http://127.0.0.1:9/v1", "name": "m"}, "editor": "neovim", "passes": 2}))
            .unwrap();
        assert!(matches!(m.what, What::Model { ref api, .. } if api == "openai"));
        assert_eq!((m.editor, m.passes), (Editor::Neovim, 2));
        for (bad, says) in [
            (json!({}), "exactly one"),
            (
                json!({"assistant": "a", "model": {"endpoint": "http://x"}}),
                "exactly one",
            ),
            (json!({"assistant": "../x"}), "not a path"),
            (
                json!({"model": {"endpoint": "file:///etc/passwd"}}),
                "http://",
            ),
            (
                json!({"model": {"endpoint": "http://x", "api": "mystery"}}),
                "openai",
            ),
            (json!({"assistant": "a", "passes": 9}), "passes"),
            (json!({"assistant": "a", "editor": "emacs"}), "not valid"),
            (json!({"assistant": "a", "shell": "rm -rf /"}), "not valid"),
            (json!({"extension": "x.vsix"}), "not valid"),
            (
                json!({"extension": {"id": "a.b", "version": "1", "sha256": "0", "upload": "ab"}, "assistant": "a"}),
                "exactly one",
            ),
        ] {
            let e = Spec::from_json(&bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
        // As kept, with its upload's key; never from a request's JSON.
        let up = json!({"neovim_plugin": {"config": "init.lua", "namespaces": ["g"], "sha256": "0", "upload": "ab12"}, "editor": "neovim"});
        assert!(matches!(
            Spec::from_json(&up).unwrap().what,
            What::NeovimPlugin { .. }
        ));
        let e = Spec::from_request(&up).unwrap_err().to_string();
        assert!(e.contains("multipart/form-data"), "{e}");
        let wrong = json!({"extension": {"id": "a.b", "version": "1", "sha256": "0", "upload": "ab"}, "editor": "neovim"});
        let e = Spec::from_json(&wrong)
            .unwrap()
            .check()
            .unwrap_err()
            .to_string();
        assert!(e.contains("set `editor` to vscode"), "{e}");
    }
}
