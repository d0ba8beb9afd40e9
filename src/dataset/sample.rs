//! Seeded sampling (methodology §1): every code line is a case with probability
//! `rate`, drawn from a hash of (seed, repo, file, line); caps per file and repository
//! keep the smallest draws.
//!
//! A sampled line is a [`Case`].

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{Dataset, classify};

#[derive(Debug, Clone)]
pub struct SampleOptions {
    /// Probability that a code line is a case.
    pub rate: f64,
    pub seed: u64,
    /// Every code line is a case.
    pub all_lines: bool,
    pub max_per_file: Option<usize>,
    pub max_per_repo: Option<usize>,
}

impl Default for SampleOptions {
    fn default() -> Self {
        SampleOptions {
            rate: 0.01,
            seed: 0,
            all_lines: false,
            max_per_file: None,
            max_per_repo: None,
        }
    }
}

/// One case of a plan: a line to be predicted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Case {
    /// `repo/file:line`: the same on every machine.
    pub case: String,
    pub repo: String,
    pub file: String,
    /// 1-based line number.
    pub line: u32,
    pub language: String,
    pub expected: String,
    pub file_hash: String,
    /// A token case (`sample --cases tokens`): the identifier to complete, its kind, the
    /// typed prefix and the actions. Absent for line cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<super::token::TokenCase>,
    /// A block case (`sample --cases blocks`, methodology §9): the expected block `T`,
    /// its lines joined by `\n` (the first is `expected`). Absent for line and token
    /// cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<String>,
}

/// The default of `sample --cases blocks --max-lines` (methodology §9's K).
pub const BLOCK_MAX_LINES: usize = 8;

/// The expected block of the line at 0-based index `i` (methodology §9): the line and
/// the lines after it while they are indented at least as deeply (blank lines inside
/// kept, trailing blank lines dropped), at most `max_lines` lines, joined by `\n`.
/// Indentation is counted in leading whitespace characters (a tab is one, as a space).
pub fn expected_block(lines: &[&str], i: usize, max_lines: usize) -> String {
    let blank = |l: &str| l.trim().is_empty();
    let indent = |l: &str| l.chars().take_while(|c| c.is_whitespace()).count();
    let depth = indent(lines[i]);
    let mut end = i + 1;
    for (j, l) in lines.iter().enumerate().skip(i + 1) {
        if j - i >= max_lines.max(1) || (!blank(l) && indent(l) < depth) {
            break;
        }
        end = j + 1;
    }
    while end > i + 1 && blank(lines[end - 1]) {
        end -= 1;
    }
    lines[i..end].join("\n")
}

/// A block plan: the line cases of [`sample`] (the same draw, so the same lines), each
/// with its expected block of at most `max_lines` lines.
pub fn sample_blocks(ds: &Dataset, opts: &SampleOptions, max_lines: usize) -> Vec<Case> {
    let mut cases = sample(ds, opts);
    let files: std::collections::HashMap<(&str, &str), &super::SourceFile> = ds
        .repos
        .iter()
        .flat_map(|r| {
            r.files
                .iter()
                .map(move |f| ((r.name.as_str(), f.rel.as_str()), f))
        })
        .collect();
    for c in &mut cases {
        if let Some(f) = files.get(&(c.repo.as_str(), c.file.as_str())) {
            let lines = f.lines();
            c.block = Some(expected_block(&lines, c.line as usize - 1, max_lines));
        }
    }
    cases
}

/// The sampling draw of a line, uniform in [0, 1).
pub fn draw(seed: u64, repo: &str, file: &str, line: u32) -> f64 {
    unit(hasher(seed, repo, file, line))
}

/// The sampling draw of a token (`sample --cases tokens`), uniform in [0, 1): the
/// line's hash with the token's 0-based column (in characters) added.
pub fn draw_token(seed: u64, repo: &str, file: &str, line: u32, column: u32) -> f64 {
    let mut h = hasher(seed, repo, file, line);
    h.update(column.to_le_bytes());
    unit(h)
}

fn hasher(seed: u64, repo: &str, file: &str, line: u32) -> Sha256 {
    let mut h = Sha256::new();
    h.update(seed.to_le_bytes());
    h.update(repo.as_bytes());
    h.update([0]);
    h.update(file.as_bytes());
    h.update([0]);
    h.update(line.to_le_bytes());
    h
}

/// The first 53 bits of a hash as a number in [0, 1).
fn unit(h: Sha256) -> f64 {
    let d = h.finalize();
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    (u64::from_le_bytes(b) >> 11) as f64 / (1u64 << 53) as f64
}

/// The plan: sampled cases, sorted by repository, file and line.
pub fn sample(ds: &Dataset, opts: &SampleOptions) -> Vec<Case> {
    let mut out = Vec::new();
    for repo in &ds.repos {
        let mut repo_cases: Vec<(f64, Case)> = Vec::new();
        for f in &repo.files {
            let lines = f.lines();
            let code = classify::code_lines(&f.text, f.language);
            let mut file_cases: Vec<(f64, Case)> = Vec::new();
            for (i, (line, is_code)) in lines.iter().zip(code).enumerate() {
                if !is_code {
                    continue;
                }
                let n = i as u32 + 1;
                let u = draw(opts.seed, &repo.name, &f.rel, n);
                if !opts.all_lines && u >= opts.rate {
                    continue;
                }
                file_cases.push((
                    u,
                    Case {
                        case: format!("{}/{}:{}", repo.name, f.rel, n),
                        repo: repo.name.clone(),
                        file: f.rel.clone(),
                        line: n,
                        language: f.language.name().to_string(),
                        expected: line.to_string(),
                        file_hash: f.hash.clone(),
                        token: None,
                        block: None,
                    },
                ));
            }
            cap(&mut file_cases, opts.max_per_file);
            repo_cases.extend(file_cases);
        }
        cap(&mut repo_cases, opts.max_per_repo);
        out.extend(repo_cases.into_iter().map(|(_, c)| c));
    }
    out.sort_by(|a, b| (&a.repo, &a.file, a.line).cmp(&(&b.repo, &b.file, b.line)));
    out
}

/// Keeps the `max` cases with the smallest draws (deterministic).
fn cap(cases: &mut Vec<(f64, Case)>, max: Option<usize>) {
    if let Some(m) = max
        && cases.len() > m
    {
        cases.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.line.cmp(&b.1.line)));
        cases.truncate(m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{WalkOptions, walk};
    use std::path::Path;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn sampling_rates_caps_and_all_lines() {
        let d = tempfile::tempdir().unwrap();
        let body: String = (0..400)
            .map(|i| format!("x{i} = {i}\n# comment {i}\n\n"))
            .collect();
        write(d.path(), "r/a.py", &body);
        write(d.path(), "r/b.py", &body);
        let ds = walk(d.path(), &WalkOptions::default()).unwrap();
        let all = sample(
            &ds,
            &SampleOptions {
                all_lines: true,
                ..Default::default()
            },
        );
        assert_eq!(all.len(), 800, "code lines only");
        assert!(all.iter().all(|c| c.expected.starts_with('x')));
        let some = sample(
            &ds,
            &SampleOptions {
                rate: 0.25,
                seed: 9,
                ..Default::default()
            },
        );
        assert!((140..260).contains(&some.len()), "{}", some.len());
        assert_eq!(
            some,
            sample(
                &ds,
                &SampleOptions {
                    rate: 0.25,
                    seed: 9,
                    ..Default::default()
                }
            )
        );
        let capped = sample(
            &ds,
            &SampleOptions {
                rate: 0.25,
                seed: 9,
                max_per_file: Some(10),
                ..Default::default()
            },
        );
        assert_eq!(capped.len(), 20);
        assert!(
            capped.iter().all(|c| some.contains(c)),
            "caps keep a subset"
        );
        let repo_capped = sample(
            &ds,
            &SampleOptions {
                rate: 0.25,
                seed: 9,
                max_per_repo: Some(7),
                ..Default::default()
            },
        );
        assert_eq!(repo_capped.len(), 7);
        assert_eq!(some[0].case, format!("r/{}:{}", some[0].file, some[0].line));
    }

    /// Methodology §9: deeper or equal lines follow the true line, blank lines inside
    /// stay, trailing blanks go, a shallower line or K lines end the block.
    #[test]
    fn expected_block_follows_indentation() {
        let f = "def f(x):\n    if x:\n        y = 1\n\n        z = 2\n\n    return y\nprint(1)\n";
        let lines: Vec<&str> = f.split('\n').collect();
        assert_eq!(
            expected_block(&lines, 1, 8),
            "    if x:\n        y = 1\n\n        z = 2\n\n    return y"
        );
        assert_eq!(
            expected_block(&lines, 2, 8),
            "        y = 1\n\n        z = 2"
        );
        assert_eq!(expected_block(&lines, 2, 2), "        y = 1");
        assert_eq!(expected_block(&lines, 6, 8), "    return y");
        assert_eq!(expected_block(&lines, 7, 8), "print(1)");
        assert_eq!(
            expected_block(&lines, 0, 3),
            "def f(x):\n    if x:\n        y = 1"
        );
        assert_eq!(expected_block(&lines, 0, 1), "def f(x):");
    }

    #[test]
    fn draws_are_uniform_enough_and_stable() {
        let n = 20_000;
        let hits = (0..n).filter(|&i| draw(1, "r", "f.py", i) < 0.1).count();
        assert!((1_800..2_200).contains(&hits), "{hits}");
        // Pinned: a change of the draw would silently change every plan.
        assert_eq!(
            format!("{:.15}", draw(7, "repo", "a/b.py", 42)),
            "0.089297374164059"
        );
        assert_ne!(draw(7, "repo", "a/b.py", 42), draw(8, "repo", "a/b.py", 42));
        // A token's draw is its own, per column, and pinned as well.
        assert_ne!(
            draw_token(7, "repo", "a/b.py", 42, 0),
            draw(7, "repo", "a/b.py", 42)
        );
        assert_ne!(
            draw_token(7, "repo", "a/b.py", 42, 3),
            draw_token(7, "repo", "a/b.py", 42, 4)
        );
        assert_eq!(
            format!("{:.15}", draw_token(7, "repo", "a/b.py", 42, 3)),
            "0.630893347498163"
        );
    }
}
