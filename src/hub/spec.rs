//! What a submission asks to measure (the JSON of `POST /api/submissions`, less its
//! benchmark and name), checked before it is queued, and made ready for `typist run`.
//!
//! Accepted now: an assistant profile the service knows (`"assistant": "typist-ngram"`,
//! any profile `typist profiles` lists), or an HTTP model endpoint measured through
//! typist's host (`"model": {"endpoint": URL, "api": "openai"|"ollama"|"llamacpp"|"tgi",
//! "name": MODEL}`); the editor (`typist`, `neovim`, `vscode`) and the passes (1 to 5).
//! Uploaded code (a `.vsix`, a Neovim plugin, a server's archive with its profile) is
//! refused, saying so: it runs only inside the sandbox, which jobs do not use yet.

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
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Body {
    assistant: Option<String>,
    model: Option<ModelBody>,
    editor: Option<Editor>,
    passes: Option<u32>,
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

/// Keys of uploads the service does not take yet.
const UPLOADS: &[&str] = &["extension", "neovim_plugin", "profile", "archive"];

impl Spec {
    /// The spec of a submission's JSON (its `benchmark` and `name` left aside), checked:
    /// the error says what to change.
    pub fn from_json(v: &Value) -> Result<Spec> {
        let mut v = v.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove("benchmark");
            o.remove("name");
            if let Some(k) = UPLOADS.iter().find(|k| o.contains_key(**k)) {
                bail!(
                    "`{k}`: uploaded code is not accepted yet (it must run in the sandbox, \
                     which the service's jobs do not use yet); submit an `assistant` profile \
                     the service knows or a `model` endpoint"
                );
            }
        }
        let b: Body = serde_json::from_value(v)
            .map_err(|e| anyhow::anyhow!("the submission is not valid: {e}"))?;
        let what = match (b.assistant, b.model) {
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
            _ => bail!(
                "give exactly one of `assistant` (a profile's name) and `model` (an endpoint)"
            ),
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

    /// Checks that the service can run it: a named profile must exist.
    pub fn check(&self) -> Result<()> {
        if let What::Assistant(a) = &self.what {
            crate::editor::profile::find_profile(a, None)
                .map_err(|e| anyhow::anyhow!("`assistant`: {e}"))?;
        }
        Ok(())
    }

    /// Makes the assistant ready in the job's folder `dir` (a model's profile written
    /// into `dir/editors`).
    pub fn prepare(&self, dir: &Path) -> Result<Prepared> {
        match &self.what {
            What::Assistant(a) => Ok(Prepared {
                name: a.clone(),
                editors: None,
            }),
            What::Model {
                endpoint,
                api,
                name,
            } => {
                let editors = dir.join("editors");
                std::fs::create_dir_all(&editors)?;
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
                let text = format!(
                    "name = \"model\"\ndescription = \"a model endpoint submitted to typist serve\"\n\
                     command = \"@typist\"\nargs = {}\ndialect = \"inline\"\n\
                     languages = [\"python\", \"typescript\", \"javascript\", \"java\", \"go\", \"rust\", \"c\", \"cpp\"]\n\
                     extensions = [\"py\", \"ts\", \"tsx\", \"js\", \"jsx\", \"mjs\", \"java\", \"go\", \"rs\", \"c\", \"h\", \"cc\", \"cpp\", \"hpp\"]\n\
                     request_timeout_ms = 90000\n",
                    toml::Value::Array(
                        args.iter()
                            .map(|a| toml::Value::String(a.to_string()))
                            .collect()
                    )
                );
                std::fs::write(editors.join("model.toml"), text)?;
                Ok(Prepared {
                    name: "model".into(),
                    editors: Some(editors),
                })
            }
        }
    }
}

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
            (json!({"extension": "x.vsix"}), "sandbox"),
        ] {
            let e = Spec::from_json(&bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
