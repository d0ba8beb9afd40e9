//! `typist bench coverage`: how often `typist score`'s intervals contain the value
//! they estimate. Records are simulated from known populations of per-line c_help
//! values (repositories, files in them, lines in files, two assistants on the same
//! lines), summed per unit and bootstrapped by the library's own code
//! ([`Draws::of`], [`Draws::estimate`], [`Draws::paired`]: what `typist score` runs),
//! and each interval is checked against the population's value, computed by numerical
//! integration ([`population_values`]). Seeded: the same flags print the same table.

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde::Serialize;

use crate::score::bootstrap::{Estimate, Spread, normal_cdf, t_quantile};
use crate::score::summary::MIN_UNITS;
use crate::score::sums::{COLUMNS, Draws, FIX, Sums};

#[derive(Debug, Clone)]
pub struct CoverageOptions {
    /// Simulated data sets per (population, repository count).
    pub replicates: usize,
    /// Bootstrap resamples per interval (`typist score --bootstrap`).
    pub resamples: usize,
    pub seed: u64,
    /// Repository counts.
    pub repos: Vec<usize>,
    pub json: bool,
}

/// A simulated population. A line's latent value for assistant A is
/// `mean_a + u_r + v_f + e`, for B `mean_b + u_r + d_r + v_f + ρ·e + √(1−ρ²)·e'`
/// (u: repository, d: B's own repository effect, v: file, e, e': line, all normal);
/// c_help is the latent clipped to [0, 1], or 1 when the line is an exact match. A
/// line is exact for A when `alpha_a + s·z_r + ε > 0` (z_r, ε standard normal; B the
/// same with `alpha_b` and `ρ·ε + √(1−ρ²)·ε'`), so the exact share's probability varies
/// by repository too. Line lengths are uniform in 10..=60 characters, independent of
/// the rest.
#[derive(Debug, Clone, Serialize)]
pub struct Population {
    pub name: &'static str,
    pub mean_a: f64,
    pub mean_b: f64,
    pub repo_sd: f64,
    /// B's repository effect beyond A's (what makes the difference vary by repository).
    pub repo_sd_b: f64,
    pub file_sd: f64,
    pub line_sd: f64,
    /// Correlation of A's and B's line effects.
    pub rho: f64,
    pub alpha_a: f64,
    pub alpha_b: f64,
    /// The sd of the repository effect on the exact-match probit.
    pub exact_repo_sd: f64,
}

pub const POPULATIONS: [Population; 2] = [
    Population {
        name: "repository effects",
        mean_a: 0.45,
        mean_b: 0.40,
        repo_sd: 0.15,
        repo_sd_b: 0.05,
        file_sd: 0.05,
        line_sd: 0.25,
        rho: 0.6,
        alpha_a: -0.6,
        alpha_b: -0.75,
        exact_repo_sd: 0.5,
    },
    Population {
        name: "no repository effects",
        mean_a: 0.45,
        mean_b: 0.40,
        repo_sd: 0.0,
        repo_sd_b: 0.0,
        file_sd: 0.05,
        line_sd: 0.25,
        rho: 0.6,
        alpha_a: -0.6,
        alpha_b: -0.75,
        exact_repo_sd: 0.0,
    },
];

const FILES_PER_REPO: usize = 4;
const LEN: (u64, u64) = (10, 60);

/// Lines per file for `repos` repositories of four files: about 160 lines in all
/// (4 × 4 × 10, 8 × 4 × 5, 12 × 4 × 4, 20 × 4 × 2), at least two per file.
pub fn lines_per_file(repos: usize) -> usize {
    (40usize.div_ceil(repos.max(1))).max(2)
}

/// The population's values of the figures the bench checks.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Values {
    pub integral_help: f64,
    pub exact_share: f64,
    /// Integral help of A minus B's.
    pub diff: f64,
}

/// `E[min(1, max(0, X))³]` for `X ~ N(mean, sd²)`: Simpson's rule over [0, 1] (4,000
/// intervals) plus the mass above 1.
pub fn clipped_cube(mean: f64, sd: f64) -> f64 {
    if sd == 0.0 {
        return mean.clamp(0.0, 1.0).powi(3);
    }
    let n = 4000;
    let h = 1.0 / n as f64;
    let f = |x: f64| {
        let z = (x - mean) / sd;
        x * x * x * (-0.5 * z * z).exp() / (sd * (2.0 * std::f64::consts::PI).sqrt())
    };
    let mut s = f(0.0) + f(1.0);
    for i in 1..n {
        s += f(i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
    }
    s * h / 3.0 + (1.0 - normal_cdf((1.0 - mean) / sd))
}

/// The population's values, exactly up to the quadrature: lengths are independent of
/// c_help and every repository has as many lines, so integral help is
/// `P(exact) + (1 − P(exact))·E[clip(latent)³]` over the latent's marginal normal, and
/// `P(exact) = Φ(α / √(1 + s²))`.
pub fn population_values(p: &Population) -> Values {
    let line = |repo: f64| (repo * repo + p.file_sd.powi(2) + p.line_sd.powi(2)).sqrt();
    let pe = |alpha: f64| normal_cdf(alpha / (1.0 + p.exact_repo_sd.powi(2)).sqrt());
    let (ea, eb) = (pe(p.alpha_a), pe(p.alpha_b));
    let ha = ea + (1.0 - ea) * clipped_cube(p.mean_a, line(p.repo_sd));
    let repo_b = (p.repo_sd.powi(2) + p.repo_sd_b.powi(2)).sqrt();
    let hb = eb + (1.0 - eb) * clipped_cube(p.mean_b, line(repo_b));
    Values {
        integral_help: ha,
        exact_share: ea,
        diff: ha - hb,
    }
}

/// A standard normal draw (Box–Muller on two 53-bit uniforms; one of the pair used).
fn normal(rng: &mut Pcg64) -> f64 {
    let u = |rng: &mut Pcg64| ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let (u1, u2) = (u(rng), u(rng));
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Adds a simulated line to sums the way an answered suggestion does: weight `w`,
/// `w·c_help` rounded to characters, `w·c_help³` in fixed point.
fn add_line(s: &mut Sums, w: u64, c: f64) {
    let cube = (w as f64 * c * c * c * FIX).round() as i128;
    let help = (w as f64 * c).round() as u64;
    s.cases += 1;
    s.len += w;
    s.help += help;
    s.help_ld1 += help;
    if c == 1.0 {
        s.exact += w;
    }
    s.cube += cube;
    s.cube_ld1 += cube;
    s.len_nonempty += w;
    s.cube_nonempty += cube;
}

/// One simulated data set: per file, A's and B's sums; and the value of A's integral
/// help over the population of files of these repositories (their repository effects
/// as drawn).
struct Sample {
    /// `files[f] = (A, B)`, files of repository r at `r·FILES_PER_REPO..`.
    files: Vec<(Sums, Sums)>,
    these_repos: f64,
}

fn simulate(p: &Population, repos: usize, lines: usize, rng: &mut Pcg64) -> Sample {
    let mut files = Vec::with_capacity(repos * FILES_PER_REPO);
    let within = (p.file_sd.powi(2) + p.line_sd.powi(2)).sqrt();
    let mut these_repos = 0.0;
    let rho_c = (1.0 - p.rho * p.rho).sqrt();
    for _ in 0..repos {
        let u = p.repo_sd * normal(rng);
        let d = p.repo_sd_b * normal(rng);
        let z = p.exact_repo_sd * normal(rng);
        let ea = normal_cdf(p.alpha_a + z);
        these_repos += ea + (1.0 - ea) * clipped_cube(p.mean_a + u, within);
        for _ in 0..FILES_PER_REPO {
            let v = p.file_sd * normal(rng);
            let (mut a, mut b) = (Sums::default(), Sums::default());
            for _ in 0..lines {
                let w = LEN.0 + crate::score::bootstrap::below(rng, LEN.1 - LEN.0 + 1);
                let (e, e2) = (p.line_sd * normal(rng), p.line_sd * normal(rng));
                let (x, x2) = (normal(rng), normal(rng));
                let xa = p.mean_a + u + v + e;
                let xb = p.mean_b + u + d + v + p.rho * e + rho_c * e2;
                let exact_a = p.alpha_a + z + x > 0.0;
                let exact_b = p.alpha_b + z + p.rho * x + rho_c * x2 > 0.0;
                let c = |exact: bool, latent: f64| {
                    if exact { 1.0 } else { latent.clamp(0.0, 1.0) }
                };
                add_line(&mut a, w, c(exact_a, xa));
                add_line(&mut b, w, c(exact_b, xb));
            }
            files.push((a, b));
        }
    }
    Sample {
        files,
        these_repos: these_repos / repos as f64,
    }
}

/// The estimates `typist score` gives on a sample with `unit` as the resampling unit:
/// A's integral help and exact share, and the paired difference of integral help.
fn estimates(s: &Sample, by_repo: bool, resamples: usize, seed: u64) -> [Estimate; 3] {
    let per = if by_repo { FILES_PER_REPO } else { 1 };
    let units: Vec<(Sums, Sums)> = s
        .files
        .chunks(per)
        .map(|fs| {
            fs.iter()
                .fold((Sums::default(), Sums::default()), |mut t, f| {
                    t.0.merge(&f.0);
                    t.1.merge(&f.1);
                    t
                })
        })
        .collect();
    let cols = 2 * COLUMNS;
    let mut matrix = Vec::with_capacity(units.len() * cols);
    let (mut a, mut b) = (Sums::default(), Sums::default());
    for (ua, ub) in &units {
        matrix.extend(ua.columns());
        matrix.extend(ub.columns());
        a.merge(ua);
        b.merge(ub);
    }
    let draws = Draws::of(&matrix, units.len(), cols, resamples, seed, by_repo);
    [
        draws.estimate(0, 0, a.integral_help()),
        draws.estimate(0, 1, a.exact_share()),
        draws.paired(0, COLUMNS, 0, a.integral_help() - b.integral_help()),
    ]
}

/// Coverage counts of one (population, repository count, unit): per interval kind
/// (±2 sd, ±t sd, percentile), per figure.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub population: &'static str,
    pub repositories: usize,
    pub files: usize,
    pub lines: usize,
    pub unit: &'static str,
    pub units: usize,
    /// Whether `typist score` resamples this unit at this repository count.
    pub typist_unit: bool,
    /// The t quantile (0.975, units − 1 degrees of freedom).
    pub t: f64,
    /// The multiplier of sd in typist's `ci95` for this unit and count.
    pub q: f64,
    /// Coverage of `ci95` as `typist score` gives it (`value ± q·sd`).
    pub ci95: [f64; 3],
    /// Coverage (0..1) of integral help, exact share and the paired difference, by
    /// interval: `two_sd`, `t_sd`, `percentile`.
    pub two_sd: [f64; 3],
    pub t_sd: [f64; 3],
    pub percentile: [f64; 3],
    /// File units only: coverage (±2 sd) of integral help over the files of these
    /// repositories (the value given the repositories drawn).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub these_repos_two_sd: Option<f64>,
    /// Mean bootstrap sd of integral help over the replicates, and the sd of its point
    /// values (the spread the interval should match).
    pub mean_sd: f64,
    pub true_sd: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Coverage {
    pub replicates: usize,
    pub resamples: usize,
    pub seed: u64,
    pub populations: Vec<(Population, Values)>,
    pub rows: Vec<Row>,
}

/// A seed per (population, repository count, replicate), mixed (SplitMix64).
fn mix(seed: u64, pop: usize, repos: usize, rep: usize) -> u64 {
    let mut z = seed
        ^ (pop as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (repos as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9)
        ^ (rep as u64).wrapping_mul(0x94D0_49BB_1331_11EB);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

pub fn measure(opts: &CoverageOptions) -> Coverage {
    let mut rows = Vec::new();
    let mut populations = Vec::new();
    for (pi, p) in POPULATIONS.iter().enumerate() {
        let truth = population_values(p);
        populations.push((p.clone(), truth));
        let target = [truth.integral_help, truth.exact_share, truth.diff];
        for &repos in &opts.repos {
            let lines = lines_per_file(repos);
            let samples: Vec<Sample> = (0..opts.replicates)
                .map(|rep| {
                    let mut rng = Pcg64::seed_from_u64(mix(opts.seed, pi, repos, rep));
                    simulate(p, repos, lines, &mut rng)
                })
                .collect();
            for by_repo in [true, false] {
                let units = if by_repo {
                    repos
                } else {
                    repos * FILES_PER_REPO
                };
                let t = t_quantile(0.975, (units.max(2) - 1) as f64);
                let q = Spread::of(by_repo, units).q;
                let (mut two, mut tsd, mut pct, mut these) = ([0usize; 3], [0usize; 3], [0; 3], 0);
                let mut ci = [0usize; 3];
                let (mut sds, mut values) = (Vec::new(), Vec::new());
                for (rep, s) in samples.iter().enumerate() {
                    let boot_seed = mix(opts.seed ^ 0x00C0_FFEE, pi, repos, rep);
                    let est = estimates(s, by_repo, opts.resamples, boot_seed);
                    for (k, e) in est.iter().enumerate() {
                        let inside = |lo: f64, hi: f64| lo <= target[k] && target[k] <= hi;
                        ci[k] += inside(e.ci95[0], e.ci95[1]) as usize;
                        two[k] += inside(e.value - 2.0 * e.sd, e.value + 2.0 * e.sd) as usize;
                        tsd[k] += inside(e.value - t * e.sd, e.value + t * e.sd) as usize;
                        pct[k] += inside(e.pct95[0], e.pct95[1]) as usize;
                    }
                    let e = &est[0];
                    let (lo, hi) = (e.value - 2.0 * e.sd, e.value + 2.0 * e.sd);
                    these += (lo <= s.these_repos && s.these_repos <= hi) as usize;
                    sds.push(e.sd);
                    values.push(e.value);
                }
                let n = opts.replicates.max(1) as f64;
                let share = |c: [usize; 3]| c.map(|c| c as f64 / n);
                rows.push(Row {
                    population: p.name,
                    repositories: repos,
                    files: FILES_PER_REPO,
                    lines,
                    unit: if by_repo { "repository" } else { "file" },
                    units,
                    typist_unit: by_repo == (repos >= MIN_UNITS),
                    t,
                    q,
                    ci95: share(ci),
                    two_sd: share(two),
                    t_sd: share(tsd),
                    percentile: share(pct),
                    these_repos_two_sd: (!by_repo).then_some(these as f64 / n),
                    mean_sd: sds.iter().sum::<f64>() / n,
                    true_sd: crate::score::bootstrap::sd(&values),
                });
            }
        }
    }
    Coverage {
        replicates: opts.replicates,
        resamples: opts.resamples,
        seed: opts.seed,
        populations,
        rows,
    }
}

/// The coverage table (markdown), or the JSON with `--json`.
pub fn coverage(opts: &CoverageOptions) -> anyhow::Result<String> {
    let t0 = std::time::Instant::now();
    let c = measure(opts);
    if opts.json {
        return Ok(serde_json::to_string_pretty(&c)?);
    }
    let n = c.replicates.max(1) as f64;
    let se = (0.95 * 0.05 / n).sqrt() * 100.0;
    let mut out = format!(
        "{} replicates per row, {} bootstrap resamples per interval, seed {}; a true \
         coverage of 95% reads within ±{:.1} points (2 standard errors) of it.\n\
         Population values (numerical integration over the clipped normal):\n",
        c.replicates,
        c.resamples,
        c.seed,
        2.0 * se
    );
    for (p, v) in &c.populations {
        out.push_str(&format!(
            "- {}: integral help {:.4}, exact share {:.4}, difference A − B {:.4} \
             (repository sd {}, B's own {}, file sd {}, line sd {}, ρ {}, exact probit \
             repository sd {})\n",
            p.name,
            v.integral_help,
            v.exact_share,
            v.diff,
            p.repo_sd,
            p.repo_sd_b,
            p.file_sd,
            p.line_sd,
            p.rho,
            p.exact_repo_sd
        ));
    }
    out.push_str(
        "\nCoverage (%) of the intervals of integral help (IH), exact share (ES) and the \
         paired difference of integral help (Δ); `*`: the unit typist score resamples; \
         typist's ci95 is value ± q·sd.\n\n\
         | population | repos × files × lines | unit | typist's ci95: IH | ES | Δ | q | ±2 sd: IH | ES | Δ | ±t·sd: IH | ES | Δ | t | percentile: IH | ES | Δ | IH ±2 sd, these repos' files | mean sd / true sd (IH) |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let pc = |x: f64| format!("{:.1}", 100.0 * x);
    // A coverage per figure: IH, ES and Δ.
    let pcs = |x: [f64; 3]| format!("{} | {} | {}", pc(x[0]), pc(x[1]), pc(x[2]));
    for r in &c.rows {
        out.push_str(&format!(
            "| {} | {} × {} × {} | {} ({}){} | {} | {:.3} | {} | {} | {:.3} | {} | {} | {:.2} |\n",
            r.population,
            r.repositories,
            r.files,
            r.lines,
            r.unit,
            r.units,
            if r.typist_unit { " *" } else { "" },
            pcs(r.ci95),
            r.q,
            pcs(r.two_sd),
            pcs(r.t_sd),
            r.t,
            pcs(r.percentile),
            r.these_repos_two_sd.map_or("–".into(), pc),
            r.mean_sd / r.true_sd,
        ));
    }
    out.push_str(&format!(
        "\n{:.1} s; load average at the end: {}\n",
        t0.elapsed().as_secs_f64(),
        super::child::load_average()
    ));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quadrature agrees with a large Monte Carlo of the clipped normal.
    #[test]
    fn population_values_match_a_monte_carlo() {
        let mut rng = Pcg64::seed_from_u64(3);
        let (mean, sd) = (
            0.45,
            (0.15f64.powi(2) + 0.05f64.powi(2) + 0.25f64.powi(2)).sqrt(),
        );
        let n = 400_000;
        let mc = (0..n)
            .map(|_| (mean + sd * normal(&mut rng)).clamp(0.0, 1.0).powi(3))
            .sum::<f64>()
            / n as f64;
        let q = clipped_cube(mean, sd);
        assert!((mc - q).abs() < 2e-3, "{mc} vs {q}");
        let v = population_values(&POPULATIONS[0]);
        assert!(v.diff > 0.0 && v.integral_help > v.exact_share);
    }

    #[test]
    fn a_tiny_run_is_seeded_and_reads_as_a_table() {
        let opts = CoverageOptions {
            replicates: 6,
            resamples: 50,
            seed: 2,
            repos: vec![4, 12],
            json: false,
        };
        let (a, b) = (measure(&opts), measure(&opts));
        assert_eq!(a.rows.len(), 2 * 2 * 2);
        assert_eq!(
            serde_json::to_string(&a.rows).unwrap(),
            serde_json::to_string(&b.rows).unwrap()
        );
        let table = coverage(&opts).unwrap();
        assert!(table.contains("| repository effects | 12 × 4 × 4 | repository (12) * |"));
        let json = coverage(&CoverageOptions { json: true, ..opts }).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["rows"].as_array().unwrap().len(), 8);
    }
}
