//! What a running crawl or sidecar shows of itself: Prometheus metrics, the figures of its
//! status page, and the status file a checkpoint leaves for `crawldedup stats`.
//!
//! [`Metrics`] holds a [`prometheus_client`] registry. Every name starts with
//! `crawldedup_`; counters end in `_total`, times are in seconds and sizes in bytes; no
//! label names a URL or a host (the busiest hosts are on the status page, [`board`]). The
//! page stage's own counters (URLs and pages by verdict, the index, the URL filter) are
//! read from [`Dedup::stats`] at each scrape, so they are the figures `stats` and
//! `/v1/stats` give; what only the crawl knows (fetches, failures, bytes, times, the
//! frontier) is counted as it happens. [`Metrics::render`] writes the Prometheus text
//! format (version 0.0.4) or OpenMetrics 1.0, both by the crate's encoders. The list of
//! every metric, with its meaning, is in docs/operations.md.

pub mod board;
mod buckets;
#[cfg(feature = "crawler")]
pub(crate) mod server;
mod stage;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use prometheus_client::encoding::{EncodeMetric, MetricEncoder};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};

use crate::dedup::Dedup;

pub use board::Board;
pub use buckets::{Buckets, Quantiles};
use stage::{Source, Stage, StageSource};

/// The content type of the Prometheus text format.
pub const PROMETHEUS_TEXT: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// The content type of OpenMetrics text.
pub const OPENMETRICS_TEXT: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Upper bounds of the fetch-time buckets, in seconds.
const FETCH_BUCKETS: [f64; 12] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// Upper bounds of the extraction-time buckets, in seconds.
const EXTRACT_BUCKETS: [f64; 12] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
];

/// Upper bounds of the decision-time buckets, in seconds (the decision's budget is a few
/// microseconds).
const DECISION_BUCKETS: [f64; 12] = [
    0.000_002, 0.000_005, 0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001,
    0.002_5, 0.01, 0.1,
];

/// Upper bounds of the near-duplicate distance buckets, in bits of 64.
pub const DISTANCE_BUCKETS: [f64; 14] = [
    0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 16.0, 24.0, 32.0, 64.0,
];

/// Upper bounds of the near-duplicate resemblance buckets.
const SIMILARITY_BUCKETS: [f64; 10] = [0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, 1.0];

/// A label set of one label, such as `outcome="ok"`.
type Label = [(&'static str, String); 1];

fn label(key: &'static str, value: &str) -> Label {
    [(key, value.to_string())]
}

/// What the crawl loop counts as it goes, beside what the page stage counts itself.
#[derive(Debug)]
pub struct CrawlCounts {
    /// Fetches by outcome: `ok` (2xx), `http_error` (another status, final), `retried`
    /// (5xx or 429, to be tried again), `error` (no response: refused, timed out, too big).
    pub fetches: Family<Label, Counter>,
    /// Failures and skips recorded, by kind (`http_status`, `not_html`, `robots`, ...: the
    /// `kind` of failures.jsonl).
    pub failures: Family<Label, Counter>,
    /// Bytes of the bodies received.
    pub fetched_bytes: Counter,
    /// Bytes of the bodies of the pages stored.
    pub stored_bytes: Counter,
    /// URLs waiting in the frontier.
    pub frontier_urls: Gauge,
    /// Hosts with URLs waiting.
    pub frontier_hosts: Gauge,
    /// Requests in flight.
    pub in_flight: Gauge,
    /// The time of a request, its redirects included.
    pub fetch_seconds: Buckets,
    /// The time of a page's extraction and fingerprint.
    pub extract_seconds: Buckets,
    /// A cluster worker's figures (`None` on one machine).
    pub cluster: Option<ClusterCounts>,
}

/// What a worker of a crawl on several machines shows of the cluster.
#[derive(Debug, Default)]
pub struct ClusterCounts {
    /// Workers in the ring.
    pub members: Gauge,
    /// Entries in this worker's inbox not yet made durable.
    pub inbox: Gauge,
    /// Pending URLs this worker handed to another (their host moved), over every run.
    pub moved: Counter,
}

/// A crawl's or a sidecar's metrics and status figures. See the [module documentation](self).
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    /// The crawl's own counts (`None` for a sidecar).
    pub crawl: Option<Arc<CrawlCounts>>,
    /// The time of a page's decision (the index's look-up and insert); in a sidecar, of
    /// the whole page check.
    pub decision_seconds: Arc<Buckets>,
    /// Near-duplicates' simhash distance.
    pub distance: Arc<Buckets>,
    /// Near-duplicates' resemblance.
    pub similarity: Arc<Buckets>,
    /// When the last checkpoint committed (milliseconds since the epoch; 0: none yet).
    checkpoint_ms: Arc<AtomicU64>,
    /// The status page's figures.
    pub board: Arc<std::sync::Mutex<Board>>,
    /// When these metrics began (this run).
    pub started: SystemTime,
    stage: Arc<StageSource>,
}

/// Registers what only a crawl counts.
fn register_crawl(registry: &mut Registry, c: &Arc<CrawlCounts>) {
    registry.register(
        "fetches",
        "Requests finished, by outcome: ok (2xx), http_error (another final status), \
             retried (5xx or 429, tried again later), error (no response)",
        c.fetches.clone(),
    );
    registry.register(
        "failures",
        "URLs recorded in failures.jsonl, by kind",
        c.failures.clone(),
    );
    registry.register_with_unit(
        "fetched",
        "Bytes of the response bodies received",
        Unit::Bytes,
        c.fetched_bytes.clone(),
    );
    registry.register_with_unit(
        "stored",
        "Bytes of the response bodies of the pages stored",
        Unit::Bytes,
        c.stored_bytes.clone(),
    );
    registry.register(
        "frontier_urls",
        "URLs waiting in the frontier",
        c.frontier_urls.clone(),
    );
    registry.register(
        "frontier_hosts",
        "Hosts with URLs waiting in the frontier",
        c.frontier_hosts.clone(),
    );
    registry.register(
        "requests_in_flight",
        "Requests being fetched now",
        c.in_flight.clone(),
    );
    registry.register_with_unit(
        "fetch_duration",
        "Time of a request, its redirects included, to the end of its body",
        Unit::Seconds,
        SharedCounts(c.clone(), |c| &c.fetch_seconds),
    );
    registry.register_with_unit(
        "extraction_duration",
        "Time of a page's extraction and fingerprint",
        Unit::Seconds,
        SharedCounts(c.clone(), |c| &c.extract_seconds),
    );
    if let Some(k) = &c.cluster {
        registry.register(
            "cluster_ring_members",
            "Workers in the ring of the crawl on several machines",
            k.members.clone(),
        );
        registry.register(
            "cluster_inbox_entries",
            "Entries in this worker's inbox not yet made durable (waiting or read)",
            k.inbox.clone(),
        );
        registry.register(
            "cluster_moved_urls",
            "Pending URLs this worker handed to another because their host moved, \
                 over every run",
            k.moved.clone(),
        );
    }
}

/// Milliseconds since the epoch of `t`.
pub(crate) fn epoch_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Metrics {
    /// The metrics of a sidecar serving `dedup`.
    pub fn for_stage(dedup: Arc<Dedup>) -> Metrics {
        Metrics::new(dedup, None)
    }

    /// The metrics of a crawl whose page stage is `dedup` (a worker of a cluster when
    /// `cluster`), and the crawl's counts in them.
    pub fn for_crawl(dedup: Arc<Dedup>, cluster: bool) -> (Arc<Metrics>, Arc<CrawlCounts>) {
        let counts = CrawlCounts {
            fetches: Family::default(),
            failures: Family::default(),
            fetched_bytes: Counter::default(),
            stored_bytes: Counter::default(),
            frontier_urls: Gauge::default(),
            frontier_hosts: Gauge::default(),
            in_flight: Gauge::default(),
            fetch_seconds: Buckets::new(&FETCH_BUCKETS),
            extract_seconds: Buckets::new(&EXTRACT_BUCKETS),
            cluster: cluster.then(ClusterCounts::default),
        };
        let counts = Arc::new(counts);
        let metrics = Metrics::new(dedup, Some(counts.clone()));
        (Arc::new(metrics), counts)
    }

    fn new(dedup: Arc<Dedup>, crawl: Option<Arc<CrawlCounts>>) -> Metrics {
        let mut registry = Registry::with_prefix("crawldedup");
        let decision_seconds = Arc::new(Buckets::new(&DECISION_BUCKETS));
        let distance = Arc::new(Buckets::new(&DISTANCE_BUCKETS));
        let similarity = Arc::new(Buckets::new(&SIMILARITY_BUCKETS));
        let checkpoint_ms = Arc::new(AtomicU64::new(0));
        // A crawl times the decision alone; the sidecar the whole check of a page, its
        // extraction included.
        let (name, help) = if crawl.is_some() {
            (
                "decision_duration",
                "Time of a page's decision: the index's look-up, confirmation and insert",
            )
        } else {
            (
                "page_check_duration",
                "Time of a page check (/v1/pages/check): extraction, when the page is HTML, \
                 and decision",
            )
        };
        registry.register_with_unit(name, help, Unit::Seconds, Shared(decision_seconds.clone()));
        registry.register(
            "near_duplicate_distance_bits",
            "Simhash distance (bits of 64) of each page called a near-duplicate to its original",
            Shared(distance.clone()),
        );
        registry.register(
            "near_duplicate_resemblance",
            "Estimated resemblance (Jaccard similarity of word 3-shingles) of each \
             near-duplicate to its original",
            Shared(similarity.clone()),
        );
        if let Some(c) = &crawl {
            register_crawl(&mut registry, c);
        }
        let stage = Arc::new(StageSource(std::sync::RwLock::new(Source::Live(dedup))));
        registry.register_collector(Box::new(Stage {
            stage: stage.clone(),
            checkpoint_ms: checkpoint_ms.clone(),
        }));
        Metrics {
            registry,
            crawl,
            decision_seconds,
            distance,
            similarity,
            checkpoint_ms,
            board: Arc::new(std::sync::Mutex::new(Board::default())),
            started: SystemTime::now(),
            stage,
        }
    }

    /// Counts a page's verdict, decided in `took`: its decision time, a near-duplicate's
    /// distance and resemblance, and its host's row and the last duplicates on the board.
    /// (The verdicts themselves are the page stage's counters.)
    /// `host` is the page's host (the caller has its URL parsed already).
    pub fn decided(
        &self,
        host: &str,
        url: &str,
        verdict: &crate::dedup::PageVerdict,
        took: Duration,
    ) {
        self.decision_seconds.observe_duration(took);
        let at_ms = epoch_ms(SystemTime::now());
        let mut board = self.board.lock().unwrap_or_else(|e| e.into_inner());
        match verdict.duplicate() {
            Some(d) => {
                if let Some(bits) = d.distance {
                    self.distance.observe(f64::from(bits));
                    self.similarity.observe(d.similarity.resemblance);
                }
                board.duplicate(
                    host,
                    board::RecentDuplicate {
                        url: url.to_string(),
                        of: d.of.name.clone(),
                        distance: d.distance.unwrap_or(0),
                        resemblance: d.similarity.resemblance,
                        at_ms,
                    },
                );
            }
            None if matches!(verdict, crate::dedup::PageVerdict::Unique { .. }) => {
                board.stored(host, at_ms)
            }
            None => {}
        }
    }

    /// Counts a URL of `host` recorded as a failure of `kind`.
    pub fn failed(&self, host: &str, kind: &str) {
        if let Some(c) = &self.crawl {
            c.failure(kind);
        }
        self.board
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .failure(host, kind);
    }

    /// Keeps the page stage's last figures and lets go of the stage, so that its owner can
    /// close it; the metrics go on serving those figures.
    pub fn release_stage(&self) {
        let mut source = self.stage.0.write().unwrap_or_else(|e| e.into_inner());
        if let Source::Live(dedup) = &*source {
            let last = Source::Final(Box::new(dedup.stats()), dedup.index_disk_bytes());
            *source = last;
        }
    }

    /// Notes that a checkpoint committed now.
    pub fn checkpointed(&self) {
        self.checkpoint_ms
            .store(epoch_ms(SystemTime::now()), Ordering::Relaxed);
    }

    /// When the last checkpoint committed (`None`: none since these metrics began).
    pub fn last_checkpoint(&self) -> Option<SystemTime> {
        let ms = self.checkpoint_ms.load(Ordering::Relaxed);
        (ms > 0).then(|| UNIX_EPOCH + Duration::from_millis(ms))
    }

    /// Every metric in the Prometheus text format, or in OpenMetrics.
    pub fn render(&self, openmetrics: bool) -> String {
        let mut out = String::new();
        let written = if openmetrics {
            prometheus_client::encoding::text::encode(&mut out, &self.registry)
        } else {
            prometheus_client::encoding::prometheus_text::encode(&mut out, &self.registry)
        };
        // Writing into a String fails only on a metric's own encoding error, which these
        // types do not have.
        if let Err(e) = written {
            tracing::error!("metrics: encoding failed: {e}");
        }
        out
    }

    /// The status page's figures, as JSON: see docs/operations.md.
    pub fn status_json(&self) -> serde_json::Value {
        let (stats, index_bytes) = self.stage.read();
        let now = SystemTime::now();
        let board = self.board.lock().unwrap_or_else(|e| e.into_inner());
        let checkpoint_ms = self.checkpoint_ms.load(Ordering::Relaxed);
        let crawl = self.crawl.as_ref().map(|c| {
            serde_json::json!({
                "frontier_urls": c.frontier_urls.get(),
                "frontier_hosts": c.frontier_hosts.get(),
                "requests_in_flight": c.in_flight.get(),
                "fetched_bytes": c.fetched_bytes.get(),
                "stored_bytes": c.stored_bytes.get(),
                "fetch_seconds": c.fetch_seconds.quantiles(),
                "extraction_seconds": c.extract_seconds.quantiles(),
            })
        });
        serde_json::json!({
            "now_ms": epoch_ms(now),
            "finished": board.finished,
            "started_ms": epoch_ms(self.started),
            "totals": board.totals,
            "series": board.series(),
            "pages": {
                "unique": stats.pages_unique,
                "exact_duplicate": stats.pages_exact_duplicate,
                "near_duplicate": stats.pages_near_duplicate,
                "no_text": stats.pages_no_text,
            },
            "urls": {
                "new": stats.urls_new,
                "seen": stats.urls_seen,
                "invalid": stats.urls_invalid,
            },
            "distance": self.distance.buckets_json(),
            "resemblance": self.similarity.buckets_json(),
            "decision_seconds": self.decision_seconds.quantiles(),
            "hosts": board.busiest(20),
            "recent_duplicates": board.recent(),
            "failures": board.failures(),
            "last_stored_ms": board.last_stored_ms,
            "checkpoint": {
                "seq": board.checkpoint_seq,
                "at_ms": (checkpoint_ms > 0).then_some(checkpoint_ms),
            },
            "index": {
                "documents": stats.indexed_documents,
                "bytes": index_bytes,
            },
            "url_filter": {
                "urls": stats.seen_urls,
                "fill_ratio": stats.seen_fill_ratio,
                "false_positive_rate": stats.seen_fp_rate,
            },
            "crawl": crawl,
        })
    }

    /// Whether a request's `Accept` header asks for OpenMetrics (as Prometheus does when
    /// it prefers it).
    pub fn wants_openmetrics(accept: Option<&str>) -> bool {
        accept.is_some_and(|a| a.contains("application/openmetrics-text"))
    }
}

/// The answer to a scrape: every metric in the format the request's `Accept` header asks
/// for (OpenMetrics, or else the Prometheus text format), with its content type.
#[cfg(any(feature = "crawler", feature = "sidecar"))]
pub(crate) fn respond(
    metrics: &Metrics,
    headers: &axum::http::HeaderMap,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let accept = headers
        .get(axum::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok());
    let openmetrics = Metrics::wants_openmetrics(accept);
    let content_type = if openmetrics {
        OPENMETRICS_TEXT
    } else {
        PROMETHEUS_TEXT
    };
    (
        [(axum::http::header::CONTENT_TYPE, content_type)],
        metrics.render(openmetrics),
    )
        .into_response()
}

/// An `Arc`'d histogram registered as a metric.
#[derive(Debug)]
struct Shared(Arc<Buckets>);

impl EncodeMetric for Shared {
    fn encode(&self, encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        self.0.encode(encoder)
    }
    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

/// A histogram of the crawl's counts registered as a metric.
struct SharedCounts(Arc<CrawlCounts>, fn(&CrawlCounts) -> &Buckets);

impl std::fmt::Debug for SharedCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (self.1)(&self.0).fmt(f)
    }
}

impl EncodeMetric for SharedCounts {
    fn encode(&self, encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        (self.1)(&self.0).encode(encoder)
    }
    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

impl CrawlCounts {
    /// Counts a fetch's outcome.
    pub fn fetch(&self, outcome: &str) {
        self.fetches.get_or_create(&label("outcome", outcome)).inc();
    }

    /// Counts a failure of `kind`.
    pub fn failure(&self, kind: &str) {
        self.failures.get_or_create(&label("kind", kind)).inc();
    }
}

#[cfg(test)]
mod tests;
