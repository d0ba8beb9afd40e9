//! The scoring options: how many bootstrap resamples, their seed, which pass, whether
//! the curves get bands. A value handed down to every part of the summary; it knows
//! nothing of them.

#[derive(Debug, Clone)]
pub struct Options {
    pub bootstrap: usize,
    pub seed: u64,
    pub pass: u32,
    /// Also bootstrap the H(S|t) curves (percentile bands every 0.05); off by default,
    /// as it costs more than every other interval together.
    pub curve_bands: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            bootstrap: 1000,
            seed: 0,
            pass: 1,
            curve_bands: false,
        }
    }
}
