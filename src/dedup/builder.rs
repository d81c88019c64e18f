//! Opening a stage from the settings that matter to it alone.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::open::Opening;
use super::{Dedup, DedupError, StateKind};
use crate::clock::Clock;
use crate::config::{Config, Window};

/// Builds a [`Dedup`] from the settings that matter to a stage on its own, starting from
/// the defaults of [`Config`]; [`Dedup::open`] takes a whole `Config` instead.
///
/// ```
/// use crawldedup::Dedup;
///
/// let state = tempfile::tempdir()?;
/// let dedup = Dedup::builder()
///     .expected_urls(5_000_000)      // sizes the URL filter (n)
///     .false_positive_rate(0.001)    // and its error bound (p)
///     .max_distance(3)               // candidates: simhashes within 3 bits (and sketch bands)
///     .open(state.path())?;
/// assert_eq!(dedup.stats().indexed_documents, 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct DedupBuilder {
    pub(super) config: Config,
    pub(super) clock: Option<Arc<dyn Clock>>,
    /// `None`: the default (on).
    pub(super) url_journal: Option<bool>,
    /// `None`: [`StateKind::Library`].
    pub(super) kind: Option<StateKind>,
    pub(super) share_state: bool,
}

impl DedupBuilder {
    /// Starts from the settings of `config` (its `[url_filter]` and `[dedup]` sections);
    /// by default, those of [`Config::default`].
    pub fn config(mut self, config: &Config) -> DedupBuilder {
        self.config = config.clone();
        self
    }

    /// Expected number of distinct URLs (n): sizes the URL filter and chooses the index's
    /// layout (`url_filter.expected_urls`; default 10,000,000).
    pub fn expected_urls(mut self, n: u64) -> DedupBuilder {
        self.config.url_filter.expected_urls = n;
        self
    }

    /// Whether the index writes snapshots of itself in the background after checkpoints
    /// (`dedup.background_snapshots`, on by default), so that an open after a crash maps
    /// the last one instead of rebuilding its tables.
    pub fn background_snapshots(mut self, on: bool) -> DedupBuilder {
        self.config.dedup.background_snapshots = on;
        self
    }

    /// Pages the index makes room for when it opens (`dedup.expected_pages`; default 0,
    /// growing as pages come): its tables then never grow on the way there, and take that
    /// memory from the start.
    pub fn expected_pages(mut self, n: u64) -> DedupBuilder {
        self.config.dedup.expected_pages = n;
        self
    }

    /// Bound on the URL filter's false-positive rate (p), strictly between 0 and 1
    /// (`url_filter.false_positive_rate`; default 0.01).
    pub fn false_positive_rate(mut self, p: f64) -> DedupBuilder {
        self.config.url_filter.false_positive_rate = p;
        self
    }

    /// Confirm the filter's "seen" answers against exact hashes on disk (no false
    /// positives, at one disk lookup per positive; `url_filter.confirm_on_disk`; default
    /// off).
    pub fn confirm_on_disk(mut self, confirm: bool) -> DedupBuilder {
        self.config.url_filter.confirm_on_disk = confirm;
        self
    }

    /// Query and path parameters that canonicalization drops (exact names or `prefix*`),
    /// replacing the default list (`url_filter.strip_params`; default: tracking and session
    /// parameters such as `utm_*`, `fbclid` and `sessionid`).
    pub fn strip_params<I, S>(mut self, params: I) -> DedupBuilder
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.config.url_filter.strip_params = params.into_iter().map(Into::into).collect();
        self
    }

    /// Simhashes within this many bits are near-duplicate candidates (k), 0 to 8; every
    /// candidate is still confirmed on its sketch (`dedup.max_distance`; default 3).
    pub fn max_distance(mut self, k: u32) -> DedupBuilder {
        self.config.dedup.max_distance = k;
        self
    }

    /// Main texts shorter than this many characters are confirmed on their estimated
    /// resemblance alone, never on containment (`dedup.short_text_chars`; default 500; a
    /// character of a script without spaces counts as the characters its share of a word
    /// takes, [`crate::Fingerprint::chars`]).
    pub fn short_text_chars(mut self, chars: usize) -> DedupBuilder {
        self.config.dedup.short_text_chars = chars;
        self
    }

    /// Compare each page with the pages stored in this last window only: older
    /// fingerprints stop matching and are swept away (`dedup.retention`; default: keep
    /// every page).
    pub fn retention(mut self, window: Duration) -> DedupBuilder {
        self.config.dedup.retention = Some(Window(window));
        self
    }

    /// A URL seen this long ago is new again (`url_filter.recrawl_after`; default: never);
    /// `expected_urls` then counts the URLs of one such interval.
    pub fn recrawl_after(mut self, interval: Duration) -> DedupBuilder {
        self.config.url_filter.recrawl_after = Some(Window(interval));
        self
    }

    /// The clock that windows are measured on (the system clock by default): a test or a
    /// replay sets the time with a [`ManualClock`](crate::clock::ManualClock).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> DedupBuilder {
        self.clock = Some(clock);
        self
    }

    /// Whether URLs answered new are journaled (default on), so that
    /// [`Dedup::sync_urls`] can make a "new" answer durable before the caller passes it on.
    /// Off, URLs are durable at checkpoints only: after a kill -9, those answered since the
    /// last checkpoint are new again (what `crawldedup serve --durability checkpoint`
    /// chooses, for speed).
    pub fn url_journal(mut self, on: bool) -> DedupBuilder {
        self.url_journal = Some(on);
        self
    }

    /// The program that keeps the state directory, as its ledger records it (default
    /// [`StateKind::Library`]; the sidecar and `crawldedup dedup` say theirs). A directory
    /// another kind of program keeps is refused unless [`DedupBuilder::share_state`].
    /// [`StateKind::Crawl`] is the crawler's own and is refused here.
    pub fn kind(mut self, kind: StateKind) -> DedupBuilder {
        self.kind = Some(kind);
        self
    }

    /// Opens a state directory that another kind of program keeps (a crawl's, a
    /// sidecar's) instead of refusing it; both keep every document. A crawl's documents
    /// after its last checkpoint are its own work since, which it decides again when it
    /// resumes: they are dropped, as the crawl itself would drop them. A crawl running
    /// there is refused all the same. Default off.
    pub fn share_state(mut self, share: bool) -> DedupBuilder {
        self.share_state = share;
        self
    }

    /// Checks the settings and opens the stage on `state_dir` (see [`Dedup::open`]).
    pub fn open(self, state_dir: &Path) -> Result<Dedup, DedupError> {
        self.config.validate("Dedup::builder")?;
        let kind = self.kind.unwrap_or(StateKind::Library);
        if kind == StateKind::Crawl {
            return Err(DedupError::OtherKind(
                "Dedup::builder: StateKind::Crawl is the crawler's own (crawl::Crawler opens \
                 its state directory)"
                    .into(),
            ));
        }
        let opening = Opening::stage(kind, self.share_state, self.url_journal != Some(false));
        let dedup = Dedup::open_with(state_dir, &self.config, opening)?;
        Ok(match self.clock {
            Some(clock) => dedup.with_clock(clock),
            None => dedup,
        })
    }
}
