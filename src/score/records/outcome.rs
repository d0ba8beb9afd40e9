//! What a record says it is, as the records format writes it (docs/records.md): its
//! `outcome` and its `kind`. One vocabulary for the replay that writes records, its
//! progress line and resume filter, the scorer, the report and the drill.

use serde::{Deserialize, Serialize};

/// What a case yielded: written as `suggestion`, `empty`, `error` or `timeout`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum Outcome {
    Suggestion = 0,
    #[default]
    Empty = 1,
    Error = 2,
    Timeout = 3,
}

impl Outcome {
    /// The outcome a record's `outcome` names; `None` for a name this version does not
    /// know.
    pub fn parse(s: &str) -> Option<Outcome> {
        Some(match s {
            "suggestion" => Outcome::Suggestion,
            "empty" => Outcome::Empty,
            "error" => Outcome::Error,
            "timeout" => Outcome::Timeout,
            _ => return None,
        })
    }
    /// The name as records write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Suggestion => "suggestion",
            Outcome::Empty => "empty",
            Outcome::Error => "error",
            Outcome::Timeout => "timeout",
        }
    }
    /// Suggestion or empty: the assistant answered.
    pub fn answered(self) -> bool {
        matches!(self, Outcome::Suggestion | Outcome::Empty)
    }
    /// Error or timeout: the case failed (`--retry-errors` asks it again).
    pub fn failed(self) -> bool {
        !self.answered()
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A record's `kind`: absent for a line (or block) case; `completion` for a
/// completion-list record (a token case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordKind {
    Completion,
}

impl RecordKind {
    /// The kind a record's `kind` names; `None` for a name this version does not know.
    pub fn parse(s: &str) -> Option<RecordKind> {
        (s == "completion").then_some(RecordKind::Completion)
    }
    /// The name as records write it.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordKind::Completion => "completion",
        }
    }
    /// A completion-list record, by the `kind` as read.
    pub fn is_completion(kind: Option<&str>) -> bool {
        kind.and_then(RecordKind::parse) == Some(RecordKind::Completion)
    }
}

#[cfg(test)]
mod tests {
    use super::{Outcome, RecordKind};

    /// Serde, `as_str` and `parse` agree on every name.
    #[test]
    fn names_round_trip() {
        for o in [
            Outcome::Suggestion,
            Outcome::Empty,
            Outcome::Error,
            Outcome::Timeout,
        ] {
            let json = serde_json::to_string(&o).unwrap();
            assert_eq!(json, format!("\"{}\"", o.as_str()));
            assert_eq!(serde_json::from_str::<Outcome>(&json).unwrap(), o);
            assert_eq!(Outcome::parse(o.as_str()), Some(o));
        }
        assert_eq!(Outcome::parse("maybe"), None);
        let k = RecordKind::Completion;
        assert_eq!(serde_json::to_string(&k).unwrap(), "\"completion\"");
        assert_eq!(RecordKind::parse(k.as_str()), Some(k));
        assert!(RecordKind::is_completion(Some("completion")));
        assert!(!RecordKind::is_completion(Some("line")) && !RecordKind::is_completion(None));
    }
}
