//! The stage's counters and sizes.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of a [`Dedup`](super::Dedup) since it was opened, plus the sizes of what it holds.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct DedupStats {
    /// URLs checked.
    pub urls_checked: u64,
    /// Of those, new.
    pub urls_new: u64,
    /// Of those, seen before.
    pub urls_seen: u64,
    /// Of those, not crawlable.
    pub urls_invalid: u64,
    /// Pages checked.
    pub pages_checked: u64,
    /// Of those, unique.
    pub pages_unique: u64,
    /// Of those, exact duplicates.
    pub pages_exact_duplicate: u64,
    /// Of those, near-duplicates.
    pub pages_near_duplicate: u64,
    /// Of those, without main text.
    pub pages_no_text: u64,
    /// Candidates (from either source) that the sketch confirmation refused.
    pub candidates_refused: u64,
    /// Documents in the index (from all sessions).
    pub indexed_documents: u64,
    /// URLs in the filter (from all sessions).
    pub seen_urls: u64,
    /// Bytes of the URL filter.
    pub seen_filter_bytes: u64,
    /// URLs in the filter over the URLs its live layers were sized for (`url_filter`'s
    /// expected count, doubled with each layer added).
    pub seen_fill_ratio: f64,
    /// The filter's false-positive rate now, from its fill: the chance that a new URL is
    /// taken for one seen.
    pub seen_fp_rate: f64,
    /// Checkpoints taken since opening.
    pub checkpoints: u64,
    /// Documents the index's snapshot in place holds (absent: none yet): an open after a
    /// crash maps it and reads only the documents after it from the database.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot_documents: Option<u64>,
    /// Snapshots of the index written in the background since opening.
    pub snapshots_written: u64,
    /// The time windows: fingerprint retention and URL recrawl.
    #[serde(flatten)]
    pub windows: WindowStats,
}

/// The figures of the time windows (`dedup.retention`, `url_filter.recrawl_after`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct WindowStats {
    /// The fingerprint retention window in seconds (absent: fingerprints are kept for good).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention_secs: Option<u64>,
    /// When the oldest fingerprint still held was stored (seconds since the Unix epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oldest_live_fingerprint: Option<u64>,
    /// Fingerprints that fell out of the retention window, since the index was created.
    #[serde(default)]
    pub fingerprints_expired: u64,
    /// Fingerprints held: stored and not expired.
    #[serde(default)]
    pub live_documents: u64,
    /// The recrawl interval in seconds (absent: a URL seen once is skipped for good).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recrawl_after_secs: Option<u64>,
    /// Live generations of the URL filter.
    #[serde(default)]
    pub url_generations: usize,
    /// URLs forgotten by the filter (come due again), since it was created.
    #[serde(default)]
    pub urls_expired: u64,
}

#[derive(Default)]
pub(super) struct Counters {
    pub(super) urls_checked: AtomicU64,
    pub(super) urls_new: AtomicU64,
    pub(super) urls_seen: AtomicU64,
    pub(super) urls_invalid: AtomicU64,
    pub(super) pages_checked: AtomicU64,
    pub(super) pages_unique: AtomicU64,
    pub(super) pages_exact: AtomicU64,
    pub(super) pages_near: AtomicU64,
    pub(super) pages_no_text: AtomicU64,
    pub(super) checkpoints: AtomicU64,
}

pub(super) fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}
