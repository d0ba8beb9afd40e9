//! Extensions installed with code-server's own `--install-extension` (the id and
//! version of the one asked for read from `--list-extensions`), and whether an
//! extension host activated each (read from its logs).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{ExtensionState, INSTALL_WITHIN, Installed, Instance, failed};
use crate::editor::error::SessionError;

impl Instance {
    /// Each installed extension, and whether an extension host of this VS Code
    /// activated it so far (its `exthost.log` files).
    pub fn extension_states(&self) -> Vec<ExtensionState> {
        let logs = exthost_logs(&self.dir.join("user-data/logs"));
        self.installed
            .iter()
            .map(|(from, i)| {
                let (activated, activation_error) = activation(&logs, &i.id);
                ExtensionState {
                    id: i.id.clone(),
                    version: i.version.clone(),
                    from: from.clone(),
                    activated,
                    activation_error,
                }
            })
            .collect()
    }
}

/// Installs one extension (`.vsix` or id) with code-server's own `--install-extension`;
/// its id and version are the line `--list-extensions --show-versions` gained (of the
/// lines an extension with dependencies adds, the one no other new extension names as
/// a dependency or pack member, from their manifests in `exts`).
pub(super) async fn install(
    code_server: &Path,
    base: &[String],
    env: &[(String, String)],
    dir: &Path,
    exts: &Path,
    what: &str,
) -> Result<Installed, SessionError> {
    let before = list_extensions(code_server, base, env, dir).await?;
    let mut cmd = tokio::process::Command::new(code_server);
    cmd.args(base)
        .arg("--install-extension")
        .arg(what)
        .arg("--force")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(dir)
        .kill_on_drop(true)
        .process_group(0);
    crate::os::die_with_parent(cmd.as_std_mut());
    let out = tokio::time::timeout(INSTALL_WITHIN, cmd.output())
        .await
        .map_err(|_| {
            failed(format!(
                "vscode: installing {what} took over {INSTALL_WITHIN:?}"
            ))
        })?
        .map_err(|e| failed(format!("vscode: {}: {e}", code_server.display())))?;
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    if !out.status.success() || !text.contains("successfully installed") {
        return Err(failed(format!(
            "vscode: code-server --install-extension {what} failed: {}",
            text.trim()
        )));
    }
    let after = list_extensions(code_server, base, env, dir).await?;
    let id_of = |l: &String| l.split('@').next().unwrap_or("").to_lowercase();
    let wanted = what.split('@').next().unwrap_or("").to_lowercase();
    let gained: Vec<String> = after
        .iter()
        .filter(|l| !before.contains(l))
        .cloned()
        .collect();
    let manifests = installed_dependencies(exts);
    let line = main_extension(&gained, |id| manifests.get(id).cloned().unwrap_or_default())
        .or_else(|| after.iter().find(|l| id_of(l) == wanted).cloned())
        .ok_or_else(|| {
            failed(format!(
                "vscode: code-server installed {what} but does not list it"
            ))
        })?;
    let (id, version) = line.split_once('@').unwrap_or((&line, ""));
    Ok(Installed {
        id: id.to_string(),
        version: version.to_string(),
    })
}

/// Of the `id@version` lines one install added, the extension asked for: the one that
/// no other added extension names among its dependencies (`deps`: an id's
/// `extensionDependencies` and `extensionPack`, lower case). `None` when none or
/// several are.
fn main_extension(gained: &[String], deps: impl Fn(&str) -> Vec<String>) -> Option<String> {
    let id_of = |l: &str| l.split('@').next().unwrap_or("").to_lowercase();
    let named: Vec<String> = gained.iter().flat_map(|l| deps(&id_of(l))).collect();
    let mut heads = gained.iter().filter(|l| !named.contains(&id_of(l)));
    match (heads.next(), heads.next()) {
        (Some(one), None) => Some(one.clone()),
        _ => None,
    }
}

/// Each extension in `exts` (its folders' `package.json`), by its id `publisher.name`
/// in lower case: the ids its `extensionDependencies` and `extensionPack` name.
fn installed_dependencies(exts: &Path) -> std::collections::HashMap<String, Vec<String>> {
    let mut out = std::collections::HashMap::new();
    let Ok(entries) = std::fs::read_dir(exts) else {
        return out;
    };
    for e in entries.flatten() {
        let Ok(text) = std::fs::read_to_string(e.path().join("package.json")) else {
            continue;
        };
        let Ok(m) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let (Some(p), Some(n)) = (m["publisher"].as_str(), m["name"].as_str()) else {
            continue;
        };
        let deps = ["extensionDependencies", "extensionPack"]
            .iter()
            .flat_map(|k| m[*k].as_array().cloned().unwrap_or_default())
            .filter_map(|d| d.as_str().map(str::to_lowercase))
            .collect();
        out.insert(format!("{p}.{n}").to_lowercase(), deps);
    }
    out
}

/// The lines `id@version` of `code-server --list-extensions --show-versions`.
async fn list_extensions(
    code_server: &Path,
    base: &[String],
    env: &[(String, String)],
    dir: &Path,
) -> Result<Vec<String>, SessionError> {
    let mut args = base.to_vec();
    args.extend(["--list-extensions", "--show-versions"].map(String::from));
    let list = code_server_output(code_server, &args, env, dir).await?;
    Ok(String::from_utf8_lossy(&list.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| l.contains('@'))
        .map(String::from)
        .collect())
}

/// What code-server run with `args` (in `env`, from `dir`) printed.
pub(super) async fn code_server_output(
    code_server: &Path,
    args: &[String],
    env: &[(String, String)],
    dir: &Path,
) -> Result<std::process::Output, SessionError> {
    tokio::process::Command::new(code_server)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(dir)
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| failed(format!("vscode: {}: {e}", code_server.display())))
}

/// The text of every extension host's log under `logs`.
fn exthost_logs(logs: &Path) -> String {
    let mut text = String::new();
    for e in walkdir(logs) {
        // code-server 4.139: logs/DATE/exthostN/remoteexthost.log, one per window.
        if e.file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with("exthost.log"))
            && let Ok(t) = std::fs::read_to_string(&e)
        {
            text.push_str(&t);
        }
    }
    text
}

fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// Whether the extension host logged the activation of `id` (VS Code 1.139:
/// `ExtensionService#_doActivateExtension ID, startup: …`), and the error it logged
/// when that failed (`Activating extension ID failed due to an error:` and the next
/// line).
fn activation(logs: &str, id: &str) -> (bool, Option<String>) {
    let id = id.to_ascii_lowercase();
    let lower = logs.to_ascii_lowercase();
    let activated = lower.contains(&format!("_doactivateextension {id},"));
    let marker = format!("activating extension {id} failed due to an error:");
    let error = lower.find(&marker).map(|at| {
        logs[at + marker.len()..]
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .take(2)
            .collect::<Vec<_>>()
            .join(" ")
    });
    (activated, error)
}

#[cfg(test)]
mod tests {
    use super::main_extension;

    #[test]
    fn the_extension_asked_for_is_the_one_no_other_new_one_depends_on() {
        let deps = |id: &str| match id {
            "acme.assistant" => vec!["acme.auth".to_string()],
            "acme.pack" => vec!["acme.a".to_string(), "acme.b".to_string()],
            _ => vec![],
        };
        let lines = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // The dependency is listed first (alphabetically); the one asked for is kept.
        assert_eq!(
            main_extension(&lines(&["acme.auth@1.0.0", "Acme.Assistant@2.1.0"]), deps),
            Some("Acme.Assistant@2.1.0".to_string())
        );
        assert_eq!(
            main_extension(&lines(&["acme.a@1", "acme.b@1", "acme.pack@3"]), deps),
            Some("acme.pack@3".to_string())
        );
        assert_eq!(
            main_extension(&lines(&["typist.typist-inline@0.1.0"]), deps),
            Some("typist.typist-inline@0.1.0".to_string())
        );
        // Two unrelated, or nothing new (installed already): not this function's to say.
        assert_eq!(main_extension(&lines(&["x.y@1", "x.z@1"]), deps), None);
        assert_eq!(main_extension(&[], deps), None);
    }
}
