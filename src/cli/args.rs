//! The command line's flags, parsed by clap (the first of two steps: the commands map
//! them onto the library's options and config layers; library types derive no CLI
//! trait).

use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct ReportArgs {
    /// Records files (JSON Lines), or run folders (their records.jsonl); several are
    /// read as one.
    #[arg(required = true, value_name = "RECORDS")]
    pub records: Vec<PathBuf>,
    /// The HTML report.
    #[arg(long, default_value = "report.html", value_name = "FILE")]
    pub out: PathBuf,
    /// A compact markdown summary (for a pull-request comment).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// The pairs with c_help as CSV (for pandas or polars).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Bootstrap resamples of the intervals and the curves' bands.
    #[arg(long, default_value_t = 1000, value_name = "B")]
    pub bootstrap: usize,
    /// Seed of the bootstrap's RNG (same seed, same figures on every machine).
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,
    /// Which pass to report (a run with --passes 2 has passes 1 and 2).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub pass: u32,
}

#[derive(clap::Args, Debug, Clone)]
pub struct SampleArgs {
    /// Dataset folder: each top-level folder is a repository (the folder itself with
    /// --single-repo). With --cases edits: each repository's `debian/patches` (a
    /// Debian source tree from `typist dataset add DIR debian:SOURCE`) are sessions.
    #[arg(long, value_name = "DIR", required_unless_present_any = ["git", "releases"])]
    pub dataset: Option<PathBuf>,
    /// With --cases edits: a git repository whose commits are sessions (repeatable).
    #[arg(long, value_name = "REPO")]
    pub git: Vec<PathBuf>,
    /// With --cases edits: two releases of a package, unpacked (e.g. zlib-1.2.13
    /// zlib-1.3): each code file changed between them is a session, typed from the old
    /// text to the new.
    #[arg(long, num_args = 2, value_names = ["OLD", "NEW"])]
    pub releases: Vec<PathBuf>,
    /// With --git: the commits, as `git rev-list` takes them (e.g. v1.0..v1.1) [default:
    /// the last 200 first-parent commits of HEAD].
    #[arg(long, value_name = "RANGE")]
    pub commits: Option<String>,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    /// What a case is: a whole line, an identifier to complete (found by
    /// tree-sitter; the rate, seed and caps then count tokens), or a block (the line and
    /// the deeper lines after it, methodology §9; the same lines as `lines`).
    #[arg(long, value_enum, default_value_t = SampleCases::Lines)]
    pub cases: SampleCases,
    /// With --cases blocks: the most lines an expected block has (K) [default: 8].
    #[arg(long, value_name = "K")]
    pub max_lines: Option<usize>,
    /// With --cases tokens: characters of the token typed before the list is ranked,
    /// each its own case [default: 0,1,2,3].
    #[arg(long, value_delimiter = ',', value_name = "K,...")]
    pub prefix: Vec<u32>,
    /// With --cases tokens: what the server's document holds around the token [default:
    /// full].
    #[arg(long, value_parser = super::choice::choice(super::choice::TOKEN_CONTEXT))]
    pub context: Option<typist::dataset::TokenContext>,
    /// With --cases tokens: only tokens of these kinds are cases (member, call, name,
    /// import, type) [default: every kind].
    #[arg(long, value_delimiter = ',', value_name = "KIND,...")]
    pub kinds: Vec<String>,
    /// Where to write the plan.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Replace an existing plan file (runs made from the old plan can no longer resume
    /// from it or be scored against it).
    #[arg(long)]
    pub force: bool,
}

/// What `typist sample` makes a case of.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleCases {
    /// A code line to predict (the study's cases).
    Lines,
    /// An identifier to complete from a list (methodology §6).
    Tokens,
    /// A code line and the lines after it indented at least as deeply, scored as one
    /// block (methodology §9).
    Blocks,
    /// Edit sessions from version control (commits with --git, Debian patches with
    /// --dataset, two releases with --releases), each paused moment a case for next
    /// edits (methodology §13).
    Edits,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cases {
    /// A code line to predict (the study's cases).
    Lines,
    /// An identifier to complete from a list (methodology §6).
    Tokens,
}

#[derive(clap::Args, Debug, Clone)]
pub struct MergeArgs {
    /// Output folders of the shards (a records file stands for its folder).
    #[arg(required = true, value_name = "DIR")]
    pub shards: Vec<PathBuf>,
    /// The merged run's folder (records, manifest, score and report, as one run writes
    /// them).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

#[derive(clap::Args, Debug, Clone)]
pub struct ServeModelArgs {
    /// Port on 127.0.0.1 (0: any free one; the address is printed first).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Write every request (path and body) as a JSON line here.
    #[arg(long, value_name = "FILE")]
    pub log_requests: Option<PathBuf>,
    #[command(flatten)]
    pub upstream: super::host_args::UpstreamFlags,
}

#[derive(clap::Args, Debug, Clone)]
#[command(group(clap::ArgGroup::new("what").args(["target", "assistant", "list"]).required(true)))]
pub struct LoginArgs {
    /// `copilot`: GitHub Copilot's own device flow in its language server; the GitHub
    /// sign-in it keeps also serves Copilot in Neovim and VS Code (`[signin] github`).
    #[arg(value_enum, value_name = "copilot")]
    pub target: Option<LoginTarget>,
    /// The assistant (an editor profile's name) to sign in, in `--editor`.
    #[arg(long, value_name = "NAME", conflicts_with = "target")]
    pub assistant: Option<String>,
    /// The editor to sign it in: neovim or vscode (the same launch a run uses).
    #[arg(long, value_parser = super::choice::choice(super::choice::EDITOR), requires = "assistant")]
    pub editor: Option<typist::editor::EditorKind>,
    /// Run this command (a palette command's title or id in VS Code, an Ex command in
    /// Neovim) instead of the profile's `[signin] command`; repeatable, in order.
    #[arg(long = "command", value_name = "CMD", requires = "assistant")]
    pub commands: Vec<String>,
    /// Type TEXT into the next prompt a command opens; repeatable, in order. `-` reads
    /// a line from standard input (keeps a token off the command line).
    #[arg(long = "answer", value_name = "TEXT", requires = "assistant")]
    pub answers: Vec<String>,
    /// Copilot: read a GitHub OAuth token (`gho_…`/`ghu_…`, as copilot.vim keeps) from
    /// standard input and keep it, instead of the device flow (not checked until a
    /// session asks the server).
    #[arg(long, requires = "target")]
    pub token_stdin: bool,
    /// List the vault's entries (name, when saved, when last written back).
    #[arg(long, conflicts_with_all = ["target", "assistant"])]
    pub list: bool,
    /// With --list: JSON.
    #[arg(long, requires = "list")]
    pub json: bool,
    /// Copilot: the profile whose server runs the flow.
    #[arg(long, default_value = "copilot", value_name = "NAME")]
    pub profile: String,
    /// Another folder of profiles, searched first: its profiles are added to the
    /// built-in ones (editors/), and one named like a built-in replaces it.
    #[arg(long, value_name = "DIR")]
    pub editors: Option<PathBuf>,
    /// How long the sign-in may take (Copilot: before the network is taken as
    /// unreachable; an editor: the whole sign-in, the person's typing included).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,
}

/// `typist logout`.
#[derive(clap::Args, Debug, Clone)]
#[command(group(clap::ArgGroup::new("what").args(["target", "assistant"]).required(true)))]
pub struct LogoutArgs {
    /// `copilot`: the GitHub sign-in of `typist login copilot`.
    #[arg(value_enum, value_name = "copilot")]
    pub target: Option<LoginTarget>,
    /// The assistant whose entry goes, with --editor.
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with = "target",
        requires = "editor"
    )]
    pub assistant: Option<String>,
    /// The editor it was signed in with (`typist login --list` shows the entries).
    #[arg(long, value_parser = super::choice::choice(super::choice::EDITOR))]
    pub editor: Option<typist::editor::EditorKind>,
}

#[derive(clap::Args, Debug, Clone)]
pub struct DoctorArgs {
    /// Only these profiles (repeatable); all in editors/ by default.
    #[arg(long = "profile", value_name = "NAME")]
    pub profiles: Vec<String>,
    /// Another folder of profiles, searched first: its profiles are added to the
    /// built-in ones (editors/), and one named like a built-in replaces it.
    #[arg(long, value_name = "DIR")]
    pub editors: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Write each server's JSONL transcript (secrets redacted) into DIR.
    #[arg(long, value_name = "DIR")]
    pub transcripts: Option<PathBuf>,
    /// Examine each profile inside this editor [default: typist].
    #[arg(long, value_parser = super::choice::choice(super::choice::EDITOR))]
    pub editor: Option<typist::editor::EditorKind>,
    /// With --editor vscode: a VS Code extension to install with an extension-only
    /// profile (a .vsix file or a marketplace id; repeatable).
    #[arg(long = "extension", value_name = "FILE.vsix|ID")]
    pub extensions: Vec<String>,
    #[command(flatten)]
    pub server: super::server_args::ServerFlags,
}

#[derive(clap::Args, Debug, Clone)]
pub struct ScoreArgs {
    /// Records files (JSON Lines); several are read as one.
    #[arg(required = true, value_name = "RECORDS")]
    pub records: Vec<PathBuf>,
    /// Print the full summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Bootstrap resamples (repository level).
    #[arg(long, default_value_t = 1000, value_name = "B")]
    pub bootstrap: usize,
    /// Seed of the bootstrap's RNG (same seed, same figures on every machine).
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,
    /// Which pass to score.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub pass: u32,
    /// A malformed or truncated line is fatal instead of skipped.
    #[arg(long)]
    pub strict: bool,
    /// Parsing threads (0: every core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Also bootstrap 95% bands of the H(S|t) curves.
    #[arg(long)]
    pub bands: bool,
}

/// `typist compare`.
#[derive(clap::Args, Debug, Clone)]
#[command(
    after_help = "Example: typist compare before after --label old --label new\n  (each assistant of run A becomes A/assistant; p-values pair the shared cases)"
)]
pub struct CompareArgs {
    /// The two runs: their output folders (or records files).
    #[arg(required = true, num_args = 2, value_name = "RUN")]
    pub runs: Vec<PathBuf>,
    /// The runs' labels, in order (`--label A --label B`) [default: the runs' folder
    /// names].
    #[arg(long = "label", value_name = "NAME")]
    pub labels: Vec<String>,
    /// Print the full summary as JSON, with a `compare` object (labels, shared cases,
    /// notes).
    #[arg(long)]
    pub json: bool,
    /// Bootstrap resamples.
    #[arg(long, default_value_t = 1000, value_name = "B")]
    pub bootstrap: usize,
    /// Seed of the bootstrap's RNG.
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,
    /// Which pass to score.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub pass: u32,
    /// Parsing threads (0: every core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
}

#[derive(clap::Args, Debug, Clone)]
pub struct CheckArgs {
    /// Records files (JSON Lines); each gets its own sidecar.
    #[arg(required = true, value_name = "RECORDS")]
    pub records: Vec<PathBuf>,
    /// The dataset the records were replayed from.
    #[arg(long, value_name = "DIR")]
    pub dataset: PathBuf,
    /// The dataset folder is one repository.
    #[arg(long)]
    pub single_repo: bool,
    /// A checker profile (e.g. pyright): error diagnostics new in the file with the
    /// suggestion accepted, in a session of its own.
    #[arg(long, value_name = "PROFILE")]
    pub with: Option<String>,
    /// Another folder of profiles, searched first: its profiles are added to the
    /// built-in ones (editors/), and one named like a built-in replaces it.
    #[arg(long, value_name = "DIR")]
    pub editors: Option<PathBuf>,
    /// Run the repository's own tests on each answered case instead (methodology §12):
    /// the tests that execute the line, in a sandbox, on the file with the suggestion
    /// accepted; needs a dataset made by `typist dataset add` (its test command and
    /// environment). Results in NAME.tests.jsonl beside the records.
    #[arg(long, conflicts_with = "with")]
    pub tests: bool,
    /// With --tests: test runs at once.
    #[arg(long, value_name = "N", default_value_t = 2, requires = "tests")]
    pub jobs: usize,
    /// With --tests: seconds one test run may take before it is killed (an `error`).
    #[arg(long, value_name = "SECS", default_value_t = 120, requires = "tests")]
    pub test_timeout: u64,
}

#[derive(clap::Args, Debug, Clone)]
pub struct ProfilesArgs {
    /// Another folder of profiles, searched first: its profiles are added to the
    /// built-in ones (editors/), and one named like a built-in replaces it.
    #[arg(long, value_name = "DIR")]
    pub editors: Option<PathBuf>,
    /// Print this profile as TOML, ready to save as editors/NAME.toml (without NAME:
    /// the one built from --server flags).
    #[arg(long, value_name = "NAME", num_args = 0..=1, default_missing_value = "")]
    pub show: Option<String>,
    #[command(flatten)]
    pub server: super::server_args::ServerFlags,
}

#[derive(clap::Args, Debug, Clone)]
pub struct DrillArgs {
    /// About a minute: over 1,000 faults and 3 kills (what CI runs). Without it: every
    /// code line, a heavier fault mix and 20 kills.
    #[arg(long)]
    pub quick: bool,
    /// The dataset the drill's plan is sampled from.
    #[arg(long, value_name = "DIR", default_value = "fixtures/dataset")]
    pub dataset: PathBuf,
    /// SIGKILLs of the kill drill (default 3 with --quick, 20 without).
    #[arg(long, value_name = "N")]
    pub kills: Option<u32>,
    /// Share of the dataset's code lines that are cases (default 0.8 with --quick, 1
    /// without).
    #[arg(long, value_name = "P")]
    pub rate: Option<f64>,
    /// Seed of the plan's sampling, the faults and the kills' moments.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Keep the drill's plan, records and fault log in this folder.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
    /// The figures as JSON on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Drill typing into this editor [default: typist]: with neovim or vscode, every
    /// editor process and every server it starts must be gone after each kill too.
    #[arg(long, value_parser = super::choice::choice(super::choice::EDITOR))]
    pub editor: Option<typist::editor::EditorKind>,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy)]
pub enum LoginTarget {
    /// GitHub Copilot (`@github/copilot-language-server`'s device flow).
    Copilot,
}

#[derive(clap::Args, Debug, Clone, Default)]
pub struct SamplingArgs {
    /// Probability that a code line (with `sample --cases tokens`: a token) is a case
    /// (default: 0.01, as the study used; for `run`, config.toml's `rate` when set).
    #[arg(long, value_name = "P")]
    pub rate: Option<f64>,
    /// Seed of the sampling draw (default: 0; for `run`, config.toml's `seed` when set).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// `all`: every code line is a case (no sampling).
    #[arg(long, value_name = "all", value_parser = ["all"])]
    pub lines: Option<String>,
    /// At most N cases from one file (default: no cap).
    #[arg(long, value_name = "N")]
    pub max_per_file: Option<usize>,
    /// At most N cases from one repository (default: no cap).
    #[arg(long, value_name = "N")]
    pub max_per_repo: Option<usize>,
    /// The dataset folder is one repository.
    #[arg(long)]
    pub single_repo: bool,
}

#[derive(clap::Args, Debug, Clone, Default)]
pub struct RunArgs {
    /// The run's defaults (default: ./config.toml when present).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Dataset folder: each top-level folder is a repository (default: config.toml's
    /// `dataset`; with --plan, the plan's).
    #[arg(long, value_name = "DIR")]
    pub dataset: Option<PathBuf>,
    /// A recorded plan (needs the dataset it was made from).
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// Assistant profiles (repeatable; `typist profiles` lists them) (default:
    /// config.toml's `assistants`).
    #[arg(long = "assistant", value_name = "NAME")]
    pub assistants: Vec<String>,
    /// Another folder of profiles, searched first: its profiles are added to the
    /// built-in ones (editors/), and one named like a built-in replaces it (default:
    /// config.toml's `editors`).
    #[arg(long, value_name = "DIR")]
    pub editors: Option<PathBuf>,
    /// Parallel workers, each with its own server process (default: 1, or
    /// config.toml's `jobs`).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Replay the plan this many times (2 for repeat-skip analysis) (default: 1, or
    /// config.toml's `passes`).
    #[arg(long, value_name = "K")]
    pub passes: Option<u32>,
    /// Output folder: records.jsonl, manifest.json, score.json and report.html; one that
    /// holds records is refused unless --resume (default: config.toml's `out`, else out).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Continue the run in --out as its manifest says it was made, skipping recorded
    /// cases: no other flag is needed; one given again must agree (--jobs,
    /// --retry-errors, --max-restarts, --transcripts, --quiet, --check may differ).
    #[arg(long)]
    pub resume: bool,
    /// With --resume: ask again the cases recorded as error or timeout (the new record
    /// replaces the old one).
    #[arg(long)]
    pub retry_errors: bool,
    /// Start every assistant's program (its server, Neovim, VS Code and its browser)
    /// in a sandbox of its own where the plan, the dataset and --out are not there:
    /// for assistants you do not trust to keep from the truth (bubblewrap with user
    /// namespaces; typist serve's jobs always run so).
    #[arg(long)]
    pub assistant_sandbox: bool,
    /// With --assistant-sandbox: another folder or file its programs do not see
    /// (repeatable).
    #[arg(long, value_name = "PATH", requires = "assistant_sandbox")]
    pub assistant_sandbox_hide: Vec<PathBuf>,
    /// For the interruption drills: a worker panics after N records.
    #[arg(long, value_name = "N", hide = true)]
    pub drill_panic_at: Option<u64>,
    /// Run part of the plan: i/n (0-based); auto (a Slurm array says both); auto/n (the
    /// index from JOB_COMPLETION_INDEX of a Kubernetes Indexed Job or from Slurm, n given).
    #[arg(long, value_name = "i/n|auto|auto/n")]
    pub shard: Option<String>,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    /// What the server's document holds around the case's line (default: prefix, or
    /// config.toml's `[conditions]`, as every condition below).
    #[arg(long, value_parser = super::choice::choice(super::choice::CONTEXT))]
    pub context: Option<typist::replay::typing::ContextMode>,
    /// With --context prefix: lines below the case's line also in the document
    /// (default: 0).
    #[arg(long, value_name = "N")]
    pub suffix_lines: Option<u32>,
    /// How the context reaches the server (default: paste).
    #[arg(long, value_parser = super::choice::choice(super::choice::TYPING))]
    pub typing: Option<typist::replay::typing::TypingMode>,
    /// With --typing type: one change per line or per character (default: line).
    #[arg(long, value_parser = super::choice::choice(super::choice::GRANULARITY))]
    pub granularity: Option<typist::replay::typing::Granularity>,
    /// Characters of the expected line typed before asking (default: 0).
    #[arg(long, value_name = "K")]
    pub typed_prefix: Option<u32>,
    /// The trigger kind of the requests (default: automatic).
    #[arg(long, value_parser = super::choice::choice(super::choice::TRIGGER))]
    pub trigger: Option<typist::editor::TriggerKind>,
    /// Wait this long after the last change before asking (default: 0).
    #[arg(long, value_name = "MS")]
    pub settle_ms: Option<u64>,
    /// The editor typed into [default: typist].
    #[arg(long, value_parser = super::choice::choice(super::choice::EDITOR))]
    pub editor: Option<typist::editor::EditorKind>,
    /// How typist's own client filters and sorts completion lists [default: vscode].
    #[arg(long, value_parser = super::choice::choice(super::choice::LIST_RULE))]
    pub list_rule: Option<typist::editor::ranking::ListRule>,
    /// Keep the inserted texts of only the first N items of each completion list shown
    /// (the record says it was cut; its rank is still the whole list's) [default: the
    /// whole list].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub list_cap: Option<u32>,
    /// A real editor's typing speed: milliseconds between two keys [default: 100].
    #[arg(long, value_name = "MS")]
    pub key_interval_ms: Option<u64>,
    /// A Lua file Neovim loads after typist's setup (a plugin's configuration).
    #[arg(long, value_name = "FILE.lua")]
    pub editor_config: Option<PathBuf>,
    /// Read a plugin's ghost text from this extmark namespace instead of Neovim's own
    /// inline completion (repeatable).
    #[arg(long = "editor-namespace", value_name = "NAME")]
    pub editor_namespaces: Vec<String>,
    /// With --editor-namespace: read only the plugin's chunks in this highlight group
    /// (repeatable), leaving out what it draws beside its suggestion (llama.vim's
    /// statistics in `llama_hl_fim_info`).
    #[arg(long = "editor-highlight", value_name = "GROUP")]
    pub editor_highlights: Vec<String>,
    /// With --editor vscode: a VS Code extension to install and measure (a .vsix file
    /// or a marketplace id; repeatable), with an extension-only assistant such as
    /// `vscode-extension`.
    #[arg(long = "extension", value_name = "FILE.vsix|ID")]
    pub extensions: Vec<String>,
    /// With --editor-namespace and with --editor vscode: nothing new shown this long
    /// after the last key (VS Code's fixture extension: after the answer) is an `empty`
    /// with its reason [default: 1000].
    #[arg(long, value_name = "MS")]
    pub display_deadline_ms: Option<u64>,
    /// Neighbouring files of the same repository opened before the case's file
    /// (default: 0).
    #[arg(long, value_name = "N")]
    pub open_tabs: Option<u32>,
    /// Keystrokes saved (methodology §10, completion golf): play each line case key by
    /// key, accepting the whole suggestion (full) or its matching words (word) when right.
    #[arg(long, value_name = "full|word", value_parser = super::choice::choice(super::choice::GOLF))]
    pub golf: Option<typist::replay::golf::GolfMode>,
    /// With --golf: requests per line at most (past it the rest is typed) [default: 64].
    #[arg(long, value_name = "N", requires = "golf")]
    pub golf_max_requests: Option<u32>,
    /// With an edits plan: how fast each session's events reach the editor: asap (each
    /// as soon as the editor took the one before), recorded (as far apart as the person
    /// made them, a gap over 5 s waited 5 s), or milliseconds between two events
    /// [default: asap].
    #[arg(long, value_name = "asap|recorded|MS", value_parser = typist::replay::Pace::parse)]
    pub pace: Option<typist::replay::Pace>,
    /// Record no latencies (records then are byte-identical across runs).
    #[arg(long)]
    pub no_latency: bool,
    /// After the replay, `typist check` the records (methodology §11): each suggestion
    /// put in its file and parsed; the score and the report then show the syntax figures.
    #[arg(long)]
    pub check: bool,
    /// With --check: also a checker profile's error diagnostics new in the file (e.g.
    /// pyright), in a session of its own.
    #[arg(long, value_name = "PROFILE", requires = "check")]
    pub check_with: Option<String>,
    /// After the replay, run the repositories' own tests on each answered case, as
    /// `typist check --tests` (methodology §12; the dataset needs `typist dataset add`'s
    /// dataset.toml): results in records.tests.jsonl, and the score and the report then
    /// show tests pass. Test runs use the run's --jobs.
    #[arg(long)]
    pub check_tests: bool,
    /// With --check-tests: seconds one test run may take before it is killed (an
    /// `error`).
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 120,
        requires = "check_tests"
    )]
    pub test_timeout: u64,
    /// Server restarts a worker may make in a row before the run stops.
    #[arg(long, default_value_t = 3)]
    pub max_restarts: u32,
    /// No progress bar and no score table.
    #[arg(long)]
    pub quiet: bool,
    /// Write every session's LSP transcript (JSONL, secrets redacted) into DIR.
    #[arg(long, value_name = "DIR")]
    pub transcripts: Option<PathBuf>,
    #[command(flatten)]
    pub server: super::server_args::ServerFlags,
}

#[derive(clap::Subcommand)]
pub enum BenchCommand {
    /// Replay throughput: the driver against an instant server, and the n-gram
    /// baseline, each with 1 and 2 jobs.
    #[command(
        after_help = "Example:\n  typist bench run --runs 1 --jobs 1,2\n  typist bench run --large-repo --runs 1"
    )]
    Run(BenchRunFlags),
    /// Time `typist score --json` on a generated records file, optionally beside the
    /// polars + rapidfuzz + numpy reference script.
    #[command(after_help = "Example:\n  typist bench score --records 100000 --runs 1")]
    Score(BenchScoreFlags),
    /// How often `typist score`'s intervals contain the value they estimate, on
    /// simulated populations (with and without repository effects) at several
    /// repository counts, resampling repositories and files.
    #[command(after_help = "Example:\n  typist bench coverage --replicates 100 --repos 4,12")]
    Coverage(BenchCoverageFlags),
    /// The model server's limit: run the plan through typist with every request that
    /// reaches each model service captured, send exactly those requests straight to a
    /// fresh server with the same settings, and compare the rates and the answers.
    #[command(
        after_help = "Example:\n  typist bench model --assistant smollm2 --dataset fixtures/dataset --rate 0.05"
    )]
    Model(Box<BenchModelFlags>),
    /// `typist check --tests`' speed: cases judged per hour with the tests selected by
    /// coverage, against the whole suite on each case, on the same cases in one run
    /// (both from an empty cache; the records' sidecar is untouched).
    #[command(
        after_help = "Example:\n  typist run --dataset .servers/datasets/tests --assistant typist-ngram --rate 0.2 --out out/tests\n  typist bench tests out/tests/records.jsonl --dataset .servers/datasets/tests --jobs 2"
    )]
    Tests(BenchTestsFlags),
    /// What a job costs through the benchmark service (`typist serve`) against the same
    /// `typist run` on the command line, pair by pair in one run.
    #[command(after_help = "Example:\n  typist bench serve --runs 3 --rate 0.2")]
    Serve(BenchServeFlags),
}

#[derive(clap::Args, Debug, Clone)]
pub struct BenchServeFlags {
    /// The dataset the plan is sampled from.
    #[arg(long, value_name = "DIR", default_value = "fixtures/dataset")]
    pub dataset: PathBuf,
    /// Share of code lines sampled into the plan.
    #[arg(long, default_value_t = 0.2)]
    pub rate: f64,
    /// The assistant measured both ways.
    #[arg(long, value_name = "NAME", default_value = "typist-ngram")]
    pub assistant: String,
    /// Pairs of runs (the order alternating).
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Workers of each run (its --jobs).
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
}

#[derive(clap::Args, Debug, Clone)]
pub struct BenchTestsFlags {
    /// The records whose answered cases are judged (a run on a dataset made by
    /// `typist dataset add`).
    #[arg(value_name = "RECORDS")]
    pub records: PathBuf,
    /// The dataset the records were replayed from, with its dataset.toml.
    #[arg(long, value_name = "DIR")]
    pub dataset: PathBuf,
    /// Test runs at once.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub jobs: usize,
    /// Seconds one test run may take before it is killed (an `error`).
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub test_timeout: u64,
    /// The figures as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Debug, Clone)]
pub struct BenchModelFlags {
    /// `typist run`'s flags; --out is the folder of the captured requests and the
    /// records [default: target/bench/model].
    #[command(flatten)]
    pub run: RunArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}
impl SamplingArgs {
    /// The sampling flags as a layer of the run's settings.
    pub fn layer(&self) -> typist::config::RunSection {
        typist::config::RunSection {
            rate: self.rate,
            seed: self.seed,
            lines: self.lines.clone(),
            max_per_file: self.max_per_file,
            max_per_repo: self.max_per_repo,
            single_repo: self.single_repo.then_some(true),
            ..Default::default()
        }
    }
}

impl RunArgs {
    /// The conditions with `--golf`'s and `--list-cap`'s, when given (else those of the
    /// settings).
    pub fn with_golf(
        &self,
        mut conditions: typist::replay::RunConditions,
    ) -> typist::replay::RunConditions {
        if let Some(mode) = self.golf {
            conditions.golf = Some(typist::replay::golf::Golf {
                mode,
                max_requests: self
                    .golf_max_requests
                    .unwrap_or(typist::replay::golf::DEFAULT_MAX_REQUESTS),
            });
        }
        if self.list_cap.is_some() {
            conditions.list_cap = self.list_cap;
        }
        conditions
    }

    /// The flags as the top layer of the run's settings (over `config.toml`).
    pub fn layer(&self) -> typist::config::Layer {
        use typist::config::{ConditionsLayer, Layer, RunSection};
        Layer {
            run: RunSection {
                dataset: self.dataset.clone(),
                plan: self.plan.clone(),
                assistants: self.assistants.clone(),
                out: self.out.clone(),
                jobs: self.jobs,
                passes: self.passes,
                editors: self.editors.clone(),
                ..self.sampling.layer()
            },
            conditions: ConditionsLayer {
                context: self.context,
                suffix_lines: self.suffix_lines,
                typing: self.typing,
                granularity: self.granularity,
                typed_prefix: self.typed_prefix,
                trigger: self.trigger,
                settle_ms: self.settle_ms,
                open_tabs: self.open_tabs,
                latency: self.no_latency.then_some(false),
                editor: self.editor,
                key_interval_ms: self.key_interval_ms,
                editor_config: self.editor_config.clone(),
                editor_namespaces: self.editor_namespaces.clone(),
                editor_highlights: self.editor_highlights.clone(),
                editor_extensions: self.extensions.clone(),
                display_deadline_ms: self.display_deadline_ms,
                list_rule: self.list_rule,
            },
        }
    }
}

#[derive(Debug, Clone, clap::Args)]
pub struct BenchScoreFlags {
    /// Records to generate (cases × assistants; 10000000 for the scale run, ~3 GB).
    #[arg(long, default_value_t = 1_000_000)]
    pub records: usize,
    /// Repositories the generated records are spread over.
    #[arg(long, default_value_t = 2000)]
    pub repos: usize,
    /// Assistants in the generated records.
    #[arg(long, default_value_t = 4)]
    pub assistants: usize,
    /// Bootstrap resamples (`typist score --bootstrap`).
    #[arg(long, default_value_t = 1000)]
    pub resamples: usize,
    /// Where the generated records file is kept (reused when present).
    #[arg(long, default_value = "target/bench")]
    pub dir: PathBuf,
    /// The code lines' dataset [default: the bundled fixtures/dataset].
    #[arg(long, value_name = "DIR")]
    pub dataset: Option<PathBuf>,
    /// The generator's seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Python with polars, rapidfuzz and numpy: also time benches/score_reference.py.
    #[arg(long, value_name = "PYTHON")]
    pub reference: Option<PathBuf>,
    /// Timed runs (the summary gives the best of them).
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
}

mirror_into!(BenchScoreFlags => typist::bench::BenchOptions {
    records, repos, assistants, resamples, dir, dataset, seed, reference, runs,
});

#[derive(Debug, Clone, clap::Args)]
pub struct BenchCoverageFlags {
    /// Simulated data sets per population and repository count.
    #[arg(long, default_value_t = 1000)]
    pub replicates: usize,
    /// Bootstrap resamples per interval (`typist score --bootstrap`).
    #[arg(long, default_value_t = 1000)]
    pub resamples: usize,
    /// Seed of the simulated populations and of the bootstrap.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Repository counts (each with four files per repository and about 160 lines).
    #[arg(long, value_delimiter = ',', default_values_t = [4usize, 8, 12, 20, 40])]
    pub repos: Vec<usize>,
    /// The figures as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}

mirror_into!(BenchCoverageFlags => typist::bench::CoverageOptions {
    replicates, resamples, seed, repos, json,
});

#[derive(Debug, Clone, clap::Args)]
pub struct BenchRunFlags {
    /// The dataset replayed.
    #[arg(long, default_value = "fixtures/dataset", value_name = "DIR")]
    pub dataset: PathBuf,
    /// Where the runs' plans, records and logs are kept.
    #[arg(long, default_value = "target/bench/run", value_name = "DIR")]
    pub dir: PathBuf,
    /// Runs of each assistant and worker count (the table gives the best of them).
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Assistants (profiles) to replay, each in its own runs.
    #[arg(
        long = "assistant",
        value_name = "NAME",
        default_values_t = ["typist-fixed".to_string(), "typist-ngram".to_string()]
    )]
    pub assistants: Vec<String>,
    /// Worker counts to compare.
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 2])]
    pub jobs: Vec<usize>,
    /// Sample code lines with this probability instead of replaying every one (for slow
    /// assistants such as a local model); with --cases tokens, tokens (required).
    #[arg(long, value_name = "P")]
    pub rate: Option<f64>,
    /// Code lines, or token cases replayed as completion-list sessions (one plan
    /// sampled at --rate with seed 1, replayed by every run).
    #[arg(long, value_enum, default_value_t = Cases::Lines)]
    pub cases: Cases,
    /// A real editor: every run is made with --editor typist and with this editor, and
    /// the table gives the editor's figures as ratios to typist's own client.
    #[arg(long, value_parser = super::choice::choice(super::choice::EDITOR))]
    pub editor: Option<typist::editor::EditorKind>,
    /// Issue 47's large-repository case instead: at each of --sizes, one repository of
    /// that many lines made of the `.py` files of SRC (default: Python's standard
    /// library) under --dir, replayed by typist-previous-line and typist-ngram with one
    /// job, each with its host's cache (TYPIST_CACHE_DIR) emptied, then warm; prints
    /// each file session's mean start and the peak memory, as ratios and as growth.
    #[arg(
        long,
        value_name = "SRC",
        num_args = 0..=1,
        conflicts_with_all = ["dataset", "assistants", "jobs", "rate", "cases", "editor"]
    )]
    pub large_repo: Option<Option<PathBuf>>,
    /// With --large-repo: the repositories' sizes, in lines.
    #[arg(
        long,
        value_name = "LINES",
        value_delimiter = ',',
        default_values_t = [20_000usize, 200_000],
        requires = "large_repo"
    )]
    pub sizes: Vec<usize>,
}

impl BenchRunFlags {
    /// The large-repository case's options, when --large-repo was given.
    pub fn large(&self) -> Option<typist::bench::LargeOptions> {
        self.large_repo
            .as_ref()
            .map(|src| typist::bench::LargeOptions {
                src: src.clone(),
                sizes: self.sizes.clone(),
                dir: self.dir.clone(),
                runs: self.runs,
            })
    }
}

impl From<BenchRunFlags> for typist::bench::RunOptions {
    fn from(f: BenchRunFlags) -> Self {
        typist::bench::RunOptions {
            dataset: f.dataset,
            dir: f.dir,
            runs: f.runs,
            assistants: f.assistants,
            jobs: f.jobs,
            rate: f.rate,
            editor: f
                .editor
                .filter(|e| *e != typist::editor::EditorKind::Typist),
            cases: match f.cases {
                Cases::Lines => typist::bench::Cases::Lines,
                Cases::Tokens => typist::bench::Cases::Tokens,
            },
        }
    }
}

#[derive(clap::Subcommand)]
pub enum DatasetCommand {
    /// Fetch real source releases by name into DIR/NAME/ (each with its licence) and
    /// record each one's spec, archive sha256, licence and test command in
    /// DIR/dataset.toml; a second add of a spec checks its archive and changes nothing.
    #[command(
        after_help = "Example:\n  typist dataset add data/real pypi:six==1.16.0 npm:left-pad@1.3.0 crates:strsim@0.11.1 debian:libcommons-lang3-java\n\nSpecs: pypi:NAME==VERSION (the sdist, by pip), npm:NAME@VERSION (the tarball, by npm pack), crates:NAME@VERSION (the .crate from static.crates.io, checked against the index), debian:SOURCE[=VERSION] (apt-get source with a deb-src list of the dataset's own). The folder is then a dataset: typist sample --dataset DIR."
    )]
    Add(DatasetAddArgs),
}

#[derive(clap::Args, Debug, Clone)]
pub struct DatasetAddArgs {
    /// The dataset folder (made if missing): each package goes into DIR/NAME/, and
    /// DIR/dataset.toml records them.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// What to fetch: pypi:NAME==VERSION, npm:NAME@VERSION, crates:NAME@VERSION or
    /// debian:SOURCE[=VERSION].
    #[arg(value_name = "SPEC", required = true)]
    pub specs: Vec<String>,
    /// The command that runs the packages' tests, in each package's folder (default: the
    /// ecosystem's: `python -m pytest -q` for an sdist that ships tests, `npm test` for
    /// a package with a test script, `cargo test --offline` for a crate with tests;
    /// none for Debian).
    #[arg(long, value_name = "CMD")]
    pub test_command: Option<String>,
    /// Do not install what the tests need (the dataset's Python venv with pytest and
    /// coverage and the package editable; an npm package's node_modules; a crate's
    /// dependencies).
    #[arg(long)]
    pub no_env: bool,
    /// The Python that runs pip and makes the venv (default: python3).
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Print what was done as JSON (one object per spec) instead of lines.
    #[arg(long)]
    pub json: bool,
}
