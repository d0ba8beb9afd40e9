//! A design's variance components in pairwise-moment form ([`Components`]): the
//! intraclass correlations within a file and within a repository, the design effect,
//! and the widths and rates they project (the estimator is in the design section's
//! module documentation).

/// A case's place in the design and its value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Obs {
    pub repo: u32,
    /// A file id, unique across repositories.
    pub file: u32,
    pub value: f64,
}

/// The variance components of a set of observations, in pairwise-moment form.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Components {
    pub n: u64,
    /// `Σ z_i² / (n − 1)` (0 with fewer than two).
    pub s2: f64,
    pub icc_file: Option<f64>,
    pub icc_repo: Option<f64>,
    /// `Σ n_f² / n` and `Σ n_r² / n`: the mean size of the file (repository) a case is in.
    pub mf: f64,
    pub mr: f64,
}

/// [`Components`]' sums, fed one value at a time with its (repository, file), equal
/// groups adjacent (files numbered in repository order), centred on a mean known
/// beforehand. The sums run in the order fed.
pub(super) struct ComponentsAcc {
    mean: f64,
    n: u64,
    s1: f64,
    sf: f64,
    sr: f64,
    nf2: u64,
    nr2: u64,
    zf: f64,
    zr: f64,
    kf: u64,
    kr: u64,
    last: Option<(u32, u32)>,
}

impl ComponentsAcc {
    pub(super) fn new(mean: f64) -> ComponentsAcc {
        ComponentsAcc {
            mean,
            n: 0,
            s1: 0.0,
            sf: 0.0,
            sr: 0.0,
            nf2: 0,
            nr2: 0,
            zf: 0.0,
            zr: 0.0,
            kf: 0,
            kr: 0,
            last: None,
        }
    }

    pub(super) fn push(&mut self, group: (u32, u32), value: f64) {
        if let Some(last) = self.last.filter(|l| *l != group) {
            self.close(last.0 != group.0);
        }
        self.last = Some(group);
        let z = value - self.mean;
        self.n += 1;
        self.s1 += z * z;
        self.zf += z;
        self.zr += z;
        self.kf += 1;
        self.kr += 1;
    }

    /// Ends the current file, and its repository when `repo`.
    fn close(&mut self, repo: bool) {
        self.sf += self.zf * self.zf;
        self.nf2 += self.kf * self.kf;
        (self.zf, self.kf) = (0.0, 0);
        if repo {
            self.sr += self.zr * self.zr;
            self.nr2 += self.kr * self.kr;
            (self.zr, self.kr) = (0.0, 0);
        }
    }

    pub(super) fn finish(mut self) -> Components {
        if self.last.is_some() {
            self.close(true);
        }
        let n = self.n;
        let s2 = if n >= 2 {
            self.s1 / (n - 1) as f64
        } else {
            0.0
        };
        let nn = n as f64;
        let icc = |cross: f64, pairs: u64| {
            (pairs > 0 && s2 > 0.0)
                .then(|| (cross / (pairs as f64 * s2) + 1.0 / nn).clamp(0.0, 1.0))
        };
        Components {
            n,
            s2,
            icc_file: icc(self.sf - self.s1, self.nf2 - n),
            icc_repo: icc(self.sr - self.sf, self.nr2 - self.nf2),
            mf: self.nf2 as f64 / nn.max(1.0),
            mr: self.nr2 as f64 / nn.max(1.0),
        }
    }
}

impl Components {
    /// Of `obs`, centred on their mean.
    pub fn of(obs: &[Obs]) -> Components {
        // By (repository, file), keeping the input's order within a file (a stable sort).
        let mut order: Vec<&Obs> = obs.iter().collect();
        order.sort_by_key(|o| (o.repo, o.file));
        let mean = obs.iter().map(|o| o.value).sum::<f64>() / obs.len().max(1) as f64;
        let mut acc = ComponentsAcc::new(mean);
        for o in order {
            acc.push((o.repo, o.file), o.value);
        }
        acc.finish()
    }

    /// The clustered part of the design effect, `B = ρ_file·(m_f − 1) + ρ_repo·(m_r −
    /// m_f)` (the repository term only when repositories are the design's unit): the
    /// design effect is `1 + B`. None without spread.
    fn clustered(&self, repositories: bool) -> Option<f64> {
        if self.s2 <= 0.0 || self.n < 2 {
            return None;
        }
        let file = self.icc_file.unwrap_or(0.0) * (self.mf - 1.0);
        let repo = if repositories {
            self.icc_repo.unwrap_or(0.0) * (self.mr - self.mf)
        } else {
            0.0
        };
        Some(file + repo)
    }

    /// The design effect at `k` times this sampling rate (each line kept with k times
    /// the probability; files and repositories as now): `1 + k·B`. Pairs of cases in
    /// one file (or repository) grow as k², the cases as k, so `B`, which counts pairs
    /// per case, grows as k (not `k·m_f − 1`: a file's size in this sample counts its
    /// own case, whose share falls as the rate rises).
    pub fn deff_at(&self, k: f64, repositories: bool) -> Option<f64> {
        Some(1.0 + k * self.clustered(repositories)?)
    }

    pub fn deff(&self, repositories: bool) -> Option<f64> {
        self.deff_at(1.0, repositories)
    }

    /// The interval width at `k` times the rate over the width now:
    /// `√(deff(k) / (k · deff(1)))`.
    pub fn width_ratio(&self, k: f64, repositories: bool) -> Option<f64> {
        let (dk, d1) = (self.deff_at(k, repositories)?, self.deff(repositories)?);
        (d1 > 0.0 && dk > 0.0).then(|| (dk / (k * d1)).sqrt())
    }

    /// The smallest multiple of the rate at which the half width `half` falls to
    /// `|diff|`, or None when no multiple does (the clustered part alone is wider).
    /// 1 when it is already there.
    pub fn rate_needed(&self, half: f64, diff: f64, repositories: bool) -> Option<f64> {
        if diff.abs() >= half {
            return Some(1.0);
        }
        let b = self.clustered(repositories)?;
        // (half(k)/half)² = (1/k + B)/(1 + B); equal to (diff/half)² at k = 1/(g − B).
        let g = (diff / half).powi(2) * (1.0 + b);
        (g > b).then(|| 1.0 / (g - b))
    }
}
