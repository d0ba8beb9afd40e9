//! Every command but `run` (in `run.rs`): flags onto the library, output, exit code.

use std::process::ExitCode;

use anyhow::{Context, Result};

use super::args::{
    BenchCommand, CheckArgs, DoctorArgs, DrillArgs, MergeArgs, ProfilesArgs, ReportArgs,
    SampleArgs, SampleCases, ScoreArgs, ServeModelArgs,
};
use super::{EXIT_NO_ANSWERS, runtime, silent_assistants};
use typist::dataset::tokens::{self, TokenOptions};
use typist::doctor::{self, Status};
use typist::editor::profile;

pub fn doctor(a: DoctorArgs) -> Result<ExitCode> {
    let list = if a.profiles.is_empty() && !a.server.builds() && a.server.connect.is_none() {
        profile::all_profiles(a.editors.as_deref())?
    } else {
        a.server.profiles(&a.profiles, a.editors.as_deref())?
    };
    let rt = runtime()?;
    let app = typist::editor::EditorApp {
        kind: a.editor.unwrap_or_default(),
        extensions: a
            .extensions
            .iter()
            .map(|e| profile::resolve_extension(e, None))
            .collect::<Result<_>>()?,
        ..Default::default()
    };
    if !app.extensions.is_empty() && app.kind != typist::editor::EditorKind::Vscode {
        anyhow::bail!("--extension installs a VS Code extension: use it with --editor vscode");
    }
    // The model services the profiles declare, started once for all of them and
    // stopped when `_services` is dropped.
    let (_services, filled) =
        typist::service::Services::start_each(&list, 1, typist::service::threads_for(app.kind))?;
    let mut reports = Vec::new();
    let editors = typist::editor::Editors::new();
    // Progress on one line rewritten in place, only for a person at a terminal, erased
    // before the table: a pipe or a log gets the table alone.
    let progress = !a.json && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let total = list.len();
    for (i, (p, filled)) in list.iter().zip(filled).enumerate() {
        if progress {
            eprint!("\r\x1b[Kchecking {}/{total}: {} …", i + 1, p.name);
        }
        reports.push(match filled {
            Ok(f) => rt.block_on(doctor::examine_in(
                &editors,
                &app,
                &f,
                a.transcripts.as_deref(),
            )),
            Err(e) => doctor::Report::failed(p, &e),
        });
    }
    // The VS Code the profiles were examined in, if any.
    rt.block_on(editors.close());
    if progress {
        eprint!("\r\x1b[K");
    }
    let vault = doctor::vault_entries(&editors);
    if a.json {
        out!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"profiles": reports, "vault": vault})
            )?
        );
    } else {
        out!("{}", doctor::table(&reports));
        for r in reports.iter().filter(|r| r.vault.is_some()) {
            out!("{} sign-in: {}", r.name, r.vault.as_deref().unwrap_or(""));
        }
        if !vault.is_empty() {
            out!("vault: {}", vault.join("; "));
        }
    }
    let all_ok = reports.iter().all(|r| r.status == Status::Ok);
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub fn score(mut a: ScoreArgs) -> Result<ExitCode> {
    let t0 = std::time::Instant::now();
    a.records = super::records_files(a.records)?;
    if let [one] = a.records.as_slice()
        && typist::score::edit_records::is_edit_records(one)
    {
        // A run on an edits plan: its next-edit figures (methodology §13).
        let records = typist::score::edit_records::read_edit_records(one)?;
        let summary = typist::score::edit_records::summarize_records(&records, a.bootstrap, a.seed);
        if a.json {
            out!("{}", serde_json::to_string(&summary)?);
        } else {
            out!("{}", typist::score::next_edit::table(&summary));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let table = typist::score::read_records(&a.records, a.strict, a.threads)?;
    tracing::debug!(
        rows = table.rows.len(),
        secs = t0.elapsed().as_secs_f64(),
        "records read"
    );
    super::records_read(&table, &a.records)?;
    let summary = typist::score::summarize(
        &table,
        &typist::score::Options {
            bootstrap: a.bootstrap,
            seed: a.seed,
            pass: a.pass,
            curve_bands: a.bands,
        },
    );
    tracing::debug!(secs = t0.elapsed().as_secs_f64(), "summarized");
    // The table (56 bytes a record) is freed on a thread of its own while the summary is
    // written.
    let freed = std::thread::spawn(move || drop(table));
    super::warn_duplicates("score", summary.duplicates, &a.records);
    if a.json {
        out!("{}", serde_json::to_string(&summary)?);
    } else {
        out!("{}", typist::score::score_table(&summary));
    }
    let _ = freed.join();
    let silent = silent_assistants(&summary);
    if !silent.is_empty() {
        eprintln!("typist score: no answered case from {}", silent.join(", "));
        return Ok(ExitCode::from(EXIT_NO_ANSWERS));
    }
    Ok(ExitCode::SUCCESS)
}

pub fn bench(c: BenchCommand) -> Result<ExitCode> {
    let table = match c {
        BenchCommand::Run(opts) => match opts.large() {
            Some(large) => typist::bench::large(&large)?,
            None => typist::bench::run(&opts.into())?,
        },
        BenchCommand::Score(opts) => typist::bench::score(&opts.into())?,
        BenchCommand::Coverage(opts) => typist::bench::coverage(&opts.into())?,
        BenchCommand::Model(flags) => return super::bench_model::run(*flags),
        BenchCommand::Serve(f) => typist::bench::serve(&typist::bench::ServeBenchOptions {
            dataset: f.dataset,
            rate: f.rate,
            assistant: f.assistant,
            runs: f.runs.max(1),
            jobs: f.jobs.max(1),
        })?,
        BenchCommand::Tests(f) => {
            use typist::check::tests_bench::{bench_tests, table};
            typist::sandbox::bwrap()?;
            // (The bench makes its own cache.)
            let b = bench_tests(&typist::check::tests_run::TestsOptions::new(
                vec![f.records],
                f.dataset,
                f.test_timeout,
                f.jobs,
            ))?;
            if f.json {
                serde_json::to_string(&b)?
            } else {
                table(&b)
            }
        }
    };
    out!("{table}");
    Ok(ExitCode::SUCCESS)
}

pub fn check(a: CheckArgs) -> Result<ExitCode> {
    if a.tests {
        return check_tests(a);
    }
    let checker = a
        .with
        .as_deref()
        .map(|n| profile::find_profile(n, a.editors.as_deref()))
        .transpose()?;
    let opts = typist::check::CheckOptions {
        records: super::records_files(a.records)?,
        dataset: a.dataset,
        single_repo: a.single_repo,
        checker,
    };
    let reports = runtime()?.block_on(typist::check::check(&opts))?;
    for r in reports {
        out!(
            "{}: {} suggestions checked, {} keep the syntax valid, {} left out{} -> {}",
            r.records.display(),
            r.checked,
            r.valid,
            r.left_out,
            match &opts.checker {
                Some(p) => format!(
                    "; {}: {} diagnosed, {} add no error, {} failed",
                    p.name, r.diagnosed, r.no_new_error, r.checker_failed
                ),
                None => String::new(),
            },
            r.sidecar.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `--kinds`' names as token kinds; an unknown name refused with the valid ones (and
/// the one it most likely misspells).
fn token_kinds(names: &[String]) -> Result<Vec<typist::dataset::TokenKind>> {
    use typist::dataset::TokenKind;
    let all = TokenKind::ALL;
    let known: Vec<&str> = all.iter().map(|k| k.as_str()).collect();
    let mut kinds = Vec::new();
    for n in names {
        match all.iter().find(|k| k.as_str() == n.trim()) {
            Some(k) if !kinds.contains(k) => kinds.push(*k),
            Some(_) => {}
            None => {
                let hint = typist::editor::profile::did_you_mean(n.trim(), known.iter().copied())
                    .map(|k| format!("did you mean `{k}`? "))
                    .unwrap_or_default();
                anyhow::bail!(
                    "--kinds: no token kind named {:?}; {hint}(known: {})",
                    n.trim(),
                    known.join(", ")
                );
            }
        }
    }
    Ok(kinds)
}

pub fn sample(a: SampleArgs) -> Result<ExitCode> {
    if a.cases == SampleCases::Edits {
        return super::sample_edits::sample_edits(a);
    }
    if !a.git.is_empty() || a.commits.is_some() || !a.releases.is_empty() {
        anyhow::bail!("--git, --commits and --releases are options of --cases edits");
    }
    let dataset = a
        .dataset
        .clone()
        .context("--dataset DIR is needed (or --cases edits --git REPO, or --releases OLD NEW)")?;
    let opts = a.sampling.layer().sample_options()?;
    if a.cases != SampleCases::Tokens
        && (!a.prefix.is_empty() || a.context.is_some() || !a.kinds.is_empty())
    {
        anyhow::bail!("--prefix, --context and --kinds are options of --cases tokens");
    }
    let kinds = token_kinds(&a.kinds)?;
    if a.cases != SampleCases::Blocks && a.max_lines.is_some() {
        anyhow::bail!("--max-lines is an option of --cases blocks");
    }
    if a.max_lines == Some(0) {
        anyhow::bail!("--max-lines must be at least 1");
    }
    if a.out.exists() && !a.force {
        anyhow::bail!(
            "{} exists: runs made from it would be orphaned; choose another --out, or add --force to replace it",
            a.out.display()
        );
    }
    let ds = typist::dataset::walk(
        &dataset,
        &typist::dataset::WalkOptions {
            single_repo: a.sampling.single_repo,
            ..Default::default()
        },
    )?;
    let (plan, tokens) = match a.cases {
        SampleCases::Lines => (typist::dataset::sample(&ds, &opts), None),
        SampleCases::Blocks => (
            typist::dataset::sample_blocks(
                &ds,
                &opts,
                a.max_lines.unwrap_or(typist::dataset::BLOCK_MAX_LINES),
            ),
            None,
        ),
        SampleCases::Tokens => {
            let mut tok = TokenOptions::default();
            if !a.prefix.is_empty() {
                tok.prefixes = a.prefix.clone();
            }
            tok.context = a.context.unwrap_or(tok.context);
            tok.kinds = kinds;
            let (plan, summary) = tokens::sample_tokens(&ds, &opts, &tok);
            (plan, Some(summary))
        }
        SampleCases::Edits => unreachable!("--cases edits is sampled by sample_edits"),
    };
    let files: usize = ds.repos.iter().map(|r| r.files.len()).sum();
    if plan.is_empty() {
        anyhow::bail!("{}", super::no_cases(&ds));
    }
    let source = typist::dataset::PlanSource::new(&dataset, a.sampling.single_repo, &a.out);
    typist::dataset::write_plan(&a.out, &plan, Some(&source))?;
    out!(
        "{} from {} in {} ({} skipped) -> {} ({})",
        typist::score::count(plan.len() as u64, "case"),
        typist::score::count(files as u64, "file"),
        super::layout(&ds),
        ds.skipped.len(),
        a.out.display(),
        typist::dataset::plan_hash(&plan)
    );
    if let Some(s) = &tokens {
        out!("{}", token_summary(s));
    }
    for s in &ds.skipped {
        eprintln!("  skipped {}: {}", s.path, s.reason);
    }
    Ok(ExitCode::SUCCESS)
}

/// What token sampling found: tokens, cases by kind and by prefix, files without a
/// grammar.
fn token_summary(s: &tokens::TokenSummary) -> String {
    let list = |m: Vec<(String, usize)>| {
        m.iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let kinds = list(
        s.cases_by_kind
            .iter()
            .map(|(k, n)| (k.as_str().to_string(), *n))
            .collect(),
    );
    let prefixes = list(
        s.cases_by_prefix
            .iter()
            .map(|(p, n)| (p.to_string(), *n))
            .collect(),
    );
    let mut text = format!(
        "  {} of {} tokens sampled; cases by kind: {}; by typed prefix: {}",
        s.sampled, s.found, kinds, prefixes
    );
    if !s.no_grammar.is_empty() {
        let langs = list(
            s.no_grammar
                .iter()
                .map(|(l, n)| (l.name().to_string(), *n))
                .collect(),
        );
        text.push_str(&format!(
            "\n  no token cases from files without a grammar: {langs}"
        ));
    }
    text
}

/// `typist report` on next-edit records: the summary and the predicted edits beside
/// the true ones (`report::next_edits`).
fn report_edits(a: &ReportArgs) -> Result<ExitCode> {
    if a.csv.is_some() {
        anyhow::bail!("--csv writes line cases' pairs: next-edit records have none");
    }
    let mut records = Vec::new();
    for p in &a.records {
        records.extend(typist::score::edit_records::read_edit_records(p)?);
    }
    let summary = typist::score::edit_records::summarize_records(&records, a.bootstrap, a.seed);
    let (html, md) = typist::report::next_edits::build(&records, &summary);
    super::write_scrubbed(&a.out, &html)?;
    if let Some(p) = &a.markdown {
        super::write_scrubbed(p, &md)?;
    }
    out!("report: {}", a.out.display());
    Ok(ExitCode::SUCCESS)
}

pub fn report(mut a: ReportArgs) -> Result<ExitCode> {
    a.records = super::records_files(a.records)?;
    if a.records
        .iter()
        .all(|p| typist::score::edit_records::is_edit_records(p))
    {
        return report_edits(&a);
    }
    let r = typist::report::build(
        &a.records,
        &typist::report::ReportOptions {
            bootstrap: a.bootstrap,
            seed: a.seed,
            pass: a.pass,
        },
    )?;
    super::some_records(
        r.summary.assistants.len(),
        &a.records,
        r.summary.skipped_lines,
        None,
    )?;
    if r.summary.skipped_lines > 0 {
        eprintln!(
            "typist: skipped {} malformed line(s) (a cut last line?); `typist score` names them",
            r.summary.skipped_lines
        );
    }
    super::warn_duplicates("report", r.summary.duplicates, &a.records);
    super::write_scrubbed(&a.out, &r.html)?;
    if let Some(md) = &a.markdown {
        super::write_scrubbed(md, &r.markdown)?;
    }
    if let Some(c) = &a.csv {
        typist::report::pairs::write_csv(c, &r.pairs)?;
    }
    out!("report: {}", a.out.display());
    Ok(ExitCode::SUCCESS)
}

pub fn merge(a: MergeArgs) -> Result<ExitCode> {
    // A shard's records file stands for its folder (where its manifest is).
    let shards: Vec<std::path::PathBuf> = a
        .shards
        .iter()
        .map(|p| match p.parent() {
            Some(dir) if p.is_file() => dir.to_path_buf(),
            _ => p.clone(),
        })
        .collect();
    let n = typist::replay::merge(&shards, &a.out)?;
    // Scored and reported as one run would be (`score.json`, and `report.html` for a
    // line run).
    let manifest: serde_json::Value = std::fs::read_to_string(a.out.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    if manifest["kind"] == "edits" {
        super::run_edits::write_score(&a.out)?;
    } else {
        super::run::write_score(&a.out)?;
    }
    out!("{n} records -> {}", a.out.join("records.jsonl").display());
    Ok(ExitCode::SUCCESS)
}

pub fn host(flags: super::host_args::HostFlags) -> Result<ExitCode> {
    let rt = runtime()?;
    match flags.listen.as_deref() {
        Some(at) => {
            let at = typist::host::listen::Listen::parse(at)?;
            rt.block_on(typist::host::listen::serve_listen(flags.into(), &at))?;
        }
        None => rt.block_on(typist::host::serve_stdio(flags.into())),
    }
    Ok(ExitCode::SUCCESS)
}

pub fn serve_model(a: ServeModelArgs) -> Result<ExitCode> {
    typist::host::serve_model::serve(a.port, a.log_requests.as_deref(), &a.upstream.into())?;
    Ok(ExitCode::SUCCESS)
}

pub fn drill(a: DrillArgs) -> Result<ExitCode> {
    use typist::drill::DrillOptions;
    let mut opts = if a.quick {
        DrillOptions::quick(a.dataset)
    } else {
        DrillOptions::long(a.dataset)
    };
    opts.seed = a.seed;
    opts.keep = a.keep;
    opts.editor = a.editor.unwrap_or_default();
    if let Some(r) = a.rate {
        opts.rate = r;
    }
    if let Some(k) = a.kills {
        opts.kills = k;
    }
    let report = typist::drill::run(&opts)?;
    if a.json {
        out!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        out!("{}", typist::drill::table(&report).trim_end());
    }
    Ok(if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

pub fn profiles(a: ProfilesArgs) -> Result<ExitCode> {
    if let Some(name) = &a.show {
        let p = match (name.as_str(), a.server.ad_hoc()?) {
            ("", Some(p)) => p,
            ("", None) => anyhow::bail!(
                "--show needs a profile's NAME, or --server, --dialect and --language to build one"
            ),
            (n, Some(p)) if n == p.name => p,
            (n, _) => profile::find_profile(n, a.editors.as_deref())?,
        };
        out!("{}", p.to_toml()?.trim_end());
        return Ok(ExitCode::SUCCESS);
    }
    out!("{:<28} {:<17} SERVER", "PROFILE", "DIALECT");
    for p in profile::all_profiles(a.editors.as_deref())? {
        let found = p
            .resolve_command()
            .map(|c| c.display().to_string())
            .unwrap_or_else(|| "not installed".into());
        out!("{:<28} {:<17} {}", p.name, dialect_name(p.dialect), found);
    }
    Ok(ExitCode::SUCCESS)
}

/// A dialect's name as `--dialect` takes it.
fn dialect_name(d: typist::editor::DialectKind) -> &'static str {
    super::choice::DIALECT
        .iter()
        .find(|(k, _, _)| *k == d)
        .map(|(_, name, _)| *name)
        .expect("DIALECT names every dialect")
}

pub fn dataset_add(a: super::args::DatasetAddArgs) -> Result<ExitCode> {
    use typist::dataset::fetch::{self, Added, Spec};
    let specs: Vec<Spec> = a.specs.iter().map(|s| s.parse()).collect::<Result<_>>()?;
    let opts = fetch::Options {
        test_command: a.test_command.clone(),
        env: !a.no_env,
        python: a.python.clone(),
    };
    let added = fetch::add(&a.dir, &specs, &opts)?;
    if a.json {
        out!("{}", serde_json::to_string_pretty(&added)?);
        return Ok(ExitCode::SUCCESS);
    }
    for x in &added {
        let (p, said) = match x {
            Added::Added(p) => (p, "added".to_string()),
            Added::Unchanged(p) => (p, "already there, its archive unchanged".to_string()),
            Added::Unchecked { package, why } => (
                package,
                format!("already there; not checked against the registry ({why})"),
            ),
        };
        let tests = match (&p.test_command, &p.no_tests) {
            (Some(c), _) => format!("tests: {c}"),
            (None, Some(why)) => format!("no test command: {why}"),
            (None, None) => "no test command".to_string(),
        };
        out!(
            "{}: {said} in {}/{} ({} {}, sha256 {}…, licence {}; {tests})",
            p.spec,
            a.dir.display(),
            p.folder,
            p.ecosystem,
            p.version,
            &p.sha256[..12.min(p.sha256.len())],
            p.licence.as_deref().unwrap_or("not stated")
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn check_tests(a: CheckArgs) -> Result<ExitCode> {
    use typist::check::tests_run::{TestsOptions, check_tests};
    let opts = TestsOptions::new(
        super::records_files(a.records)?,
        a.dataset,
        a.test_timeout,
        a.jobs,
    );
    typist::sandbox::bwrap()?;
    for r in check_tests(&opts)? {
        out!("{}", r.line());
        for (why, n) in &r.left_out_why {
            out!("  left out ({n}): {why}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
