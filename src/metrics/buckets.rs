//! A histogram whose buckets can be read back (see [`Buckets`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use prometheus_client::encoding::{EncodeMetric, MetricEncoder};
use prometheus_client::metrics::MetricType;

/// A histogram with fixed buckets whose counts can be read back (for the status page and
/// the status file's percentiles, which the crate's histogram does not give); it is encoded
/// by the crate's encoder like any histogram.
#[derive(Debug)]
pub struct Buckets {
    bounds: &'static [f64],
    /// One count per bound, and one for the values above the last.
    counts: Vec<AtomicU64>,
    /// The sum of the values, as f64 bits.
    sum: AtomicU64,
}

impl Buckets {
    pub(super) fn new(bounds: &'static [f64]) -> Buckets {
        Buckets {
            bounds,
            counts: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            sum: AtomicU64::new(0f64.to_bits()),
        }
    }

    /// Counts one value.
    pub fn observe(&self, v: f64) {
        let at = self.bounds.partition_point(|&b| b < v);
        self.counts[at].fetch_add(1, Ordering::Relaxed);
        let _ = self
            .sum
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |s| {
                Some((f64::from_bits(s) + v).to_bits())
            });
    }

    /// Each bucket as `{"le": bound, "count": n}` (not cumulative; the last bound `null`,
    /// for what is above the last).
    pub fn buckets_json(&self) -> serde_json::Value {
        self.buckets()
            .into_iter()
            .map(|(le, count)| serde_json::json!({"le": le.is_finite().then_some(le), "count": count}))
            .collect()
    }

    /// Counts one duration.
    pub fn observe_duration(&self, d: Duration) {
        self.observe(d.as_secs_f64());
    }

    /// The values counted.
    pub fn count(&self) -> u64 {
        self.counts.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    /// The sum of the values counted.
    pub fn sum(&self) -> f64 {
        f64::from_bits(self.sum.load(Ordering::Relaxed))
    }

    /// Each bucket's upper bound (`inf` for the last) and the values in it (not cumulative).
    pub fn buckets(&self) -> Vec<(f64, u64)> {
        self.counts
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let bound = self.bounds.get(i).copied().unwrap_or(f64::INFINITY);
                (bound, c.load(Ordering::Relaxed))
            })
            .collect()
    }

    /// The upper bound of the bucket that holds the `q` quantile (0 to 1): the value that
    /// at least that share of the observations are at or below. `None` before any value;
    /// `inf` when it is above the last bound.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let buckets = self.buckets();
        let total: u64 = buckets.iter().map(|b| b.1).sum();
        if total == 0 {
            return None;
        }
        let rank = (q.clamp(0.0, 1.0) * total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        buckets.iter().find_map(|&(bound, n)| {
            seen += n;
            (seen >= rank).then_some(bound)
        })
    }
}

/// The median, 90th and 99th percentiles of a [`Buckets`] (each the upper bound of the
/// bucket that holds it; `None` above the last bound or before any value).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Quantiles {
    /// Values counted.
    pub count: u64,
    /// The median.
    pub p50: Option<f64>,
    /// The 90th percentile.
    pub p90: Option<f64>,
    /// The 99th percentile.
    pub p99: Option<f64>,
}

impl Buckets {
    /// Its [`Quantiles`].
    pub fn quantiles(&self) -> Quantiles {
        let finite = |q: f64| self.quantile(q).filter(|v| v.is_finite());
        Quantiles {
            count: self.count(),
            p50: finite(0.5),
            p90: finite(0.9),
            p99: finite(0.99),
        }
    }
}

impl EncodeMetric for Buckets {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        // The encoders take each bucket's own count and add them up; the last bound is
        // `+Inf`.
        let buckets = self.buckets();
        let count = buckets.iter().map(|b| b.1).sum();
        encoder.encode_histogram::<prometheus_client::encoding::NoLabelSet>(
            self.sum(),
            count,
            &buckets,
            None,
        )
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}
