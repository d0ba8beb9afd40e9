use super::*;

/// The walks `Walk::all` replaced: one per assistant, one for the pairs.
impl Walk<'_> {
    fn each_old(&self, a: usize, mut f: impl FnMut((u32, u32), Option<u32>, Answer)) {
        let mut run: Vec<Answer> = Vec::new();
        for (at, line, lo, hi) in self.spans() {
            if hi - lo == 1 {
                // One case at this line (line cases): nothing to put in order.
                let x = self.answers[lo * self.n_a + a];
                if x.w > 0 {
                    f(at, line, x);
                }
                continue;
            }
            run.clear();
            run.extend(
                (lo..hi)
                    .map(|i| self.answers[i * self.n_a + a])
                    .filter(|x| x.w > 0),
            );
            // (c_help³ is a function of the two.)
            run.sort_unstable_by_key(|x| (x.w, x.gain));
            for &x in &run {
                f(at, line, x);
            }
        }
    }

    /// Assistant `a`'s counts, the components of integral help's and exact share's
    /// contributions, and the autocorrelation of integral help's. Each case's
    /// contribution to a ratio `Σ w·y / Σ w` is its linearization `w_i·(y_i − R)/w̄`,
    /// whose mean is the ratio's error to first order.
    fn assistant(&self, a: usize) -> Option<Prepared1> {
        let (mut n, mut sw, mut swc, mut swe) = (0u64, 0.0, 0.0, 0.0);
        self.each_old(a, |_, _, x| {
            let wf = x.w as f64;
            n += 1;
            sw += wf;
            swc += wf * x.cube();
            swe += wf * f64::from(u8::from(x.gain == x.w));
        });
        if n == 0 || sw == 0.0 {
            return None;
        }
        let (rc, re, wbar) = (swc / sw, swe / sw, sw / n as f64);
        let value_c = |x: Answer| x.w as f64 * (x.cube() - rc) / wbar;
        let value_e = |x: Answer| x.w as f64 * (f64::from(u8::from(x.gain == x.w)) - re) / wbar;
        // The contributions' mean is 0 (Σ w·(y − R) = 0 at the sample's own ratio R):
        // they are centred already, and the 1/n in the ICC undoes that centring.
        let (mut ih, mut ex, mut lags) = (
            ComponentsAcc::new(0.0),
            ComponentsAcc::new(0.0),
            LagAcc::new(0.0),
        );
        let (mut files, mut repos, mut last) = (0u64, 0u64, None::<(u32, u32)>);
        self.each_old(a, |group, line, x| {
            if last != Some(group) {
                files += 1;
                repos += u64::from(last.is_none_or(|l| l.0 != group.0));
                last = Some(group);
            }
            let v = value_c(x);
            ih.push(group, v);
            ex.push(group, value_e(x));
            lags.push(group, line, v);
        });
        let integral_help = ih.finish();
        Some(Prepared1 {
            cases: n,
            files,
            repositories: repos,
            exact_share: ex.finish(),
            autocorrelation: lags.finish(&integral_help),
            integral_help,
        })
    }

    /// The components of the contributions of the paired integral-help differences
    /// `d = c_a³ − c_b³` of each pair `(names[i], names[j])`, `i < j`, on the cases both
    /// answered (weighted by a's weight; in a's order, ties by the difference), in that
    /// order of pairs; None for a pair that shares no case. Two walks for all the pairs
    /// (the sums, then the centred contributions); a line of one case (line cases) has
    /// each answer's c_help³ computed once a walk for every pair it is in. Each pair's
    /// sums run in the order its own walk would take.
    fn pairs(&self, names: &[usize]) -> Vec<Option<Components>> {
        let pairs: Vec<(usize, usize)> = (0..names.len())
            .flat_map(|i| (i + 1..names.len()).map(move |j| (i, j)))
            .collect();
        let mut sums = vec![(0u64, 0.0f64, 0.0f64); pairs.len()];
        self.each_pair(names, &pairs, |p, _, w, d| {
            let (n, sw, swd) = &mut sums[p];
            *n += 1;
            *sw += w as f64;
            *swd += w as f64 * d;
        });
        // (mean difference, mean weight) of each pair with cases.
        let means: Vec<Option<(f64, f64)>> = (sums.iter())
            .map(|&(n, sw, swd)| (n > 0 && sw != 0.0).then(|| (swd / sw, sw / n as f64)))
            .collect();
        // Centred already, as an assistant's.
        let mut accs: Vec<ComponentsAcc> = pairs.iter().map(|_| ComponentsAcc::new(0.0)).collect();
        self.each_pair(names, &pairs, |p, group, w, d| {
            if let Some((dd, wbar)) = means[p] {
                accs[p].push(group, w as f64 * (d - dd) / wbar);
            }
        });
        (accs.into_iter().zip(means))
            .map(|(acc, m)| m.map(|_| acc.finish()))
            .collect()
    }

    /// Calls `f(p, (repository, file), w_a, c_a³ − c_b³)` for each pair `p` of `pairs`
    /// (indices into `names`) on the cases both answered, by file and line, then by a's
    /// weight and gain and the difference.
    fn each_pair(
        &self,
        names: &[usize],
        pairs: &[(usize, usize)],
        mut f: impl FnMut(usize, (u32, u32), u32, f64),
    ) {
        let mut cubes = vec![0.0f64; names.len()];
        let mut run: Vec<(u32, u32, f64)> = Vec::new();
        for (at, _, lo, hi) in self.spans() {
            let n_a = self.n_a;
            if hi - lo == 1 {
                // One case at this line (line cases): each answer's c_help³ once.
                let row = &self.answers[lo * n_a..(lo + 1) * n_a];
                for (c, &a) in cubes.iter_mut().zip(names) {
                    if row[a].w > 0 {
                        *c = row[a].cube();
                    }
                }
                for (p, &(i, j)) in pairs.iter().enumerate() {
                    let (x, y) = (row[names[i]], row[names[j]]);
                    if x.w > 0 && y.w > 0 {
                        f(p, at, x.w, cubes[i] - cubes[j]);
                    }
                }
                continue;
            }
            for (p, &(i, j)) in pairs.iter().enumerate() {
                let (a, b) = (names[i], names[j]);
                run.clear();
                run.extend((lo..hi).filter_map(|i| {
                    let (x, y) = (self.answers[i * n_a + a], self.answers[i * n_a + b]);
                    (x.w > 0 && y.w > 0).then(|| (x.w, x.gain, x.cube() - y.cube()))
                }));
                run.sort_unstable_by(|x, y| (x.0, x.1).cmp(&(y.0, y.1)).then(x.2.total_cmp(&y.2)));
                for &(w, _, d) in &run {
                    f(p, at, w, d);
                }
            }
        }
    }
}

/// The one walk for every assistant and pair gives what a walk of each assistant
/// and a walk of the pairs gave before (kept above as the reference), compared
/// through `Debug` (which tells −0.0 from 0.0): on random cases with lines of
/// several cases, lines missing, answers missing, runs of lines of one case longer
/// than a batch followed by lines of several, up to four assistants, an assistant
/// that never answers beside others, and a pair that shares no case beside others.
#[test]
fn one_walk_for_all_is_each_assistants_own_walk() {
    let mut next = crate::score::distance::tests::xorshift(11);
    // (cases, files at most, lines at most, one line in so many missing, assistants,
    // one case in so many at the line of the case before (0: none), who answers:
    // 0 everyone, 1 all but the last, 2 the first two never the same case).
    for (size, files, span, missing, n_a, dup, who) in [
        (0usize, 30, 400, 10, 3, 0, 0),
        (1, 30, 400, 10, 2, 0, 0),
        (7, 30, 400, 10, 3, 0, 0),
        (300, 30, 400, 10, 2, 0, 0),
        (2000, 30, 400, 10, 4, 0, 0),
        (3000, 2, 1_000_000, 0, 4, 0, 0),
        (5000, 3, 1_000_000, 700, 1, 0, 0),
        (4000, 2, 1_000_000, 0, 4, 600, 1),
        (3000, 5, 1_000_000, 50, 3, 300, 2),
    ] {
        let files = 1 + (next() % files) as usize;
        let mut file_of_case: Vec<u32> =
            (0..size).map(|_| (next() % files as u64) as u32).collect();
        let mut lines: Vec<u32> = (0..size)
            .map(|_| match missing > 0 && next().is_multiple_of(missing) {
                true => u32::MAX,
                false => (next() % span) as u32,
            })
            .collect();
        for c in 1..size {
            if dup > 0 && next().is_multiple_of(dup) {
                (file_of_case[c], lines[c]) = (file_of_case[c - 1], lines[c - 1]);
            }
        }
        let order = by_file_and_line(&file_of_case, files, &lines);
        let repo_of_file: Vec<u32> = (0..files as u32).map(|f| f / 3).collect();
        let answers: Vec<Answer> = (0..order.len() * n_a)
            .map(|i| {
                let (place, a) = (i / n_a, i % n_a);
                let silent = match who {
                    1 => a == n_a - 1,
                    2 => a < 2 && place % 2 == a,
                    _ => false,
                };
                let w = match next() % 6 {
                    _ if silent => 0,
                    0 => 0,
                    _ => 1 + (next() % 60) as u32,
                };
                let gain = match next() % 3 {
                    0 => w,
                    1 => 0,
                    _ => (next() % (u64::from(w) + 1)) as u32,
                };
                Answer { w, gain }
            })
            .collect();
        let walk = Walk::new(&order, &answers, n_a, &repo_of_file);
        let names: Vec<usize> = (0..n_a).rev().collect();
        let (ones, pairs) = walk.all(&names);
        let at = format!("size {size}, {n_a} assistants");
        for (r, one) in ones.iter().enumerate() {
            let want = walk.assistant(names[r]);
            assert_eq!(one.is_some(), want.is_some(), "{at}, assistant {r}");
            let (Some(got), Some(want)) = (one, want) else {
                continue;
            };
            assert_eq!(
                (got.cases, got.files, got.repositories),
                (want.cases, want.files, want.repositories),
                "{at}"
            );
            let parts = |p: &Prepared1| {
                format!(
                    "{:?} {:?} {:?}",
                    p.integral_help, p.exact_share, p.autocorrelation
                )
            };
            assert_eq!(parts(got), parts(&want), "{at}, assistant {r}");
        }
        assert_eq!(
            format!("{pairs:?}"),
            format!("{:?}", walk.pairs(&names)),
            "{at}"
        );
        // What each configuration is there for.
        match who {
            1 => assert!(ones[0].is_none() && ones[1].is_some(), "{at}"),
            2 => assert!(pairs.last().is_some_and(Option::is_none), "{at}"),
            _ => {}
        }
    }
}

#[test]
fn cases_by_file_and_line_are_those_a_sort_gives() {
    let mut next = crate::score::distance::tests::xorshift(7);
    for size in [0usize, 1, 5, 300, 5000] {
        let files = 1 + (next() % 40) as usize;
        let file_of_case: Vec<u32> = (0..size)
            .map(|_| match next() % 10 {
                0 => u32::MAX,
                _ => (next() % files as u64) as u32,
            })
            .collect();
        let lines: Vec<u32> = (0..size)
            .map(|_| match next() % 8 {
                0 => u32::MAX,
                _ => (next() % 60) as u32,
            })
            .collect();
        let got = by_file_and_line(&file_of_case, files, &lines);
        let mut want: Vec<(u32, Option<u32>, u32)> = (file_of_case.iter().enumerate())
            .filter(|(_, f)| **f != u32::MAX)
            .map(|(c, &f)| (f, Some(lines[c]).filter(|&l| l != u32::MAX), c as u32))
            .collect();
        want.sort_unstable();
        let keys = |v: &[(u32, Option<u32>, u32)]| v.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>();
        assert_eq!(keys(&got), keys(&want), "size {size}");
        let mut got = got;
        got.sort_unstable();
        assert_eq!(got, want, "size {size}");
    }
}
