//! The page stage's figures as metrics, read from [`Dedup::stats`] at each scrape.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Unit;

use super::epoch_ms;
use crate::dedup::Dedup;

/// Where the page stage's figures come from: the stage itself while it is open, its last
/// figures once it is closed (a crawl's listener lingers after the crawl closed its index,
/// which it could not do while a scrape could still reach it).
#[derive(Debug)]
pub(super) enum Source {
    Live(Arc<Dedup>),
    Final(Box<crate::dedup::DedupStats>, u64),
}

#[derive(Debug)]
pub(super) struct StageSource(pub(super) std::sync::RwLock<Source>);

impl StageSource {
    /// The stage's counters and the index's bytes on disk.
    pub(super) fn read(&self) -> (crate::dedup::DedupStats, u64) {
        match &*self.0.read().unwrap_or_else(|e| e.into_inner()) {
            Source::Live(dedup) => (dedup.stats(), dedup.index_disk_bytes()),
            Source::Final(stats, bytes) => ((**stats).clone(), *bytes),
        }
    }
}

/// The page stage's figures, read at each scrape.
#[derive(Debug)]
pub(super) struct Stage {
    pub(super) stage: Arc<StageSource>,
    pub(super) checkpoint_ms: Arc<AtomicU64>,
}

/// Encodes one counter family: `name_total{key="value"}` for each pair.
fn counter_family(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    key: &'static str,
    values: &[(&str, u64)],
) -> Result<(), std::fmt::Error> {
    let mut family = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
    for (value, n) in values {
        let labels = [(key, *value)];
        ConstCounter::new(*n).encode(family.encode_family(&labels)?)?;
    }
    Ok(())
}

fn gauge(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<&Unit>,
    v: f64,
) -> Result<(), std::fmt::Error> {
    let g = ConstGauge::new(v);
    g.encode(encoder.encode_descriptor(name, help, unit, g.metric_type())?)
}

fn counter(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    v: u64,
) -> Result<(), std::fmt::Error> {
    let c = ConstCounter::new(v);
    c.encode(encoder.encode_descriptor(name, help, None, c.metric_type())?)
}

/// The stage's gauges: name, help, unit and value.
fn gauges(
    s: &crate::dedup::DedupStats,
    index_bytes: u64,
) -> [(&'static str, &'static str, Option<&'static Unit>, f64); 7] {
    let bytes = Some(&Unit::Bytes);
    [
        (
            "index_documents",
            "Documents in the index, of every run",
            None,
            s.indexed_documents as f64,
        ),
        (
            "index_live_documents",
            "Documents in the index inside the retention window (all of them without one)",
            None,
            s.windows.live_documents as f64,
        ),
        (
            "index",
            "Bytes of the index's database on disk",
            bytes,
            index_bytes as f64,
        ),
        (
            "url_filter_urls",
            "URLs in the URL filter",
            None,
            s.seen_urls as f64,
        ),
        (
            "url_filter",
            "Bytes of the URL filter's bit vectors",
            bytes,
            s.seen_filter_bytes as f64,
        ),
        (
            "url_filter_fill_ratio",
            "URLs in the URL filter over the URLs its layers were sized for",
            None,
            s.seen_fill_ratio,
        ),
        (
            "url_filter_false_positive_rate",
            "The URL filter's false-positive rate now, computed from its fill (a new URL \
             taken for one seen)",
            None,
            s.seen_fp_rate,
        ),
    ]
}

impl Collector for Stage {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let (s, index_bytes) = self.stage.read();
        counter_family(
            &mut encoder,
            "urls_checked",
            "URLs checked against the URL filter, by verdict",
            "verdict",
            &[
                ("new", s.urls_new),
                ("seen", s.urls_seen),
                ("invalid", s.urls_invalid),
            ],
        )?;
        counter_family(
            &mut encoder,
            "pages",
            "Pages decided, by verdict",
            "verdict",
            &[
                ("unique", s.pages_unique),
                ("exact_duplicate", s.pages_exact_duplicate),
                ("near_duplicate", s.pages_near_duplicate),
                ("no_text", s.pages_no_text),
            ],
        )?;
        counter(
            &mut encoder,
            "candidates_refused",
            "Candidates that the sketch or line confirmation refused",
            s.candidates_refused,
        )?;
        let gauges = gauges(&s, index_bytes);
        for (name, help, unit, v) in gauges {
            gauge(&mut encoder, name, help, unit, v)?;
        }
        counter(
            &mut encoder,
            "checkpoints",
            "Checkpoints taken since the process started",
            s.checkpoints,
        )?;
        let ms = self.checkpoint_ms.load(Ordering::Relaxed);
        if ms > 0 {
            let at = ms as f64 / 1000.0;
            gauge(
                &mut encoder,
                "checkpoint_last_timestamp",
                "When the last checkpoint committed, in seconds since the Unix epoch",
                Some(&Unit::Seconds),
                at,
            )?;
            let now = epoch_ms(SystemTime::now()) as f64 / 1000.0;
            gauge(
                &mut encoder,
                "checkpoint_age",
                "Seconds since the last checkpoint committed",
                Some(&Unit::Seconds),
                (now - at).max(0.0),
            )?;
        }
        Ok(())
    }
}
