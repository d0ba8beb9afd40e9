//! The checks sidecar (methodology §11): what `typist check` found for each non-empty
//! suggestion of a records file, in `NAME.checks.jsonl` beside `NAME.jsonl`, so that
//! `typist score` and `typist report` find it on their own. Its first line names the
//! records file's sha256: a sidecar of other records (the run resumed, merged or
//! rewritten since) is left out with a warning, never scored against the wrong cases.
//! Plain values and files; knows nothing of tables.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// One suggestion checked: `F_pred` against `F_true`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Check {
    pub assistant: String,
    pub pass: u32,
    pub repo: String,
    pub file: String,
    pub line: u32,
    pub case: String,
    pub language: String,
    /// ERROR and MISSING nodes of `F_pred` minus those of `F_true` (tree-sitter).
    pub syntax_delta: i64,
    /// Error-severity diagnostics of `F_pred` that `F_true` lacks (by code and
    /// message), with a checker profile; absent without one or when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_errors: Option<u64>,
    /// Why the checker gave no diagnostics for this case (it failed or timed out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checker_error: Option<String>,
    /// The new errors of `new_errors`, by (source, code, message class); empty in
    /// sidecars written before they were recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<NewDiagnostic>,
}

/// New error diagnostics of one kind in one checked suggestion.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct NewDiagnostic {
    /// The diagnostic's `source` (`Pyright`, `clang`, …); empty when it has none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
    /// Its `code` (`reportUndefinedVariable`, …); empty when it has none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub code: String,
    /// Its message with quoted text and numbers replaced ([`message_class`]).
    pub class: String,
    /// How many such errors are new.
    pub count: u64,
}

/// A diagnostic message's class: every quoted span ('…', "…", `…`, “…”, ‘…’) becomes
/// its quotes around `_`, and every number not part of a word becomes `N`, so that
/// `"foo" is not defined` and `"bar" is not defined` are one class.
pub fn message_class(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let chars: Vec<char> = message.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let close = match c {
            '"' | '\'' | '`' => Some(c),
            '“' => Some('”'),
            '‘' => Some('’'),
            _ => None,
        };
        // An apostrophe inside a word (`can't`) opens nothing.
        let in_word = c == '\'' && i > 0 && chars[i - 1].is_alphanumeric();
        if let Some(close) = close.filter(|_| !in_word)
            && let Some(end) = chars[i + 1..].iter().position(|&x| x == close)
        {
            out.push(c);
            out.push('_');
            out.push(close);
            i += end + 2;
            continue;
        }
        let word_before = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if c.is_ascii_digit() && !word_before {
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || (chars[i] == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
            {
                i += 1;
            }
            out.push('N');
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// The sidecar's first line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// `sha256:` of the records file checked.
    pub records: String,
    /// The checker profile's name, when diagnostics were asked for.
    #[serde(default)]
    pub checker: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct HeaderLine {
    checks: Header,
}

/// The sidecar of records file `records`: `DIR/NAME.checks.jsonl` for `DIR/NAME.jsonl`.
pub fn checks_path(records: &Path) -> PathBuf {
    let stem = records
        .file_stem()
        .map_or_else(|| "records".into(), |s| s.to_string_lossy().into_owned());
    records.with_file_name(format!("{stem}.checks.jsonl"))
}

/// `sha256:` of a file's bytes.
pub fn file_hash(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(format!("sha256:{}", crate::digest::sha256_hex(&bytes)))
}

/// Writes the sidecar of `records` (checks sorted), through a temporary file renamed.
pub fn write_checks(records: &Path, header: &Header, checks: &mut [Check]) -> Result<PathBuf> {
    checks.sort();
    let path = checks_path(records);
    let tmp = path.with_extension("partial");
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?,
    );
    serde_json::to_writer(
        &mut out,
        &HeaderLine {
            checks: header.clone(),
        },
    )?;
    out.write_all(b"\n")?;
    for c in checks.iter() {
        serde_json::to_writer(&mut out, c)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    drop(out);
    std::fs::rename(&tmp, &path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// The checks of a sidecar and its header.
pub fn read_checks(path: &Path) -> Result<(Header, Vec<Check>)> {
    let f = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut lines = std::io::BufReader::new(f).lines();
    let first = lines
        .next()
        .transpose()?
        .with_context(|| format!("{}: empty checks file", path.display()))?;
    let header: HeaderLine = serde_json::from_str(&first)
        .with_context(|| format!("{}:1: not a checks header", path.display()))?;
    let mut checks = Vec::new();
    for (i, l) in lines.enumerate() {
        let l = l?;
        if l.trim().is_empty() {
            continue;
        }
        checks.push(
            serde_json::from_str(&l)
                .with_context(|| format!("{}:{}: malformed check", path.display(), i + 2))?,
        );
    }
    Ok((header.checks, checks))
}

/// The checks beside every records file that has a sidecar of its current bytes; a
/// sidecar of other bytes is left out with a warning.
pub fn read_beside(records: &[PathBuf]) -> Result<Vec<Check>> {
    let mut out = Vec::new();
    for r in records {
        let path = checks_path(r);
        if !path.is_file() {
            continue;
        }
        let (header, checks) = read_checks(&path)?;
        let now = file_hash(r)?;
        if header.records != now {
            tracing::warn!(
                "{} was made from other records than {} (run `typist check` again): left out",
                path.display(),
                r.display()
            );
            continue;
        }
        out.extend(checks);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::message_class;

    #[test]
    fn message_classes_of_real_checker_messages() {
        // pyright (reportUndefinedVariable, reportAttributeAccessIssue, a syntax error).
        let a = message_class("\"foo\" is not defined");
        assert_eq!(a, "\"_\" is not defined");
        assert_eq!(message_class("\"bar\" is not defined"), a);
        assert_eq!(
            message_class("Cannot access attribute \"x\" for class \"Point\""),
            "Cannot access attribute \"_\" for class \"_\""
        );
        assert_eq!(
            message_class("\"(\" was not closed"),
            "\"_\" was not closed"
        );
        // pyright's argument count, tsc's, ruff's backquotes.
        assert_eq!(
            message_class("Expected 2 positional arguments"),
            "Expected N positional arguments"
        );
        assert_eq!(
            message_class("Expected 2 arguments, but got 1.5."),
            "Expected N arguments, but got N."
        );
        assert_eq!(
            message_class("Cannot find name 'foo'."),
            "Cannot find name '_'."
        );
        assert_eq!(message_class("Undefined name `foo`"), "Undefined name `_`");
        // clang: an apostrophe in a word opens nothing; digits inside a word stay.
        assert_eq!(
            message_class("use of undeclared identifier 'pass'; can't find x86 int32_t"),
            "use of undeclared identifier '_'; can't find x86 int32_t"
        );
        // An unclosed quote stays as it is.
        assert_eq!(message_class("Expected \"\u{20}"), "Expected \" ");
    }
}
