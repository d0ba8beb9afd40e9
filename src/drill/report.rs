//! The drill's figures and their table, ending with `lost: N`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::host::faults::Kind;

/// The drill's figures; `lost` is what the table ends with.
#[derive(Debug, Default, serde::Serialize)]
pub struct DrillReport {
    /// The editor typed into (`typist` or `neovim`).
    pub editor: String,
    pub planned: u64,
    pub records: u64,
    /// Planned cases with no record.
    pub missing: u64,
    /// Records beyond the first for a case.
    pub duplicates: u64,
    /// Records of cases not in the plan, and lines that are not records.
    pub stray: u64,
    pub outcomes: BTreeMap<String, u64>,
    /// Requests that met each fault kind (every attempt counts).
    pub injected: BTreeMap<String, u64>,
    pub injected_total: u64,
    pub requests: u64,
    /// Cases checked against the host's log (a case whose file and line name two
    /// planned cases is not).
    pub checked: u64,
    /// `empty` recorded where the server did not answer empty: an error turned into an
    /// empty suggestion.
    pub false_empties: u64,
    /// `suggestion` recorded where the server answered nothing or something else.
    pub false_answers: u64,
    /// `error`/`timeout` where the server did answer (the client gave up on an answer).
    pub spurious_failures: u64,
    /// Failures recorded as the wrong kind (a hang as `error`, a crash as `timeout`).
    pub wrong_failure_kind: u64,
    pub examples: Vec<String>,
    pub kills: u32,
    pub kills_landed: u32,
    /// Whether the killed and resumed run's records equal the uninterrupted run's.
    pub kill_records_equal: bool,
    pub kill_differing_lines: u64,
    pub leftover_processes: u64,
    pub leftover_workspaces: u64,
    /// Whether every file of the dataset has the same bytes after both drills.
    pub dataset_unchanged: bool,
    pub sessions_started: u64,
    pub restarted_after_exit: u64,
    pub restarted_after_timeouts: u64,
    pub seconds_faults: f64,
    pub seconds_kill: f64,
    /// Planned cases not ending with exactly one record, over both drills.
    pub lost: u64,
}

impl DrillReport {
    /// Whether every promise held.
    pub fn passed(&self) -> bool {
        self.lost == 0
            && self.false_empties == 0
            && self.false_answers == 0
            && self.stray == 0
            && self.kill_records_equal
            && self.leftover_processes == 0
            && self.leftover_workspaces == 0
            && self.dataset_unchanged
    }
}

/// The drill's table, ending with `lost: N`.
pub fn table(r: &DrillReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "fault drill: {} planned cases, editor {}, {:.1} s",
        r.planned, r.editor, r.seconds_faults
    );
    let _ = writeln!(s, "  {:<28} {:>8}", "fault injected", "requests");
    for k in Kind::ALL {
        let n = r.injected.get(k.name()).copied().unwrap_or(0);
        let _ = writeln!(s, "  {:<28} {:>8}", k.name(), n);
    }
    let _ = writeln!(s, "  {:<28} {:>8}", "all faults", r.injected_total);
    let _ = writeln!(s, "  {:<28} {:>8}", "requests seen by servers", r.requests);
    let _ = writeln!(s, "  {:<28} {:>8}", "records", r.records);
    for (o, n) in &r.outcomes {
        let _ = writeln!(s, "    {:<26} {:>8}", o, n);
    }
    let rows: [(&str, u64); 10] = [
        ("sessions started", r.sessions_started),
        ("restarts after an exit", r.restarted_after_exit),
        ("restarts after timeouts", r.restarted_after_timeouts),
        ("cases checked against log", r.checked),
        ("false empties", r.false_empties),
        ("false answers", r.false_answers),
        ("wrong failure kind", r.wrong_failure_kind),
        ("failures where answered", r.spurious_failures),
        ("duplicate records", r.duplicates),
        ("stray records", r.stray),
    ];
    for (name, n) in rows {
        let _ = writeln!(s, "  {:<28} {:>8}", name, n);
    }
    let _ = writeln!(
        s,
        "kill drill: {} SIGKILLs ({} landed before the run ended), {:.1} s",
        r.kills, r.kills_landed, r.seconds_kill
    );
    let _ = writeln!(
        s,
        "  {:<28} {:>8}",
        "records equal to one run",
        if r.kill_records_equal { "yes" } else { "NO" }
    );
    let _ = writeln!(
        s,
        "  {:<28} {:>8}",
        "differing lines", r.kill_differing_lines
    );
    let _ = writeln!(
        s,
        "  {:<28} {:>8}",
        "dataset unchanged",
        if r.dataset_unchanged { "yes" } else { "NO" }
    );
    let _ = writeln!(s, "left behind");
    let _ = writeln!(s, "  {:<28} {:>8}", "processes", r.leftover_processes);
    let _ = writeln!(
        s,
        "  {:<28} {:>8}",
        "temporary workspaces", r.leftover_workspaces
    );
    for e in &r.examples {
        let _ = writeln!(s, "! {e}");
    }
    let _ = writeln!(s, "lost: {}", r.lost);
    s
}
