//! A benchmark's board: every submission done on it, scored together from their records
//! (each run read under the label `sID`, so two submissions of one assistant stay apart)
//! with typist's own summary: integral help, exact share, empty and error rates and
//! latency with their intervals, and each pair's paired difference of integral help
//! with its p-value on their shared cases (the cases of the benchmark's one plan). One
//! rating orders the board: Bradley–Terry fitted to case-by-case wins between every two
//! submissions (a case won by the higher per-case help, an error or a timeout helping
//! nothing, a tie half a win to each), as
//! Copilot Arena fits it from votes, on the Elo scale (1000 the geometric mean, 400
//! points a tenfold odds), with a 95% interval from resampling the cases.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;
use rand_core::{Rng, SeedableRng};
use serde::Serialize;
use serde_json::Value;

use super::db::{DONE, Submission};
use super::layout::out_dir;

/// Resamples of the rating's interval.
const RESAMPLES: usize = 200;
/// The prior: each pair starts with one tie (half a win each), so a submission that
/// never wins keeps a finite rating.
const PRIOR_TIES: f64 = 1.0;
/// Iterations of the Bradley–Terry fit (minorization–maximization).
const FIT_ROUNDS: usize = 500;

#[derive(Debug, Clone, Serialize)]
pub struct Board {
    pub benchmark: String,
    pub rows: Vec<Row>,
    pub pairs: Vec<PairRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub position: usize,
    pub submission: i64,
    pub name: String,
    pub by: String,
    pub assistant: String,
    /// The rating and its 95% interval.
    pub rating: f64,
    pub rating_ci95: [f64; 2],
    /// The summary's figures (value, sd, ci95, pct95 each).
    pub integral_help: Value,
    pub exact_share: Value,
    pub empty_rate: Value,
    pub error_rate: Value,
    pub latency_ms: Value,
    pub records: Value,
}

#[derive(Debug, Clone, Serialize)]
pub struct PairRow {
    pub a: i64,
    pub b: i64,
    /// Cases both were judged on.
    pub cases: u64,
    pub wins_a: u64,
    pub wins_b: u64,
    pub ties: u64,
    /// Integral help of `a` minus `b` on their shared cases, and its paired p-value.
    pub diff_integral_help: Option<f64>,
    pub p_value: Option<f64>,
}

/// The board of `benchmark` from its submissions (those `done` count).
pub fn board(data: &Path, benchmark: &str, subs: &[Submission]) -> Result<Board> {
    let done: Vec<&Submission> = subs
        .iter()
        .filter(|s| s.benchmark == benchmark && s.state == DONE)
        .collect();
    if done.is_empty() {
        return Ok(Board {
            benchmark: benchmark.into(),
            rows: Vec::new(),
            pairs: Vec::new(),
        });
    }
    let paths: Vec<_> = done
        .iter()
        .map(|s| out_dir(data, s.id).join("records.jsonl"))
        .collect();
    let labels: Vec<String> = done.iter().map(|s| format!("s{}", s.id)).collect();
    let (table, pairs) = crate::score::read_records_labelled_and_pairs(&paths, &labels, 0)?;
    let summary = crate::score::summarize(&table, &crate::score::Options::default());
    let summary = serde_json::to_value(&summary)?;
    // Each submission's assistant in the summary: `sID/name`.
    let key = |s: &Submission| -> Option<String> {
        let prefix = format!("s{}/", s.id);
        summary["assistants"]
            .as_object()?
            .keys()
            .find(|k| k.starts_with(&prefix))
            .cloned()
    };
    let keys: Vec<Option<String>> = done.iter().map(|s| key(s)).collect();
    // Per-case help of each submission (pass 1; cases judged only).
    let index: BTreeMap<String, usize> = keys
        .iter()
        .enumerate()
        .filter_map(|(i, k)| Some((k.clone()?, i)))
        .collect();
    let mut help: Vec<BTreeMap<String, f64>> = vec![BTreeMap::new(); done.len()];
    // An error or a timeout helped nothing: it loses to any help (a submission cannot
    // climb by failing the cases it would lose).
    for p in pairs.iter().filter(|p| p.pass == 1) {
        let failed = matches!(p.outcome.as_str(), "error" | "timeout");
        let h = if failed { Some(0.0) } else { p.c_help };
        if let (Some(&i), Some(h)) = (index.get(&p.assistant), h) {
            help[i].insert(p.case.clone(), h);
        }
    }
    let cases: Vec<String> = {
        let mut all: Vec<String> = help.iter().flat_map(|h| h.keys().cloned()).collect();
        all.sort();
        all.dedup();
        all
    };
    let n = done.len();
    let per_case = by_case(&help, &cases);
    let all: Vec<usize> = (0..cases.len()).collect();
    let wins = count_wins(&per_case, n, &all);
    let ratings = fit(&wins, n);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(0);
    let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(RESAMPLES); n];
    if !cases.is_empty() {
        for _ in 0..RESAMPLES {
            let pick: Vec<usize> = (0..cases.len())
                .map(|_| (rng.next_u64() % cases.len() as u64) as usize)
                .collect();
            let r = fit(&count_wins(&per_case, n, &pick), n);
            for (d, v) in draws.iter_mut().zip(r) {
                d.push(v);
            }
        }
    }
    let mut rows: Vec<Row> = done
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let f = keys[i]
                .as_ref()
                .map(|k| summary["assistants"][k].clone())
                .unwrap_or(Value::Null);
            Row {
                position: 0,
                submission: s.id,
                name: s.name.clone(),
                by: s.by.clone(),
                assistant: keys[i]
                    .as_deref()
                    .and_then(|k| k.split_once('/'))
                    .map_or(String::new(), |(_, a)| a.to_string()),
                rating: ratings[i],
                rating_ci95: interval(&mut draws[i], ratings[i]),
                integral_help: f["integral_help"].clone(),
                exact_share: f["exact_share"].clone(),
                empty_rate: f["empty_rate"].clone(),
                error_rate: f["error_rate"].clone(),
                latency_ms: f["latency_ms"].clone(),
                records: f["records"].clone(),
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.rating
            .total_cmp(&a.rating)
            .then(a.submission.cmp(&b.submission))
    });
    for (p, r) in rows.iter_mut().enumerate() {
        r.position = p + 1;
    }
    let mut pair_rows = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            let w = wins[i][j];
            // The summary orders a pair by its labels as text (`s10` before `s9`): either
            // order, the difference turned when it is (j, i).
            let find = |x: usize, y: usize| {
                summary["pairwise"].as_array().and_then(|ps| {
                    ps.iter().find(|p| {
                        p["metric"] == "integral_help"
                            && keys[x].as_deref() == p["a"].as_str()
                            && keys[y].as_deref() == p["b"].as_str()
                    })
                })
            };
            let (paired, sign) = match find(i, j) {
                Some(p) => (Some(p), 1.0),
                None => (find(j, i), -1.0),
            };
            pair_rows.push(PairRow {
                a: done[i].id,
                b: done[j].id,
                cases: w.cases,
                wins_a: w.a,
                wins_b: w.b,
                ties: w.ties,
                diff_integral_help: paired.and_then(|p| p["diff"].as_f64()).map(|d| d * sign),
                p_value: paired.and_then(|p| p["p_value"].as_f64()),
            });
        }
    }
    Ok(Board {
        benchmark: benchmark.into(),
        rows,
        pairs: pair_rows,
    })
}

/// The case-by-case record of two submissions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Wins {
    cases: u64,
    a: u64,
    b: u64,
    ties: u64,
}

/// Each case's help per submission (`None`: not judged), looked up once for the fit and
/// every resample.
fn by_case(help: &[BTreeMap<String, f64>], cases: &[String]) -> Vec<Vec<Option<f64>>> {
    cases
        .iter()
        .map(|c| help.iter().map(|h| h.get(c).copied()).collect())
        .collect()
}

/// `wins[i][j]` for `i < j` of `n` submissions over the cases `pick` names (with
/// repeats) in `per_case`, each judged for both.
fn count_wins(per_case: &[Vec<Option<f64>>], n: usize, pick: &[usize]) -> Vec<Vec<Wins>> {
    let mut w = vec![vec![Wins::default(); n]; n];
    for &c in pick {
        let h = &per_case[c];
        for i in 0..n {
            let Some(hi) = h[i] else { continue };
            for j in i + 1..n {
                let Some(hj) = h[j] else { continue };
                let x = &mut w[i][j];
                x.cases += 1;
                if hi > hj {
                    x.a += 1;
                } else if hj > hi {
                    x.b += 1;
                } else {
                    x.ties += 1;
                }
            }
        }
    }
    w
}

/// Bradley–Terry strengths by minorization–maximization (Hunter 2004), on the Elo scale.
fn fit(wins: &[Vec<Wins>], n: usize) -> Vec<f64> {
    // won[i][j]: i's wins over j, ties and the prior counting half to each.
    let mut won = vec![vec![0.0f64; n]; n];
    for i in 0..n {
        for j in i + 1..n {
            let w = wins[i][j];
            let half = 0.5 * (w.ties as f64 + PRIOR_TIES);
            won[i][j] = w.a as f64 + half;
            won[j][i] = w.b as f64 + half;
        }
    }
    let mut p = vec![1.0f64; n];
    for _ in 0..FIT_ROUNDS {
        let mut next = vec![0.0f64; n];
        for i in 0..n {
            let total: f64 = (0..n).filter(|&j| j != i).map(|j| won[i][j]).sum();
            let denom: f64 = (0..n)
                .filter(|&j| j != i)
                .map(|j| (won[i][j] + won[j][i]) / (p[i] + p[j]))
                .sum();
            next[i] = if denom > 0.0 { total / denom } else { 1.0 };
        }
        // Geometric mean 1.
        let g = (next.iter().map(|x| x.ln()).sum::<f64>() / n as f64).exp();
        p = next.into_iter().map(|x| x / g).collect();
    }
    p.into_iter().map(|x| 1000.0 + 400.0 * x.log10()).collect()
}

/// The 2.5th and 97.5th percentiles of `d` (`at` when there is none), as the summary's
/// intervals take them.
fn interval(d: &mut [f64], at: f64) -> [f64; 2] {
    if d.is_empty() {
        return [at, at];
    }
    d.sort_by(f64::total_cmp);
    let q = |f: f64| crate::score::bootstrap::percentile(d, f);
    [q(0.025), q(0.975)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bradley_terry_orders_by_wins_and_a_tie_is_even() {
        let mut wins = vec![vec![Wins::default(); 3]; 3];
        wins[0][1] = Wins {
            cases: 10,
            a: 8,
            b: 2,
            ties: 0,
        };
        wins[0][2] = Wins {
            cases: 10,
            a: 9,
            b: 1,
            ties: 0,
        };
        wins[1][2] = Wins {
            cases: 10,
            a: 5,
            b: 5,
            ties: 0,
        };
        let r = fit(&wins, 3);
        // 1 and 2 are even between them; 1 did better against 0.
        assert!(r[0] > r[1] && r[1] > r[2], "{r:?}");
        // The geometric mean at 1000.
        assert!(
            ((r.iter().sum::<f64>() / 3.0) - 1000.0).abs() < 1e-6,
            "{r:?}"
        );
        // Two submissions, all ties: equal ratings.
        let mut even = vec![vec![Wins::default(); 2]; 2];
        even[0][1] = Wins {
            cases: 5,
            a: 0,
            b: 0,
            ties: 5,
        };
        let r = fit(&even, 2);
        assert!(
            (r[0] - 1000.0).abs() < 1e-9 && (r[1] - 1000.0).abs() < 1e-9,
            "{r:?}"
        );
    }

    #[test]
    fn wins_are_counted_on_cases_both_were_judged_on() {
        let help = vec![
            BTreeMap::from([("c1".into(), 0.9), ("c2".into(), 0.1), ("c3".into(), 0.5)]),
            BTreeMap::from([("c1".into(), 0.2), ("c2".into(), 0.1)]),
        ];
        let cases: Vec<String> = ["c1", "c2", "c3"].map(String::from).to_vec();
        let per_case = by_case(&help, &cases);
        let w = count_wins(&per_case, 2, &[0, 1, 2]);
        assert_eq!(
            w[0][1],
            Wins {
                cases: 2,
                a: 1,
                b: 0,
                ties: 1
            }
        );
        // A resample counts a case as often as it is drawn.
        let w = count_wins(&per_case, 2, &[0, 0, 2]);
        assert_eq!(
            w[0][1],
            Wins {
                cases: 2,
                a: 2,
                b: 0,
                ties: 0
            }
        );
    }
}
