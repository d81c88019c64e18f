//! Opening a crawl: the state directory rolled back to its last checkpoint, and the seeds
//! queued.

use std::path::PathBuf;

use super::cluster::Worker;
use super::error::CrawlError;
use super::frontier::Frontier;
use super::options::CrawlOptions;
use super::outcome::enqueue;
use super::record::{CRAWL_DB, CheckpointRecord, committed_seq, read_record};
use super::scope::{Scope, priority};
use crate::config::Config;
use crate::dedup::{Dedup, DedupError, StateKind};

/// The tree of the crawl database where the WARC writer keeps the payload digest of each
/// response it archived, by URL.
pub(super) const WARC_PAYLOADS: &str = "warc-payloads";

/// A crawl's state, opened from its directory and rolled back to its last checkpoint.
pub(super) struct Opened {
    pub(super) db: sled::Db,
    pub(super) meta: sled::Tree,
    /// The last checkpoint's record; none for a new crawl.
    pub(super) record: Option<CheckpointRecord>,
    pub(super) dedup: Dedup,
    pub(super) frontier: Frontier,
}

/// Opens the state directory (creating it for a new crawl): the crawl database and its
/// last checkpoint's record, checked against the number committed beside it; the page
/// stage, rolled back to the checkpoint's index; the frontier.
pub(super) fn open_state(config: &Config, options: &CrawlOptions) -> Result<Opened, CrawlError> {
    let crawl = &config.crawl;
    let state_dir = crawl.state_dir.clone();
    crate::dedup::check_memory(&state_dir, config).map_err(DedupError::from)?;
    crate::db::create_state_dir(&state_dir).map_err(|e| CrawlError::State {
        path: state_dir.clone(),
        problem: e.to_string(),
    })?;
    let state_error = |problem: String| CrawlError::State {
        path: state_dir.clone(),
        problem,
    };
    // Before anything is created: a part that is gone must not be started anew.
    match crate::ledger::check(&state_dir) {
        Err(mismatches) => return Err(state_error(crate::ledger::refusal(&mismatches))),
        // Another program's directory, before the crawl database is made in it.
        Ok(Some(ledger)) => {
            crate::ledger::claim(&state_dir, ledger, StateKind::Crawl, options.share_state)
                .map_err(|e| CrawlError::Setup(e.to_string()))?;
        }
        Ok(None) => {}
    }
    let db = crate::db::open(&sled::Config::new().path(state_dir.join(CRAWL_DB)))
        .map_err(|e| state_error(crate::db::describe(&e)))?;
    let meta = db
        .open_tree("meta")
        .map_err(|e| state_error(crate::db::describe(&e)))?;
    let record = read_record(&meta).map_err(&state_error)?;
    // The database must hold the last checkpoint the state directory knows was committed:
    // an emptied, replaced or cut database would otherwise roll the index and the outputs
    // back without a word.
    let committed = committed_seq(&state_dir).map_err(|e| state_error(e.to_string()))?;
    let found = record.as_ref().map_or(0, |r| r.seq);
    if found < committed {
        return Err(state_error(format!(
            "damaged: the crawl database ({CRAWL_DB}) holds {}, while checkpoint {committed} \
             was committed; nothing was changed: restore the state directory from a backup, or \
             start a new one",
            if found == 0 {
                "no checkpoint".to_string()
            } else {
                format!("checkpoint {found}")
            }
        )));
    }
    let index_documents = record.as_ref().map_or(0, |r| r.index_documents);
    let dedup = Dedup::open_at(&state_dir, config, index_documents, options.share_state)?;
    if let Some(problem) = record.as_ref().and_then(|r| r.foreign_to(dedup.state_id())) {
        return Err(state_error(format!(
            "damaged: {problem}; nothing was changed: restore the state directory from a \
             backup, or start a new one"
        )));
    }
    dedup.raise_ledger(index_documents, Some(found))?;
    let dedup = match &options.clock {
        Some(clock) => dedup.with_clock(clock.clone()),
        None => dedup,
    };
    let mut frontier = Frontier::open(
        db.open_tree("frontier")
            .map_err(|e| state_error(crate::db::describe(&e)))?,
        found,
    )
    .map_err(|e| match e {
        // What the frontier holds is unreadable: the state directory is damaged.
        super::frontier::FrontierError::Damaged(_) => state_error(e.to_string()),
        other => CrawlError::Frontier(other),
    })?;
    if let Some(after) = options.compact_after {
        frontier.set_compaction(after, (after / 16).max(1));
    }
    Ok(Opened {
        db,
        meta,
        record,
        dedup,
        frontier,
    })
}

/// What [`queue_seeds`] found.
pub(super) struct Seeds {
    pub(super) scope: Scope,
    /// The focus keywords, as tokens.
    pub(super) keywords: Vec<String>,
    /// Seeds an earlier run recorded as failed (refused by the SSRF guard) and queued
    /// again: their failures are superseded.
    pub(super) requeued: u64,
}

/// Canonicalizes the seeds, builds the scope from them, and queues those not seen yet.
/// A new crawl needs a seed.
pub(super) fn queue_seeds(
    config: &Config,
    dedup: &Dedup,
    frontier: &mut Frontier,
    worker: Option<&mut Worker<'_>>,
    new_crawl: bool,
) -> Result<Seeds, CrawlError> {
    let crawl = &config.crawl;
    // Seeds: canonical, in scope, queued once.
    let mut seeds = Vec::new();
    for seed in crawl
        .seeds
        .iter()
        .cloned()
        .chain(read_seed_files(&crawl.seed_files)?)
    {
        let url = dedup
            .canonicalizer()
            .canonicalize(&seed)
            .map_err(|e| CrawlError::Setup(format!("seed `{seed}`: {e}")))?;
        seeds.push(url);
    }
    if seeds.is_empty() && new_crawl {
        return Err(CrawlError::Setup(
            "no seeds: give --seed, --seeds or crawl.seeds".into(),
        ));
    }
    // A seed the SSRF guard refuses: said at once, not after its retries; a later run
    // with the guard lifted fetches it, though an earlier one recorded it as failed.
    let mut requeued = 0;
    for url in &seeds {
        let Some(reason) = super::guard::private_address(url) else {
            continue;
        };
        if !crawl.allow_private_ips {
            tracing::warn!("seed {url}: refused: {reason}");
        } else if frontier.requeue_failed(url)? {
            tracing::info!("seed {url}: refused in an earlier run, queued again");
            requeued += 1;
        }
    }
    let scope = Scope::new(config, &seeds)?;
    let keywords: Vec<String> = config
        .focus
        .keywords
        .iter()
        .flat_map(|k| crate::fingerprint::tokens(k))
        .collect();
    let seeds = seeds
        .into_iter()
        .map(|url| (url, 0, priority(&keywords, 0, 0)))
        .collect();
    enqueue(dedup, frontier, worker, seeds)?;
    Ok(Seeds {
        scope,
        keywords,
        requeued,
    })
}

pub(super) fn read_seed_files(files: &[PathBuf]) -> Result<Vec<String>, CrawlError> {
    let mut seeds = Vec::new();
    for file in files {
        seeds.extend(
            crate::config::read_seed_file(file).map_err(|e| CrawlError::Setup(e.to_string()))?,
        );
    }
    Ok(seeds)
}
