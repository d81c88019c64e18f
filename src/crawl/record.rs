//! The checkpoint: the record a checkpoint writes last, the file that says it was
//! committed, and the readers of a crawl on disk (`stats`, `verify`, the filter's rebuild).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::CrawlError;
use super::frontier::{Frontier, FrontierCounts, FrontierError};
use crate::dedup::Dedup;
pub(crate) use crate::ledger::CRAWL_DB;
pub use crate::ledger::{COMMITTED_FILE, committed_seq};
use crate::store::SinkPosition;
use crate::store::warc::WarcPosition;

/// What a finished (or stopped) crawl did.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct CrawlSummary {
    /// Totals over every run on this state directory.
    pub totals: CheckpointRecord,
    /// The frontier at the end.
    pub frontier: FrontierCounts,
    /// Seconds this run took.
    pub seconds: f64,
    /// Responses received by this run alone (the totals count every run).
    pub fetched_this_run: u64,
    /// Whether the crawl stopped at `crawl.max_pages` with URLs still queued; the limit
    /// counts the pages of every run of the crawl, so running again fetches nothing more
    /// until it is raised.
    pub page_limit_reached: bool,
    /// Whether the crawl stopped early (Ctrl-C or the page limit).
    pub stopped_early: bool,
    /// Read from a running crawl (`stats` while it runs): its process, and how old the
    /// figures are (its last checkpoint's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<Running>,
    /// The status file of the run the figures are of, when there is one: its request,
    /// extraction and decision times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<super::status::CrawlStatus>,
}

/// A crawl running while `stats` read it.
#[derive(Debug, Clone, Serialize)]
pub struct Running {
    /// Its process.
    pub pid: u32,
    /// Seconds since its last checkpoint, whose figures these are.
    pub figures_age_seconds: f64,
}

/// The figures of a crawl on disk (`crawldedup stats`): the last checkpoint's totals and
/// the frontier as it was then, with the times of the run that took it (its status file).
///
/// - A crawl running there holds its database: the figures are read from its status file
///   (see [`CrawlStatus`](super::CrawlStatus)), which repeats its last checkpoint, and the summary says it
///   is running and how old they are. A running crawl without one yet (before its first
///   checkpoint) is refused with one line.
/// - A directory this process cannot write (a backup on a read-only file system) is read
///   in a copy of its crawl database, since opening a database writes.
///
/// Fails with one line when the directory holds no crawl.
pub fn stats(state_dir: &Path) -> Result<CrawlSummary, CrawlError> {
    let state_error = |problem: String| CrawlError::State {
        path: state_dir.to_path_buf(),
        problem,
    };
    let db_path = state_dir.join(CRAWL_DB);
    if !db_path.exists() {
        return Err(state_error("no crawl here".into()));
    }
    let status =
        super::status::CrawlStatus::read(state_dir).map_err(|e| state_error(e.to_string()))?;
    if crate::db::held(&db_path) {
        let Some(status) = status.filter(|s| !s.finished) else {
            return Err(state_error(
                "a crawl is running here and has not taken its first checkpoint yet; run \
                 stats again once it has"
                    .into(),
            ));
        };
        let frontier = status.frontier;
        return Ok(CrawlSummary {
            totals: status.checkpoint.clone(),
            frontier,
            seconds: run_seconds(&status),
            fetched_this_run: status.fetched_this_run,
            page_limit_reached: false,
            stopped_early: false,
            running: Some(Running {
                pid: status.pid,
                figures_age_seconds: status.age_seconds(),
            }),
            status: Some(status),
        });
    }
    let (totals, frontier) = if crate::db::writable(state_dir) {
        read_checkpoint(&db_path).map_err(state_error)?
    } else {
        let scratch = tempfile::Builder::new()
            .prefix("crawldedup-stats-")
            .tempdir()
            .map_err(|e| state_error(format!("read-only, and no room to copy it: {e}")))?;
        let copy = scratch.path().join(CRAWL_DB);
        crate::state::copy_tree(&db_path, &copy).map_err(|e| {
            state_error(format!(
                "read-only, and its crawl database could not be copied: {e}"
            ))
        })?;
        read_checkpoint(&copy).map_err(state_error)?
    };
    // The status file of the run that took this checkpoint (an older one belongs to
    // another run: its times would not be this checkpoint's).
    let status = status.filter(|s| s.checkpoint.seq == totals.seq);
    Ok(CrawlSummary {
        stopped_early: frontier.pending > 0,
        seconds: status.as_ref().map_or(0.0, run_seconds),
        fetched_this_run: status.as_ref().map_or(0, |s| s.fetched_this_run),
        totals,
        frontier,
        page_limit_reached: false,
        running: None,
        status,
    })
}

/// The seconds from a run's start to its status file.
fn run_seconds(status: &super::status::CrawlStatus) -> f64 {
    status
        .written_at_ms
        .saturating_sub(status.run_started_at_ms) as f64
        / 1000.0
}

/// The last checkpoint's record and the frontier as of it, from the crawl database at
/// `db_path`.
fn read_checkpoint(db_path: &Path) -> Result<(CheckpointRecord, FrontierCounts), String> {
    let db =
        crate::db::open(&sled::Config::new().path(db_path)).map_err(|e| crate::db::describe(&e))?;
    let meta = db.open_tree("meta").map_err(|e| crate::db::describe(&e))?;
    let Some(totals) = read_record(&meta)? else {
        return Err("no checkpoint yet".into());
    };
    let frontier = Frontier::open(
        db.open_tree("frontier")
            .map_err(|e| crate::db::describe(&e))?,
        totals.seq,
    )
    .map_err(|e| e.to_string())?;
    Ok((totals, frontier.counts()))
}

/// What [`check_parts`] found: the crawl database, the frontier (each a line saying it is
/// fine, or what is wrong), and the last checkpoint record if it could be read.
pub type CrawlParts = (
    Result<String, String>,
    Result<String, String>,
    Option<CheckpointRecord>,
    Option<Unsent>,
);

/// The key of what a cluster worker's checkpoint has to send to Redis once it committed
/// (see `crawl::cluster`), removed once it went.
pub(crate) const PUBLISH_KEY: &[u8] = b"cluster-publish";

/// What a cluster worker's last committed checkpoint wrote to send and may not have sent
/// (the worker was killed or cut off before it reached Redis).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsent {
    /// The checkpoint.
    pub seq: u64,
    /// The documents of the pages it stored (since the last checkpoint that sent in full),
    /// whose commit marks it carries.
    pub docs: Vec<u64>,
    /// Where the outputs stood at the last checkpoint that sent in full (`None` in what
    /// earlier builds wrote).
    pub before: Option<([u64; 3], WarcPosition)>,
}

/// What `meta` holds to send after checkpoint `committed` or an earlier one.
fn unsent(meta: &sled::Tree, committed: u64) -> Result<Option<Unsent>, String> {
    let Some(bytes) = meta.get(PUBLISH_KEY).map_err(|e| crate::db::describe(&e))? else {
        return Ok(None);
    };
    #[derive(Deserialize)]
    struct Head {
        seq: u64,
        #[serde(default)]
        docs: Vec<u64>,
        #[serde(default)]
        before: Option<([u64; 3], WarcPosition)>,
    }
    let head: Head = serde_json::from_slice(&bytes)
        .map_err(|e| format!("unreadable record of what to send to the cluster: {e}"))?;
    Ok((head.seq <= committed).then_some(Unsent {
        seq: head.seq,
        docs: head.docs,
        before: head.before,
    }))
}

/// Lines of each output given back by [`give_back`]: pages, duplicates, failures.
#[cfg(feature = "cluster")]
pub type GivenBack = [u64; 3];

/// Sets the last checkpoint of the crawl in `state_dir` back to the output positions
/// `before` (a cluster worker's checkpoint whose pages the cluster never took: see
/// `crawldedup repair --cluster`), its counts less the lines of `out`'s files past them,
/// and forgets what it had to send. Returns those lines. The outputs themselves are cut by
/// the caller (or the next open of the files), as after any checkpoint.
#[cfg(feature = "cluster")]
pub(crate) fn give_back(
    state_dir: &Path,
    out: &Path,
    before: ([u64; 3], WarcPosition),
) -> Result<GivenBack, String> {
    let db = crate::db::open(&sled::Config::new().path(state_dir.join(CRAWL_DB)))
        .map_err(|e| crate::db::describe(&e))?;
    let meta = db.open_tree("meta").map_err(|e| crate::db::describe(&e))?;
    let mut record = read_record(&meta)?.ok_or("no checkpoint")?;
    let mut lines = [0u64; 3];
    for (i, name) in crate::store::files::OUTPUT_NAMES.iter().enumerate() {
        let bytes = std::fs::read(out.join(name)).unwrap_or_default();
        let (from, to) = (before.0[i] as usize, record.output_bytes[i] as usize);
        let cut = bytes.get(from..to.min(bytes.len())).unwrap_or_default();
        lines[i] = cut.iter().filter(|&&b| b == b'\n').count() as u64;
    }
    record.stored = record.stored.saturating_sub(lines[0]);
    record.duplicates = record.duplicates.saturating_sub(lines[1]);
    record.failures = record.failures.saturating_sub(lines[2]);
    (record.output_bytes, record.warc) = before;
    let bytes = serde_json::to_vec(&record).map_err(|e| e.to_string())?;
    meta.insert(CHECKPOINT_KEY, bytes)
        .and_then(|_| meta.remove(PUBLISH_KEY))
        .map_err(|e| crate::db::describe(&e))?;
    db.flush().map_err(|e| crate::db::describe(&e))?;
    Ok(lines)
}

/// Forgets what the last checkpoint of the crawl in `state_dir` had to send (the cluster
/// has what matters of it).
#[cfg(feature = "cluster")]
pub(crate) fn forget_unsent(state_dir: &Path) -> Result<(), String> {
    let db = crate::db::open(&sled::Config::new().path(state_dir.join(CRAWL_DB)))
        .map_err(|e| crate::db::describe(&e))?;
    let meta = db.open_tree("meta").map_err(|e| crate::db::describe(&e))?;
    meta.remove(PUBLISH_KEY)
        .map_err(|e| crate::db::describe(&e))?;
    db.flush().map_err(|e| crate::db::describe(&e))?;
    Ok(())
}

/// The crawl's parts of a state directory, checked for `crawldedup verify`: the crawl
/// database (and its last checkpoint record) and the frontier. `None` when the directory
/// holds no crawl.
pub fn check_parts(state_dir: &Path) -> Option<CrawlParts> {
    let db_path = state_dir.join(CRAWL_DB);
    if !db_path.exists() {
        return None;
    }
    let skipped = || Err("not checked: the crawl database is unreadable".to_string());
    let db = match crate::db::open(&sled::Config::new().path(&db_path)) {
        Ok(db) => db,
        Err(e) => return Some((Err(crate::db::describe(&e)), skipped(), None, None)),
    };
    let meta = match db.open_tree("meta") {
        Ok(meta) => meta,
        Err(e) => return Some((Err(crate::db::describe(&e)), skipped(), None, None)),
    };
    let record = match read_record(&meta) {
        Ok(record) => record,
        Err(problem) => return Some((Err(problem), skipped(), None, None)),
    };
    let seq = record.as_ref().map_or(0, |r| r.seq);
    let unsent = match unsent(&meta, seq) {
        Ok(unsent) => unsent,
        Err(problem) => return Some((Err(problem), skipped(), record, None)),
    };
    let crawl_db = Ok(match &record {
        Some(r) => format!(
            "checkpoint {}: {} fetched, {} stored, {} duplicates, {} failures",
            r.seq, r.fetched, r.stored, r.duplicates, r.failures
        ),
        None => "no checkpoint yet".to_string(),
    });
    let frontier = db
        .open_tree("frontier")
        .map_err(|e| crate::db::describe(&e))
        .and_then(|tree| Frontier::open(tree, seq).map_err(|e| e.to_string()))
        .map(|f| {
            let c = f.counts();
            format!(
                "{} pending, {} in flight, {} done, {} failed",
                c.pending, c.in_flight, c.done, c.failed
            )
        });
    Some((crawl_db, frontier, record, unsent))
}

/// Calls `f` with every URL in the frontier of the crawl in `state_dir` as of its last
/// checkpoint; returns that checkpoint's number. `Err` when there is no crawl or its
/// database or frontier cannot be read.
pub(crate) fn each_frontier_url(
    state_dir: &Path,
    mut f: impl FnMut(&str) -> Result<(), String>,
) -> Result<u64, String> {
    let db = crate::db::open(&sled::Config::new().path(state_dir.join(CRAWL_DB)))
        .map_err(|e| crate::db::describe(&e))?;
    let meta = db.open_tree("meta").map_err(|e| crate::db::describe(&e))?;
    let seq = read_record(&meta)?.map_or(0, |r| r.seq);
    let tree = db
        .open_tree("frontier")
        .map_err(|e| crate::db::describe(&e))?;
    Frontier::open(tree, seq)
        .map_err(|e| e.to_string())?
        .each_url(|url| f(url).map_err(Walk::Caller))
        .map_err(|walk| match walk {
            Walk::Frontier(e) => e.to_string(),
            Walk::Caller(e) => e,
        })?;
    Ok(seq)
}

/// Why a walk over the frontier's URLs stopped: the frontier failed, or the caller did.
enum Walk {
    Frontier(FrontierError),
    Caller(String),
}

impl From<FrontierError> for Walk {
    fn from(e: FrontierError) -> Walk {
        Walk::Frontier(e)
    }
}

pub(super) use crate::ledger::CHECKPOINT_KEY;

/// The last checkpoint record in the crawl database's meta tree (`None` before the first).
pub(super) fn read_record(meta: &sled::Tree) -> Result<Option<CheckpointRecord>, String> {
    match meta
        .get(CHECKPOINT_KEY)
        .map_err(|e| crate::db::describe(&e))?
    {
        Some(v) => serde_json::from_slice(&v)
            .map(Some)
            .map_err(|e| format!("unreadable checkpoint record: {e}")),
        None => Ok(None),
    }
}

/// The record a checkpoint writes last.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct CheckpointRecord {
    /// Checkpoints taken so far.
    pub seq: u64,
    /// Documents in the index.
    pub index_documents: u64,
    /// Bytes of pages.jsonl, duplicates.jsonl and failures.jsonl.
    pub output_bytes: [u64; 3],
    /// Responses received.
    pub fetched: u64,
    /// Pages stored.
    pub stored: u64,
    /// Duplicates recorded.
    pub duplicates: u64,
    /// Failures and skips recorded.
    pub failures: u64,
    /// Failure lines written, by kind (`http_status`, `not_html`, `robots`, ...), over
    /// every run; a seed refused and queued again by a later run keeps its line here
    /// (`failures` no longer counts it).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub failure_kinds: std::collections::BTreeMap<String, u64>,
    /// Bytes of the response bodies received, over every run.
    #[serde(default)]
    pub fetched_bytes: u64,
    /// Bytes of the response bodies of the pages stored, over every run.
    #[serde(default)]
    pub stored_bytes: u64,
    /// When the last page was stored, in milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_stored_at_ms: Option<u64>,
    /// Where the WARC writer stood.
    #[serde(default)]
    pub warc: WarcPosition,
    /// The positions of the sinks given to the crawler, in the order they were given
    /// (the crawl's own files are `output_bytes` and `warc`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sinks: Vec<SinkPosition>,
    /// The time windows as of the checkpoint (absent when neither is on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub windows: Option<crate::dedup::WindowStats>,
    /// The id of the state directory the crawl belongs to (written in its ledger), 32 hex
    /// digits; absent in records written before ledgers existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
}

impl CheckpointRecord {
    /// What is wrong when this record belongs to another state directory than `id`.
    pub fn foreign_to(&self, id: crate::ledger::StateId) -> Option<String> {
        let own = format!("{id:032x}");
        match &self.state {
            Some(state) if *state != own => Some(format!(
                "the crawl database ({CRAWL_DB}) belongs to another state directory ({state}; \
                 this one is {own})"
            )),
            _ => None,
        }
    }
}

/// The consistent cut described in the module documentation, once the sinks have made
/// what they were given durable and recorded their positions in `totals`
/// (`Sinks::checkpoint`).
pub(super) fn checkpoint(
    db: &sled::Db,
    meta: &sled::Tree,
    dedup: &Dedup,
    frontier: &mut Frontier,
    totals: &mut CheckpointRecord,
) -> Result<(), CrawlError> {
    let state_error = |problem: String| CrawlError::State {
        path: dedup.state_dir().to_path_buf(),
        problem,
    };
    totals.index_documents = dedup.flush_index()?;
    totals.windows = dedup.has_windows().then(|| dedup.window_stats());
    totals.state = Some(format!("{:032x}", dedup.state_id()));
    totals.seq += 1;
    frontier.checkpoint(totals.seq)?;
    // Outputs synced, index flushed, frontier's log written; the record is not.
    crate::faults::point("checkpoint-before-record");
    let record = serde_json::to_vec(totals).map_err(|e| state_error(e.to_string()))?;
    meta.insert(CHECKPOINT_KEY, record)
        .map_err(|e| state_error(crate::db::describe(&e)))?;
    db.flush()
        .map_err(|e| state_error(crate::db::describe(&e)))?;
    // Committed: say so outside the database too, so that a database that loses it is found.
    crate::urls::seen::write_atomically(
        &dedup.state_dir().join(COMMITTED_FILE),
        format!("{}\n", totals.seq).as_bytes(),
    )
    .map_err(|e| state_error(format!("{COMMITTED_FILE}: {e}")))?;
    // The URL filter may lag the frontier (it is saved after the commit point); the
    // frontier itself never queues a URL twice.
    dedup.save_urls()?;
    dedup.save_templates()?;
    dedup.raise_ledger(totals.index_documents, Some(totals.seq))?;
    Ok(())
}
