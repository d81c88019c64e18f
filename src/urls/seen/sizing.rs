//! Sizing: m and k from n and p, and the first layer of the scalable filter.

use super::SeenError;

/// Filters above this many bits (64 GiB) are refused: such a size is a typo in n or p.
pub(super) const MAX_BITS: u64 = 1 << 39;

/// Size and hash count of one Bloom filter, from the expected count `n` and the target
/// false-positive rate `p`.
///
/// ```
/// use crawldedup::BloomParams;
/// let params = BloomParams::new(1_000_000, 0.01)?;
/// assert_eq!(params.m, 9_585_059);
/// assert_eq!(params.k, 7);
/// assert!((params.expected_fp_rate(1_000_000) - 0.01).abs() < 0.0005);
/// # Ok::<(), crawldedup::SeenError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BloomParams {
    /// Expected number of items.
    pub n: u64,
    /// Target false-positive rate at `n` items.
    pub p: f64,
    /// Bits: `ceil(-n ln p / (ln 2)^2)`.
    pub m: u64,
    /// Hashes per item: `round(m / n * ln 2)`, at least 1.
    pub k: u32,
}

impl BloomParams {
    /// Computes m and k; `n >= 1` and `0 < p < 1`.
    pub fn new(n: u64, p: f64) -> Result<BloomParams, SeenError> {
        if n == 0 {
            return Err(SeenError::Params(
                "n (expected_urls) must be at least 1".into(),
            ));
        }
        if !(p > 0.0 && p < 1.0) {
            return Err(SeenError::Params(format!(
                "p (false_positive_rate) must lie strictly between 0 and 1, got {p}"
            )));
        }
        let ln2 = std::f64::consts::LN_2;
        let m = (-(n as f64) * p.ln() / (ln2 * ln2)).ceil();
        if m > MAX_BITS as f64 {
            return Err(SeenError::Params(format!(
                "n = {n} at p = {p} needs {m:.0} bits, over the {} GiB limit",
                MAX_BITS / 8 / (1 << 30)
            )));
        }
        let m = m as u64;
        let k = ((m as f64 / n as f64) * ln2).round().max(1.0) as u32;
        Ok(BloomParams { n, p, m, k })
    }

    /// Bytes of the bit vector (m rounded up to whole 64-bit words).
    pub fn bytes(&self) -> u64 {
        self.m.div_ceil(64) * 8
    }

    /// The false-positive rate expected after `count` insertions: `(1 - e^(-k c / m))^k`.
    pub fn expected_fp_rate(&self, count: u64) -> f64 {
        let bits = (self.m.div_ceil(64) * 64) as f64;
        let k = f64::from(self.k);
        (1.0 - (-k * count as f64 / bits).exp()).powf(k)
    }
}

/// How a [`SeenUrls`](super::SeenUrls) is sized, whether it confirms on disk, and whether
/// it forgets. Built with [`SeenConfig::new`] (or [`Default`]) and the `with_` setters, so
/// that a setting added later is not a breaking change.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct SeenConfig {
    /// Expected number of distinct URLs (n); with `expire_after`, the URLs seen in one such
    /// window.
    pub expected_urls: u64,
    /// Bound on the compound false-positive rate (p), however many URLs arrive, over every
    /// live generation.
    pub false_positive_rate: f64,
    /// Confirm "maybe seen" answers against exact 128-bit hashes on disk.
    pub confirm_on_disk: bool,
    /// Forget a URL this long after it was recorded (at most `1 / generations` later):
    /// time-sliced generations, see [`SeenUrls`](super::SeenUrls). `None` never forgets.
    pub expire_after: Option<std::time::Duration>,
    /// Generations per `expire_after` (g, 2 to 64).
    pub generations: u32,
}

impl Default for SeenConfig {
    fn default() -> Self {
        SeenConfig {
            expected_urls: 10_000_000,
            false_positive_rate: 0.01,
            confirm_on_disk: false,
            expire_after: None,
            generations: 8,
        }
    }
}

impl SeenConfig {
    /// A filter for `expected_urls` distinct URLs at a false-positive rate of
    /// `false_positive_rate`, the other settings as [`Default`] has them.
    pub fn new(expected_urls: u64, false_positive_rate: f64) -> SeenConfig {
        SeenConfig {
            expected_urls,
            false_positive_rate,
            ..SeenConfig::default()
        }
    }

    /// Sets [`SeenConfig::confirm_on_disk`].
    pub fn with_confirm_on_disk(mut self, confirm: bool) -> SeenConfig {
        self.confirm_on_disk = confirm;
        self
    }

    /// Forgets a URL `after` this long ([`SeenConfig::expire_after`]), in `generations`
    /// time slices ([`SeenConfig::generations`]).
    pub fn with_expiry(mut self, after: std::time::Duration, generations: u32) -> SeenConfig {
        self.expire_after = Some(after);
        self.generations = generations;
        self
    }

    /// The length of one generation's time slice in milliseconds (`ceil(window / g)`),
    /// when the filter forgets: a URL comes due between the interval and one slice later.
    pub fn slice_ms(&self) -> Option<u64> {
        let g = u64::from(self.generations.max(1));
        self.expire_after
            .map(|w| crate::clock::window_ms(w).div_ceil(g).max(1))
    }

    /// The recrawl interval in milliseconds, as set (at least one second), when the filter
    /// forgets.
    pub fn interval_ms(&self) -> Option<u64> {
        self.expire_after.map(crate::clock::window_ms)
    }

    /// The most generations live at once: g full ones and the one filling (1 without
    /// expiry).
    pub fn live_generations(&self) -> u32 {
        match self.expire_after {
            Some(_) => self.generations.max(1) + 1,
            None => 1,
        }
    }

    /// The sizing of one generation: `n / g` URLs (all `n` without expiry) at a bound of
    /// `p / (g + 1)`, so that the rate over all live generations stays under `p`.
    pub fn generation(&self) -> (u64, f64) {
        match self.expire_after {
            Some(_) => {
                let g = u64::from(self.generations.max(1));
                (
                    self.expected_urls.div_ceil(g).max(1),
                    self.false_positive_rate / f64::from(self.live_generations()),
                )
            }
            None => (self.expected_urls, self.false_positive_rate),
        }
    }

    /// The sizing of a generation's first layer: its `n` URLs at half its bound, so that
    /// the geometric series of later layers (1/4, 1/8, ... of it) keeps the generation's
    /// compound rate below its bound however many URLs arrive.
    pub fn first_layer(&self) -> Result<BloomParams, SeenError> {
        if !(self.false_positive_rate > 0.0 && self.false_positive_rate < 1.0) {
            return Err(SeenError::Params(format!(
                "p (false_positive_rate) must lie strictly between 0 and 1, got {}",
                self.false_positive_rate
            )));
        }
        if self.expire_after.is_some() && !(2..=64).contains(&self.generations) {
            return Err(SeenError::Params(format!(
                "generations must lie between 2 and 64, got {}",
                self.generations
            )));
        }
        let (n, p) = self.generation();
        BloomParams::new(n, p / 2.0)
    }
}
