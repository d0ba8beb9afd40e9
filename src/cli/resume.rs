//! `typist run --resume --out DIR`: the run's settings read back from DIR's manifest
//! (plan or sampling, dataset, assistants, passes, shard, conditions), so a resume
//! needs no other flag. A flag given again must agree with the manifest; the error
//! names the flag and both values. What may differ (how the work is done, not what it
//! is): --jobs, --retry-errors, --max-restarts, --transcripts, --quiet, --check,
//! --check-with, --config (docs/cli.md).

use std::fmt::Display;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};

use super::args::RunArgs;
use super::server_args::ServerFlags;
use typist::config::{ConditionsLayer, ConfigFile, RunSection};
use typist::replay::{Manifest, RunConditions, RunSettings, Sampling, ServerSpec};

/// A plan as read: its cases and what it says of its dataset.
pub(super) type ReadPlan = (
    Vec<typist::dataset::Case>,
    Option<typist::dataset::PlanSource>,
);

/// With `--resume`, the run in `--out` as its manifest says it was asked for (the
/// settings and the plan it read), after checking that every flag given agrees; `a`
/// then names its assistants, server and shard. None: not a resume, no manifest there,
/// or a manifest from before typist kept the run's settings (the flags say the run).
pub(super) fn from_manifest(a: &mut RunArgs) -> Result<Option<(ConfigFile, Option<ReadPlan>)>> {
    if !a.resume {
        return Ok(None);
    }
    let out = match &a.out {
        Some(o) => o.clone(),
        None => ConfigFile::load_or_default(a.config.as_deref())?
            .run
            .out
            .unwrap_or_else(|| PathBuf::from("out")),
    };
    let path = out.join("manifest.json");
    if !path.is_file() {
        return Ok(None);
    }
    let m = Manifest::read(&path)?;
    let Some(st) = m.settings.clone() else {
        if a.dataset.is_none() && a.plan.is_none() && a.assistants.is_empty() {
            bail!(
                "{} was written by a typist that did not keep the run's flags: give them again with --resume (--dataset or --plan, --assistant, …)",
                path.display()
            );
        }
        return Ok(None);
    };
    agree(a, &m, &st)?;
    let sampling = st.sampling.clone().unwrap_or_default();
    let run = RunSection {
        dataset: st.dataset.as_ref().map(PathBuf::from),
        plan: st.plan.as_ref().map(PathBuf::from),
        assistants: st.assistants.clone(),
        out: Some(out),
        rate: st.sampling.as_ref().map(|s| s.rate),
        seed: st.sampling.as_ref().map(|s| s.seed),
        jobs: a.jobs.or(Some(m.jobs)),
        passes: Some(m.passes),
        lines: sampling.all_lines.then(|| "all".to_string()),
        max_per_file: sampling.max_per_file,
        max_per_repo: sampling.max_per_repo,
        single_repo: Some(st.single_repo),
        editors: st.editors.as_ref().map(PathBuf::from),
    };
    let read = match &run.plan {
        Some(p) => Some(typist::dataset::read_plan(p)?),
        None => None,
    };
    a.assistants = st.assistants.clone();
    a.server = st.server.clone().map(server_flags).unwrap_or_default();
    a.shard = m.shard.map(|s| format!("{}/{}", s.index, s.count));
    let settings = ConfigFile {
        run,
        conditions: m.conditions.clone(),
    };
    Ok(Some((settings, read)))
}

/// The settings a run records in its manifest for `--resume`: the flags' and
/// config.toml's, resolved (absolute paths, sampling defaults filled in).
pub(super) fn settings_of(a: &RunArgs, s: &RunSection) -> RunSettings {
    let flags = &a.server;
    let built = flags.builds() || flags.connect.is_some();
    RunSettings {
        dataset: s.dataset.as_deref().map(absolute),
        single_repo: s.single_repo.unwrap_or(false),
        plan: s.plan.as_deref().map(absolute),
        sampling: match (&s.plan, s.sample_options()) {
            (None, Ok(o)) => Some(Sampling {
                rate: o.rate,
                seed: o.seed,
                all_lines: o.all_lines,
                max_per_file: o.max_per_file,
                max_per_repo: o.max_per_repo,
            }),
            _ => None,
        },
        assistants: if built {
            a.assistants.clone()
        } else {
            s.assistants.clone()
        },
        editors: s.editors.as_deref().map(absolute),
        server: built.then(|| ServerSpec {
            server: flags.server.clone(),
            dialect: flags.dialect,
            languages: flags.languages.clone(),
            name: flags.name.clone(),
            readiness: flags.readiness,
            connect: flags.connect.clone(),
        }),
    }
}

fn server_flags(s: ServerSpec) -> ServerFlags {
    ServerFlags {
        server: s.server,
        dialect: s.dialect,
        languages: s.languages,
        name: s.name,
        readiness: s.readiness,
        connect: s.connect,
    }
}

fn absolute(p: &Path) -> String {
    p.canonicalize()
        .or_else(|_| std::path::absolute(p))
        .unwrap_or_else(|_| p.to_path_buf())
        .display()
        .to_string()
}

/// The error of a flag given again with another value.
fn differs(flag: &str, made: impl Display, given: impl Display) -> anyhow::Error {
    anyhow!(
        "{flag}: this run was made with {made}; given {given} (--resume continues the run as its manifest says: leave {flag} out, or choose another --out)"
    )
}

fn same_path(given: &Path, made: Option<&str>) -> bool {
    made.is_some_and(|m| absolute(given) == absolute(Path::new(m)))
}

fn or_none<T: Display>(v: Option<T>) -> String {
    v.map_or_else(|| "none".to_string(), |v| v.to_string())
}

/// Every flag given that says what the run is must agree with the manifest.
fn agree(a: &RunArgs, m: &Manifest, st: &RunSettings) -> Result<()> {
    let path = |p: &Option<String>| or_none(p.as_deref());
    if let Some(d) = &a.dataset
        && !same_path(d, st.dataset.as_deref())
    {
        return Err(differs("--dataset", path(&st.dataset), d.display()));
    }
    if let Some(p) = &a.plan
        && !same_path(p, st.plan.as_deref())
    {
        let made = st
            .plan
            .clone()
            .unwrap_or_else(|| "a sample of its dataset (no plan file)".into());
        return Err(differs("--plan", made, p.display()));
    }
    if let Some(e) = &a.editors
        && !same_path(e, st.editors.as_deref())
    {
        return Err(differs("--editors", path(&st.editors), e.display()));
    }
    if !a.assistants.is_empty() {
        let (mut given, mut made) = (a.assistants.clone(), st.assistants.clone());
        given.sort();
        made.sort();
        if given != made {
            let list = |l: &[String]| {
                if l.is_empty() {
                    "none".to_string()
                } else {
                    l.join(", ")
                }
            };
            return Err(differs(
                "--assistant",
                list(&st.assistants),
                list(&a.assistants),
            ));
        }
    }
    if let Some(p) = a.passes
        && p != m.passes
    {
        return Err(differs("--passes", m.passes, p));
    }
    if let Some(s) = &a.shard {
        let given = typist::replay::Shard::parse(s)?;
        if Some(given) != m.shard {
            let made = m.shard.map_or_else(
                || "the whole plan".to_string(),
                |s| format!("{}/{}", s.index, s.count),
            );
            return Err(differs(
                "--shard",
                made,
                format!("{}/{}", given.index, given.count),
            ));
        }
    }
    if a.sampling.single_repo && !st.single_repo {
        return Err(differs(
            "--single-repo",
            "a dataset of repositories",
            "--single-repo",
        ));
    }
    sampling_agrees(a, st)?;
    server_agrees(&a.server, st.server.as_ref())?;
    conditions_agree(a, &m.conditions)
}

fn sampling_agrees(a: &RunArgs, st: &RunSettings) -> Result<()> {
    let f = &a.sampling;
    let Some(s) = &st.sampling else {
        let made = format!("the plan {}", st.plan.as_deref().unwrap_or("?"));
        for (flag, given) in [
            ("--rate", f.rate.map(|r| r.to_string())),
            ("--seed", f.seed.map(|r| r.to_string())),
            ("--lines", f.lines.clone()),
            ("--max-per-file", f.max_per_file.map(|r| r.to_string())),
            ("--max-per-repo", f.max_per_repo.map(|r| r.to_string())),
        ] {
            if let Some(g) = given {
                return Err(differs(flag, &made, g));
            }
        }
        return Ok(());
    };
    if let Some(r) = f.rate
        && r != s.rate
    {
        return Err(differs("--rate", s.rate, r));
    }
    if let Some(r) = f.seed
        && r != s.seed
    {
        return Err(differs("--seed", s.seed, r));
    }
    if let Some(l) = &f.lines
        && (l == "all") != s.all_lines
    {
        let made = if s.all_lines { "all" } else { "a sample" };
        return Err(differs("--lines", made, l));
    }
    if f.max_per_file.is_some() && f.max_per_file != s.max_per_file {
        return Err(differs(
            "--max-per-file",
            or_none(s.max_per_file),
            or_none(f.max_per_file),
        ));
    }
    if f.max_per_repo.is_some() && f.max_per_repo != s.max_per_repo {
        return Err(differs(
            "--max-per-repo",
            or_none(s.max_per_repo),
            or_none(f.max_per_repo),
        ));
    }
    Ok(())
}

fn server_agrees(f: &ServerFlags, made: Option<&ServerSpec>) -> Result<()> {
    let m = made.cloned().unwrap_or_default();
    let checks: [(&str, bool, String, String); 6] = [
        (
            "--server",
            f.server.is_some() && f.server != m.server,
            show(&m.server),
            show(&f.server),
        ),
        (
            "--dialect",
            f.dialect.is_some() && f.dialect != m.dialect,
            show(&m.dialect),
            show(&f.dialect),
        ),
        (
            "--language",
            !f.languages.is_empty() && f.languages != m.languages,
            show(&m.languages),
            show(&f.languages),
        ),
        (
            "--name",
            f.name.is_some() && f.name != m.name,
            show(&m.name),
            show(&f.name),
        ),
        (
            "--readiness",
            f.readiness.is_some() && f.readiness != m.readiness,
            show(&m.readiness),
            show(&f.readiness),
        ),
        (
            "--connect",
            f.connect.is_some() && f.connect != m.connect,
            show(&m.connect),
            show(&f.connect),
        ),
    ];
    for (flag, differ, made, given) in checks {
        if differ {
            return Err(differs(flag, made, given));
        }
    }
    Ok(())
}

/// A value shown as the manifest has it: a string without its quotes, a list joined
/// by commas, nothing as `none`.
fn show<T: serde::Serialize>(v: &T) -> String {
    shown(&serde_json::to_value(v).unwrap_or_default())
}

fn shown(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Null => "none".into(),
        Value::String(s) => s.clone(),
        Value::Array(a) if a.is_empty() => "none".into(),
        Value::Array(a) => a.iter().map(shown).collect::<Vec<_>>().join(", "),
        v => v.to_string(),
    }
}

/// The first value that differs between two JSON values: (made, given).
fn first_difference(made: &serde_json::Value, given: &serde_json::Value) -> (String, String) {
    use serde_json::Value;
    if let (Value::Object(a), Value::Object(b)) = (made, given) {
        let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        for k in keys {
            let (x, y) = (
                a.get(k).unwrap_or(&Value::Null),
                b.get(k).unwrap_or(&Value::Null),
            );
            if x != y {
                return first_difference(x, y);
            }
        }
    }
    (shown(made), shown(given))
}

/// Each editor-condition flag given, laid alone over the manifest's conditions, must
/// leave them as they are.
fn conditions_agree(a: &RunArgs, made: &RunConditions) -> Result<()> {
    let l = a.layer().conditions;
    if let Some(p) = &l.editor_config
        && !same_path(p, made.app.config.as_deref())
    {
        return Err(differs(
            "--editor-config",
            or_none(made.app.config.as_deref()),
            p.display(),
        ));
    }
    let none = ConditionsLayer::default;
    // Each flag's field alone over an empty layer.
    macro_rules! alone {
        ($field:ident) => {
            ConditionsLayer {
                $field: l.$field.clone(),
                ..none()
            }
        };
    }
    let layers: [(&str, ConditionsLayer); 16] = [
        ("--context", alone!(context)),
        ("--suffix-lines", alone!(suffix_lines)),
        ("--typing", alone!(typing)),
        ("--granularity", alone!(granularity)),
        ("--typed-prefix", alone!(typed_prefix)),
        ("--trigger", alone!(trigger)),
        ("--settle-ms", alone!(settle_ms)),
        ("--open-tabs", alone!(open_tabs)),
        ("--no-latency", alone!(latency)),
        ("--editor", alone!(editor)),
        ("--key-interval-ms", alone!(key_interval_ms)),
        ("--editor-namespace", alone!(editor_namespaces)),
        ("--editor-highlight", alone!(editor_highlights)),
        ("--display-deadline-ms", alone!(display_deadline_ms)),
        ("--list-rule", alone!(list_rule)),
        ("--extension", alone!(editor_extensions)),
    ];
    let base = none().apply(made.clone());
    let base_json = serde_json::to_value(&base)?;
    for (flag, layer) in layers {
        let given = layer.apply(made.clone());
        if given != base {
            if flag == "--no-latency" {
                return Err(differs(flag, "latencies recorded", "--no-latency"));
            }
            let (m, g) = first_difference(&base_json, &serde_json::to_value(&given)?);
            return Err(differs(flag, m, g));
        }
    }
    let golfed = a.with_golf(made.clone());
    if golfed.list_cap != made.list_cap {
        let show = |c: &RunConditions| {
            c.list_cap
                .map_or("the whole list".into(), |n| n.to_string())
        };
        return Err(differs("--list-cap", show(made), show(&golfed)));
    }
    if golfed != *made {
        let show = |c: &RunConditions| {
            c.golf.as_ref().map_or_else(
                || "no golf".to_string(),
                |g| {
                    format!(
                        "{} (at most {} requests)",
                        shown(&serde_json::to_value(g.mode).unwrap_or_default()),
                        g.max_requests
                    )
                },
            )
        };
        return Err(differs("--golf", show(made), show(&golfed)));
    }
    Ok(())
}
