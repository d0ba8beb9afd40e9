//! Token sampling: each token is a case with probability `rate`, drawn from a hash of
//! (seed, repo, file, line, column), so its fate depends neither on the walk's order
//! nor on other tokens; each sampled token gives one case per typed prefix shorter
//! than itself, with the actions an editor user produces.
//!
//! Caps bound the tokens per file and repository; [`sample_tokens`] also returns the
//! summary of what was found and drawn.

use std::collections::BTreeMap;

use super::find::{Token, find_tokens};
use crate::dataset::{
    Action, Case, Dataset, Language, SampleOptions, TokenCase, TokenContext, TokenKind, draw_token,
};

/// How tokens become cases (besides the rate, seed and caps of [`SampleOptions`]).
#[derive(Debug, Clone)]
pub struct TokenOptions {
    /// Characters of the token typed before the list is ranked, each its own case.
    pub prefixes: Vec<u32>,
    pub context: TokenContext,
    /// Only tokens of these kinds are cases (`sample --kinds`); empty: every kind.
    pub kinds: Vec<TokenKind>,
}

impl Default for TokenOptions {
    fn default() -> Self {
        TokenOptions {
            prefixes: vec![0, 1, 2, 3],
            context: TokenContext::Prefix,
            kinds: Vec::new(),
        }
    }
}

/// What sampling found, for the summary `typist sample` prints.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenSummary {
    /// Tokens found in every file read.
    pub found: usize,
    /// Tokens sampled (after the caps).
    pub sampled: usize,
    pub cases_by_kind: BTreeMap<TokenKind, usize>,
    pub cases_by_prefix: BTreeMap<u32, usize>,
    /// Files of a language without a grammar here (they give no token cases).
    pub no_grammar: BTreeMap<Language, usize>,
}

/// The token cases of a dataset, sorted by repository, file, line, column and prefix.
/// With `all_lines`, every token is sampled; the caps count tokens, not cases.
pub fn sample_tokens(
    ds: &Dataset,
    opts: &SampleOptions,
    tok: &TokenOptions,
) -> (Vec<Case>, TokenSummary) {
    let mut prefixes = tok.prefixes.clone();
    prefixes.sort_unstable();
    prefixes.dedup();
    let mut summary = TokenSummary::default();
    let mut out = Vec::new();
    for repo in &ds.repos {
        let mut repo_tokens = Vec::new();
        for (fi, f) in repo.files.iter().enumerate() {
            let Some(mut tokens) = find_tokens(f) else {
                *summary.no_grammar.entry(f.language).or_default() += 1;
                continue;
            };
            // Before the draw: a token's draw is its own, so a kind's cases are those of
            // the unfiltered plan (but for the caps).
            if !tok.kinds.is_empty() {
                tokens.retain(|t| tok.kinds.contains(&t.kind));
            }
            summary.found += tokens.len();
            let mut drawn: Vec<(f64, usize, Token)> = tokens
                .into_iter()
                .filter_map(|t| {
                    let u = draw_token(opts.seed, &repo.name, &f.rel, t.line, t.column);
                    (opts.all_lines || u < opts.rate).then_some((u, fi, t))
                })
                .collect();
            cap(&mut drawn, opts.max_per_file);
            repo_tokens.extend(drawn);
        }
        cap(&mut repo_tokens, opts.max_per_repo);
        summary.sampled += repo_tokens.len();
        for (_, fi, t) in repo_tokens {
            let f = &repo.files[fi];
            for &p in prefixes
                .iter()
                .filter(|&&p| (p as usize) < t.text.chars().count())
            {
                *summary.cases_by_kind.entry(t.kind).or_default() += 1;
                *summary.cases_by_prefix.entry(p).or_default() += 1;
                out.push(Case {
                    case: format!("{}/{}:{}:{}+{}", repo.name, f.rel, t.line, t.column + 1, p),
                    repo: repo.name.clone(),
                    file: f.rel.clone(),
                    line: t.line,
                    language: f.language.name().to_string(),
                    expected: t.text.clone(),
                    file_hash: f.hash.clone(),
                    token: Some(TokenCase {
                        column: t.column,
                        kind: t.kind,
                        prefix_len: p,
                        context: tok.context,
                        actions: actions(&t.text, t.trigger, p),
                    }),
                    block: None,
                });
            }
        }
    }
    out.sort_by(|a, b| order(a).cmp(&order(b)));
    (out, summary)
}

fn order(c: &Case) -> (&str, &str, u32, u32, u32) {
    let (col, p) = c
        .token
        .as_ref()
        .map_or((0, 0), |t| (t.column, t.prefix_len));
    (&c.repo, &c.file, c.line, col, p)
}

/// Keeps the `max` tokens with the smallest draws (ties by file and place).
fn cap(tokens: &mut Vec<(f64, usize, Token)>, max: Option<usize>) {
    if let Some(m) = max
        && tokens.len() > m
    {
        tokens.sort_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then((a.1, a.2.line, a.2.column).cmp(&(b.1, b.2.line, b.2.column)))
        });
        tokens.truncate(m);
    }
}

/// The actions of a case, as an editor user produces them. `trigger`: the character
/// right before the token when it is `.`, `:` of `::` or `>` of `->`.
///
/// - nothing typed: open, ask (at the trigger character, if any);
/// - typed after a trigger character: open, ask at the trigger, then type each
///   character (the list is filtered, or asked again, as each is typed);
/// - typed with no trigger character: open, type the first character (which opens the
///   list, as editors' quick suggestions do), ask, then type the rest.
///
/// Each `Type` holds one character.
pub fn actions(token: &str, trigger: Option<char>, prefix_len: u32) -> Vec<Action> {
    let typed = token
        .chars()
        .take(prefix_len as usize)
        .map(|c| Action::Type {
            text: c.to_string(),
        });
    let complete = Action::Complete {
        trigger_character: trigger.map(String::from),
    };
    let mut out = vec![Action::Open];
    if trigger.is_some() || prefix_len == 0 {
        out.push(complete);
        out.extend(typed);
    } else {
        let mut typed = typed;
        out.extend(typed.next());
        out.push(complete);
        out.extend(typed);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{Repo, SourceFile};
    use std::path::PathBuf;

    fn typed(s: &str) -> Vec<Action> {
        s.chars()
            .map(|c| Action::Type {
                text: c.to_string(),
            })
            .collect()
    }

    fn complete(t: Option<&str>) -> Action {
        Action::Complete {
            trigger_character: t.map(String::from),
        }
    }

    #[test]
    fn actions_of_the_three_shapes() {
        // Nothing typed: open and ask, at the trigger character when there is one.
        assert_eq!(
            actions("split", Some('.'), 0),
            [Action::Open, complete(Some("."))]
        );
        assert_eq!(actions("len", None, 0), [Action::Open, complete(None)]);
        // After a trigger character: asked there, then each character typed.
        let mut want = vec![Action::Open, complete(Some(":"))];
        want.extend(typed("ne"));
        assert_eq!(actions("new", Some(':'), 2), want);
        // No trigger character: the first character typed opens the list.
        let mut want = vec![Action::Open];
        want.extend(typed("p"));
        want.push(complete(None));
        want.extend(typed("ri"));
        assert_eq!(actions("print", None, 3), want);
        assert_eq!(
            actions("x", None, 1),
            [Action::Open, typed("x")[0].clone(), complete(None)]
        );
        // One character per `Type`, characters not bytes.
        let a = actions("éa", Some('>'), 2);
        assert_eq!(a[2..], typed("éa")[..]);
    }

    fn source(repo: &str, rel: &str, language: Language, text: &str) -> SourceFile {
        SourceFile {
            repo: repo.into(),
            rel: rel.into(),
            language,
            hash: format!("sha256:{rel}"),
            text: text.into(),
            notes: Vec::new(),
        }
    }

    fn dataset() -> Dataset {
        let py = "import os\nx = os.path.join(a, b)\nprint(x.upper(), len(y))\n".repeat(30);
        let js = "const v = require('x')\nv.parse(w).then(done)\n".repeat(30);
        let repo = |name: &str, files: Vec<SourceFile>| Repo {
            name: name.into(),
            root: PathBuf::from(name),
            files,
            build: Vec::new(),
        };
        Dataset {
            one_repo: None,
            root: PathBuf::from("."),
            repos: vec![
                repo(
                    "r1",
                    vec![
                        source("r1", "a.py", Language::Python, &py),
                        source("r1", "b.kt", Language::Kotlin, "fun f() = g()\n"),
                    ],
                ),
                repo("r2", vec![source("r2", "c.js", Language::JavaScript, &js)]),
            ],
            skipped: Vec::new(),
        }
    }

    fn opts(rate: f64) -> SampleOptions {
        SampleOptions {
            rate,
            seed: 3,
            ..Default::default()
        }
    }

    #[test]
    fn cases_ids_prefixes_and_summary() {
        let ds = dataset();
        let tok = TokenOptions {
            prefixes: vec![3, 0, 1, 1],
            context: TokenContext::Full,
            kinds: Vec::new(),
        };
        let all = SampleOptions {
            all_lines: true,
            ..opts(0.0)
        };
        let (cases, s) = sample_tokens(&ds, &all, &tok);
        assert_eq!(s.no_grammar, BTreeMap::from([(Language::Kotlin, 1)]));
        assert_eq!(s.found, s.sampled);
        // `os` (2 characters) has no case with 3 typed; `x` and `a` only the one with 0.
        let first: Vec<&str> = cases.iter().take(5).map(|c| c.case.as_str()).collect();
        assert_eq!(
            first,
            [
                "r1/a.py:1:8+0",
                "r1/a.py:1:8+1",
                "r1/a.py:2:5+0",
                "r1/a.py:2:5+1",
                "r1/a.py:2:8+0"
            ]
        );
        let c = &cases[4];
        let t = c.token.as_ref().unwrap();
        assert_eq!((c.expected.as_str(), c.line, t.column), ("path", 2, 7));
        assert_eq!((t.kind, t.context), (TokenKind::Member, TokenContext::Full));
        assert_eq!(t.actions, actions("path", Some('.'), 0));
        assert!(cases.iter().all(|c| {
            let t = c.token.as_ref().unwrap();
            (t.prefix_len as usize) < c.expected.chars().count() && t.prefix_len != 2
        }));
        assert_eq!(s.cases_by_kind.values().sum::<usize>(), cases.len());
        assert_eq!(s.cases_by_prefix.values().sum::<usize>(), cases.len());
        // Four characters or more: path, join, print, upper; require, parse, then, done.
        assert_eq!(s.cases_by_prefix.get(&3), Some(&(30 * 8)));
        let mut sorted = cases.clone();
        sorted.sort_by(|a, b| order(a).cmp(&order(b)));
        assert_eq!(sorted, cases);
    }

    #[test]
    fn the_draw_decides_alone_whatever_the_walk_order() {
        let ds = dataset();
        let tok = TokenOptions::default();
        let (some, s) = sample_tokens(&ds, &opts(0.3), &tok);
        assert!(s.sampled > 20 && s.sampled < s.found / 2, "{s:?}");
        let mut reversed = ds.clone();
        reversed.repos.reverse();
        for r in &mut reversed.repos {
            r.files.reverse();
        }
        assert_eq!(sample_tokens(&reversed, &opts(0.3), &tok).0, some);
        // Another repository does not change the fate of this one's tokens.
        let mut one = ds.clone();
        one.repos.truncate(1);
        let (fewer, _) = sample_tokens(&one, &opts(0.3), &tok);
        let in_r1: Vec<&Case> = some.iter().filter(|c| c.repo == "r1").collect();
        assert_eq!(fewer.iter().collect::<Vec<_>>(), in_r1);
        // A higher rate keeps every token a lower one drew.
        let (more, _) = sample_tokens(&ds, &opts(0.6), &tok);
        assert!(some.iter().all(|c| more.contains(c)));
    }

    #[test]
    fn a_plan_keeps_and_hashes_every_token_field() {
        let (cases, _) = sample_tokens(&dataset(), &opts(0.2), &TokenOptions::default());
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("plan.jsonl");
        crate::dataset::write_plan(&path, &cases, None).unwrap();
        assert_eq!(crate::dataset::read_plan(&path).unwrap().0, cases);
        let hash = crate::dataset::plan_hash(&cases);
        let changed: [fn(&mut TokenCase); 4] = [
            |t| t.column += 1,
            |t| t.kind = TokenKind::Type,
            |t| t.context = TokenContext::Full,
            |t| t.actions.push(Action::Open),
        ];
        for change in changed {
            let mut other = cases.clone();
            change(other[0].token.as_mut().unwrap());
            assert_ne!(crate::dataset::plan_hash(&other), hash);
        }
    }

    #[test]
    fn caps_count_tokens() {
        let ds = dataset();
        let tok = TokenOptions::default();
        let capped = SampleOptions {
            max_per_file: Some(4),
            ..opts(0.5)
        };
        let (cases, s) = sample_tokens(&ds, &capped, &tok);
        assert_eq!(s.sampled, 8);
        let (uncapped, _) = sample_tokens(&ds, &opts(0.5), &tok);
        assert!(cases.iter().all(|c| uncapped.contains(c)));
        let per_repo = SampleOptions {
            max_per_repo: Some(3),
            ..opts(0.5)
        };
        assert_eq!(sample_tokens(&ds, &per_repo, &tok).1.sampled, 6);
    }
}
