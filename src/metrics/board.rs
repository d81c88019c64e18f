//! The status page's figures: throughput over time, the busiest hosts, the last duplicates
//! and failures by kind. Bounded whatever the crawl's size: [`MAX_HOSTS`] hosts,
//! [`RECENT_DUPLICATES`] duplicates and [`MAX_SAMPLES`] samples of the totals.

use std::collections::{BTreeMap, HashMap, VecDeque};

use serde::Serialize;

/// Hosts the board keeps figures of; past it, the half with the fewest pages is dropped
/// (a host dropped and met again starts from nothing).
pub const MAX_HOSTS: usize = 10_000;

/// Duplicates the board remembers, the latest first.
pub const RECENT_DUPLICATES: usize = 50;

/// Samples of the totals the board keeps; past it, every other one is dropped and samples
/// are taken half as often, so the series always covers the whole run.
pub const MAX_SAMPLES: usize = 720;

/// The totals at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Sample {
    /// Milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// Responses received, by every run.
    pub fetched: u64,
    /// Pages stored.
    pub stored: u64,
    /// Duplicates recorded.
    pub duplicates: u64,
    /// Failures recorded.
    pub failures: u64,
}

/// One host's figures on the board (since the process started).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HostRow {
    /// The host.
    pub host: String,
    /// Pages decided (stored or duplicates).
    pub pages: u64,
    /// Of those, stored.
    pub stored: u64,
    /// Of those, duplicates.
    pub duplicates: u64,
    /// Failures recorded.
    pub failures: u64,
}

/// A duplicate as the board shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecentDuplicate {
    /// Its URL.
    pub url: String,
    /// The page it repeats.
    pub of: String,
    /// Simhash distance (0 for an exact duplicate).
    pub distance: u32,
    /// Estimated resemblance.
    pub resemblance: f64,
    /// When it was decided (milliseconds since the Unix epoch).
    pub at_ms: u64,
}

/// See the [module documentation](self).
#[derive(Debug, Default)]
pub struct Board {
    samples: Vec<Sample>,
    /// Take a sample when at least this many milliseconds passed since the last (doubled
    /// each time the series is thinned).
    sample_every_ms: u64,
    hosts: HashMap<String, HostRow>,
    recent: VecDeque<RecentDuplicate>,
    failures: BTreeMap<String, u64>,
    /// The totals now.
    pub totals: Sample,
    /// When the last page was stored (milliseconds since the Unix epoch).
    pub last_stored_ms: Option<u64>,
    /// The number of the last checkpoint committed.
    pub checkpoint_seq: u64,
    /// Whether the crawl is over (its listener lingers with the final figures).
    pub finished: bool,
}

/// How often a sample is taken at first.
const FIRST_SAMPLE_EVERY_MS: u64 = 5_000;

impl Board {
    fn host(&mut self, host: &str) -> &mut HostRow {
        if !self.hosts.contains_key(host) && self.hosts.len() >= MAX_HOSTS {
            let mut pages: Vec<u64> = self.hosts.values().map(|h| h.pages).collect();
            let mid = pages.len() / 2;
            let (_, &mut median, _) = pages.select_nth_unstable(mid);
            // Ties at the median go too, so at least half goes.
            self.hosts.retain(|_, h| h.pages > median);
        }
        self.hosts
            .entry(host.to_string())
            .or_insert_with(|| HostRow {
                host: host.to_string(),
                ..HostRow::default()
            })
    }

    /// A page of `host` stored at `at_ms`.
    pub fn stored(&mut self, host: &str, at_ms: u64) {
        let row = self.host(host);
        row.pages += 1;
        row.stored += 1;
        self.last_stored_ms = Some(at_ms);
    }

    /// A duplicate of `host`.
    pub fn duplicate(&mut self, host: &str, duplicate: RecentDuplicate) {
        let row = self.host(host);
        row.pages += 1;
        row.duplicates += 1;
        if self.recent.len() == RECENT_DUPLICATES {
            self.recent.pop_back();
        }
        self.recent.push_front(duplicate);
    }

    /// A failure of `kind` on `host`.
    pub fn failure(&mut self, host: &str, kind: &str) {
        self.host(host).failures += 1;
        *self.failures.entry(kind.to_string()).or_default() += 1;
    }

    /// Sets the totals (the crawl's, at `at_ms`) and takes a sample when one is due.
    pub fn set_totals(&mut self, totals: Sample) {
        self.totals = totals;
        if self.sample_every_ms == 0 {
            self.sample_every_ms = FIRST_SAMPLE_EVERY_MS;
        }
        let due = self
            .samples
            .last()
            .is_none_or(|last| totals.at_ms >= last.at_ms + self.sample_every_ms);
        if due {
            if self.samples.len() >= MAX_SAMPLES {
                let mut i = 0;
                self.samples.retain(|_| {
                    i += 1;
                    i % 2 == 1
                });
                self.sample_every_ms *= 2;
            }
            self.samples.push(totals);
        }
    }

    /// The samples, oldest first, with the totals now as the last.
    pub fn series(&self) -> Vec<Sample> {
        let mut series = self.samples.clone();
        if series.last() != Some(&self.totals) && self.totals.at_ms > 0 {
            series.push(self.totals);
        }
        series
    }

    /// The `n` hosts with the most pages (then failures), most first.
    pub fn busiest(&self, n: usize) -> Vec<HostRow> {
        let order = |a: &&HostRow, b: &&HostRow| {
            (b.pages + b.failures)
                .cmp(&(a.pages + a.failures))
                .then_with(|| a.host.cmp(&b.host))
        };
        let mut rows: Vec<&HostRow> = self.hosts.values().collect();
        // The first `n` found in linear time, then only they are sorted: the page asks
        // every 2 seconds, of up to MAX_HOSTS hosts.
        if n > 0 && rows.len() > n {
            rows.select_nth_unstable_by(n - 1, order);
            rows.truncate(n);
        }
        rows.sort_by(order);
        rows.into_iter().take(n).cloned().collect()
    }

    /// The last duplicates, latest first.
    pub fn recent(&self) -> Vec<RecentDuplicate> {
        self.recent.iter().cloned().collect()
    }

    /// Failures by kind since the process started.
    pub fn failures(&self) -> &BTreeMap<String, u64> {
        &self.failures
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hosts_kept_are_bounded_and_the_busiest_stay() {
        let mut board = Board::default();
        for _ in 0..50 {
            board.stored("busy.example", 1);
        }
        for i in 0..(3 * MAX_HOSTS) {
            board.stored(&format!("h{i}.example"), 1);
        }
        assert!(board.hosts.len() <= MAX_HOSTS);
        let top = board.busiest(1);
        assert_eq!(top[0].host, "busy.example");
        assert_eq!(top[0].stored, 50);
        for _ in 0..20 {
            board.stored("second.example", 1);
        }
        let top3 = board.busiest(3);
        assert_eq!(top3[0].host, "busy.example");
        assert_eq!(top3[1].host, "second.example");
        assert!(top3[2].pages <= top3[1].pages && top3.len() == 3);
    }

    #[test]
    fn the_series_is_bounded_and_covers_the_whole_run() {
        let mut board = Board::default();
        let step = 1_000;
        for i in 0..(20 * MAX_SAMPLES as u64) {
            board.set_totals(Sample {
                at_ms: 1_000_000 + i * step,
                fetched: i,
                ..Sample::default()
            });
        }
        let series = board.series();
        assert!(series.len() <= MAX_SAMPLES + 1, "{}", series.len());
        assert_eq!(series[0].fetched, 0, "the first sample stays");
        assert_eq!(series.last().unwrap().fetched, 20 * MAX_SAMPLES as u64 - 1);
    }

    #[test]
    fn recent_duplicates_are_the_latest_first_and_bounded() {
        let mut board = Board::default();
        for i in 0..(RECENT_DUPLICATES + 7) {
            board.duplicate(
                "a.example",
                RecentDuplicate {
                    url: format!("https://a.example/{i}"),
                    of: "https://a.example/".into(),
                    distance: 1,
                    resemblance: 0.9,
                    at_ms: i as u64,
                },
            );
        }
        let recent = board.recent();
        assert_eq!(recent.len(), RECENT_DUPLICATES);
        assert_eq!(recent[0].at_ms, (RECENT_DUPLICATES + 6) as u64);
        board.failure("a.example", "http_status");
        board.failure("b.example", "http_status");
        assert_eq!(board.failures()["http_status"], 2);
        assert_eq!(board.busiest(1)[0].host, "a.example");
    }
}
