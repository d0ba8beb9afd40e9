//! The flags of `typist host` and `typist serve-model --upstream`, mapped onto the
//! library's options (which derive no CLI trait).
//!
//! The targets: `HostArgs`, `HttpOptions`, `Faults`, `UpstreamArgs`.

use super::choice::{BACKEND, FIM_TEMPLATE, NGRAM_CONTEXT, choice};
use typist::host::http::FimTemplate;
use typist::host::{BackendKind, NgramContext};

/// Everything `typist host` is started with.
#[derive(Debug, Clone, clap::Args)]
pub struct HostFlags {
    /// The model that answers: a built-in one, or a model server over HTTP
    /// (--endpoint).
    #[arg(long, value_parser = choice(BACKEND), default_value = "ngram")]
    pub backend: BackendKind,
    /// With --backend ngram: where the n-grams are learnt from.
    #[arg(long, value_parser = choice(NGRAM_CONTEXT), default_value = "workspace")]
    pub ngram_context: NgramContext,
    #[command(flatten)]
    pub http: HttpFlags,
    #[command(flatten)]
    pub faults: FaultFlags,
    /// Listen on tcp://127.0.0.1:PORT (0: any free port) or unix:PATH instead of stdio,
    /// with a fresh server per connection; `listening on ADDRESS` is the first line of
    /// stdout (for `typist run --connect`).
    #[arg(long, value_name = "ADDRESS")]
    pub listen: Option<String>,
    /// With --backend oracle: the plan whose true texts it answers (a path outside the
    /// workspace; for tests only).
    #[arg(long, value_name = "PLAN")]
    pub truth: Option<std::path::PathBuf>,
    /// Appended to every non-empty answer of a local backend (for tests of `typist
    /// check`: an unmatched bracket).
    #[arg(long, value_name = "TEXT")]
    pub append: Option<String>,
    /// With --backend fixed: the answer instead of `pass` (for tests of the sandbox of
    /// `typist check --tests`: code that deletes files, loops or reads the network).
    #[arg(long, value_name = "TEXT")]
    pub text: Option<String>,
    /// With --backend oracle: the rank of the true token in its completion lists, after
    /// R − 1 decoys (for tests of golf on completion lists).
    #[arg(long, value_name = "R", default_value_t = 1)]
    pub list_rank: u32,
}

impl From<HostFlags> for typist::host::HostArgs {
    fn from(f: HostFlags) -> Self {
        typist::host::HostArgs {
            backend: f.backend,
            ngram_context: f.ngram_context,
            http: f.http.into(),
            faults: f.faults.into(),
            truth: f.truth,
            append: f.append,
            text: f.text,
            list_rank: f.list_rank,
        }
    }
}

/// What the host sends to a model and how.
#[derive(Debug, Clone, clap::Args)]
pub struct HttpFlags {
    /// Base URL of the model server (e.g. http://127.0.0.1:8080).
    #[arg(long, value_name = "URL")]
    pub endpoint: Option<String>,
    /// The model name sent to the model server.
    #[arg(long, default_value = "default", value_name = "NAME")]
    pub model: String,
    /// How a prefix and a suffix become the prompt (--backend openai).
    #[arg(long, value_parser = choice(FIM_TEMPLATE), default_value = "starcoder")]
    pub template: Option<FimTemplate>,
    /// Tokens asked for per suggestion.
    #[arg(long, default_value_t = 64)]
    pub max_tokens: u32,
    /// Sampling temperature sent to the model server (0: greedy).
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f64,
    /// Stop sequences (repeatable).
    #[arg(long = "stop", value_name = "TEXT")]
    pub stop: Vec<String>,
    /// Characters of context sent: 3/4 for the prefix (nearest the cursor), 1/4 suffix.
    #[arg(long, default_value_t = 8192, value_name = "CHARS")]
    pub context_chars: usize,
    /// Name of the environment variable that holds the API key (sent as a Bearer token).
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// How long one request to the model server may take.
    #[arg(long, default_value_t = 30_000, value_name = "MS")]
    pub http_timeout_ms: u64,
    /// Whitespace healing for left-to-right models: the prompt ends at the prefix's last
    /// non-blank character, and the answer counts only if it starts with the whitespace
    /// taken off (which is then cut from it). A prompt that ends in a line break or an
    /// indentation splits a token the model would have written, and small models then
    /// answer off the rails. When a line break was taken off, a `\n` stop sequence is
    /// applied by the host after it (the server would stop at once).
    #[arg(long)]
    pub heal_whitespace: bool,
}

mirror_into!(HttpFlags => typist::host::http::HttpOptions {
    endpoint, model, template, max_tokens, temperature, stop, context_chars, api_key_env,
    http_timeout_ms, heal_whitespace,
});

/// Fault and latency shaping, off by default.
#[derive(Debug, Clone, clap::Args)]
pub struct FaultFlags {
    /// Fixed delay before every answer.
    #[arg(long, default_value_t = 0, value_name = "MS")]
    pub delay_ms: u64,
    /// Extra random delay up to this much (seeded).
    #[arg(long, default_value_t = 0, value_name = "MS")]
    pub jitter_ms: u64,
    /// Probability of an empty answer (seeded).
    #[arg(long, default_value_t = 0.0, value_name = "P")]
    pub empty_rate: f64,
    /// Exit (code 3) when the Nth suggestion request arrives.
    #[arg(long, value_name = "N")]
    pub crash_after: Option<u64>,
    /// Never answer from the Nth suggestion request on.
    #[arg(long, value_name = "N")]
    pub hang_after: Option<u64>,
    /// Write a garbage frame to stdout before answering the Nth request and every later one.
    #[arg(long, value_name = "N")]
    pub garbage_after: Option<u64>,
    /// Send this many `window/logMessage` notifications before each answer.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub log_flood: u32,
    /// Write this many bytes of lines that are not UTF-8 to stderr before each answer
    /// (a blocking write: a client that stops draining stderr stalls the server).
    #[arg(long, default_value_t = 0, value_name = "BYTES")]
    pub stderr_junk: u64,
    /// Delay only the answer to the first completion-list request by this much (a
    /// server warming up: pyright's first lists take seconds, its later ones not).
    #[arg(long, default_value_t = 0, value_name = "MS")]
    pub first_list_delay_ms: u64,
    /// Mark completion lists incomplete (`isIncomplete`, as pyright and clangd do): an
    /// editor asks again as the user types on.
    #[arg(long)]
    pub incomplete_lists: bool,
    /// After the client has gone (stdin closed), stay alive this long before exiting,
    /// as servers busy indexing do: only the client's process handling ends it sooner.
    #[arg(long, default_value_t = 0, value_name = "SECS")]
    pub linger_secs: u64,
    /// Probability that a suggestion request meets one fault of a mix of every kind
    /// (crash on arrival, crash mid-answer, crash after answering, hang, error answer,
    /// garbage frame, huge length, invalid UTF-8 body, answer to an unknown id,
    /// notification flood, stderr flood, server→client request storm), drawn from the
    /// seed, the file's path in the workspace and the line: the same case meets the
    /// same fault on every attempt and in every run. Used by `typist drill`.
    #[arg(long, default_value_t = 0.0, value_name = "P")]
    pub fault_mix: f64,
    /// Append one JSON line per suggestion request: the file, the line, the fault met
    /// (or none) and what was answered, for `typist drill` to check records against.
    #[arg(long, value_name = "FILE")]
    pub fault_log: Option<std::path::PathBuf>,
    /// Behave as a careless server with the secret in this environment variable: print
    /// it to stderr at `initialize`, and reject every third suggestion request with an
    /// error quoting it (as APIs quoting a rejected key do). For the secret canary test.
    #[arg(long, value_name = "VAR")]
    pub leak_env: Option<String>,
    /// Seed of the random faults.
    #[arg(long, default_value_t = 0)]
    pub fault_seed: u64,
}

mirror_into!(FaultFlags => typist::host::Faults {
    delay_ms, jitter_ms, empty_rate, crash_after, hang_after, garbage_after, log_flood,
    stderr_junk, first_list_delay_ms, incomplete_lists, linger_secs, fault_mix, fault_log, leak_env, fault_seed,
});

/// `--upstream`: the model server fronted and how its requests are made.
#[derive(Debug, Clone, clap::Args)]
pub struct UpstreamFlags {
    /// Front this llama.cpp server (or any OpenAI-compatible /v1/completions) instead of
    /// answering from the n-gram baseline.
    #[arg(long, value_name = "URL")]
    pub upstream: Option<String>,
    /// How a prefix and a suffix become the upstream's prompt (`none`: the prefix alone,
    /// for a left-to-right model).
    #[arg(long, value_parser = choice(FIM_TEMPLATE), default_value = "none")]
    pub template: FimTemplate,
    /// Tokens asked for when the request does not say.
    #[arg(long, default_value_t = 64)]
    pub max_tokens: u32,
    /// Sampling temperature when the request does not say.
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f64,
    /// Stop sequences when the request gives none (repeatable).
    #[arg(long = "stop", value_name = "TEXT")]
    pub stop: Vec<String>,
    /// The model name sent upstream and reported by /v1/health.
    #[arg(long, default_value = "upstream")]
    pub model: String,
    /// How long one request to the upstream may take.
    #[arg(long, default_value_t = 120_000, value_name = "MS")]
    pub upstream_timeout_ms: u64,
}

mirror_into!(UpstreamFlags => typist::host::serve_model::UpstreamArgs {
    upstream, template, max_tokens, temperature, stop, model, upstream_timeout_ms,
});
