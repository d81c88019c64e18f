//! Opening an index: checks of the stored layout and versions against the manifest, the
//! roll-back to a checkpoint, the rebuild of the tables in memory; and the manifest's
//! rewrite for `repair`.

use std::path::Path;
use std::sync::{Mutex, RwLock};

use super::manifest::{MANIFEST_FILE, Manifest};
use super::plan::{self, Plan};
use super::store::{Rows, Store, StoreError};
use super::tables::build_memory;
use super::{
    INDEX_FORMAT_VERSION, IndexConfig, IndexError, OLDEST_FINGERPRINT, OLDEST_INDEX_FORMAT,
    Pending, RESTORE, SimhashIndex,
};
use crate::fingerprint::FINGERPRINT_VERSION;

impl SimhashIndex {
    /// Opens the index in `dir`, creating it when empty. A stored index keeps its layout.
    pub fn open(dir: &Path, config: IndexConfig) -> Result<SimhashIndex, IndexError> {
        SimhashIndex::open_at(dir, config, None)
    }

    /// As [`SimhashIndex::open`], first dropping every document from id `limit` on: the
    /// index as it was when it held `limit` documents (a crawl rolls back to its last
    /// checkpoint this way).
    pub fn open_at(
        dir: &Path,
        config: IndexConfig,
        limit: Option<u64>,
    ) -> Result<SimhashIndex, IndexError> {
        let path = dir.to_path_buf();
        let (store_error, corrupt) = IndexError::makers(&path);
        if config.max_distance > super::MAX_DISTANCE_LIMIT {
            return Err(IndexError::Layout(format!(
                "k = {} is over the limit of {}",
                config.max_distance,
                super::MAX_DISTANCE_LIMIT
            )));
        }
        let started = std::time::Instant::now();
        // The snapshot's check needs neither sled nor its lock: it runs while sled recovers.
        let early = super::snapshot::Early::start(dir);
        let db = crate::db::open(&sled::Config::new().path(dir).cache_capacity(256 << 20))
            .map_err(store_error)?;
        let sled_opened = started.elapsed();
        let store = Store::open(&db).map_err(store_error)?;
        let manifest = Manifest::read(dir).map_err(&corrupt)?;
        let (plan, manifest) = layout(dir, config, &db, &store, manifest)?;
        let source = Source {
            dir,
            db: &db,
            store: &store,
            plan: &plan,
            manifest: &manifest,
            limit,
        };
        let (mut memory, snapshot_extent) = load_memory(&source, early, (started, sled_opened))?;
        if config.reserve > 0 {
            let started = std::time::Instant::now();
            memory.reserve(config.reserve);
            tracing::debug!(
                "{}: room made for {} documents in {:.2} s",
                path.display(),
                config.reserve,
                started.elapsed().as_secs_f64()
            );
        }
        let count = memory.count();
        let floor = memory.base;
        let background =
            super::writer::BatchWriter::start(store.clone()).map_err(|e| IndexError::Corrupt {
                path: dir.to_path_buf(),
                problem: format!("cannot start the index's writer thread: {e}"),
            })?;
        let memory = std::sync::Arc::new(RwLock::new(memory));
        let upkeep = super::upkeep::Upkeep::start(super::upkeep::Work {
            dir: dir.to_path_buf(),
            plan: plan.clone(),
            memory: memory.clone(),
            background: config.background_snapshots,
            durable: manifest.documents.min(count),
            installed: snapshot_extent,
        })
        .map_err(|e| IndexError::Corrupt {
            path: dir.to_path_buf(),
            problem: format!("cannot start the index's upkeep thread: {e}"),
        })?;
        Ok(SimhashIndex {
            confirm: config.confirm,
            retention: config.retention.map(crate::clock::window_secs),
            clock: crate::clock::system(),
            durable_floor: std::sync::atomic::AtomicU64::new(floor),
            expired: Default::default(),
            refused: Default::default(),
            path,
            db,
            store,
            plan,
            memory,
            upkeep,
            from_snapshot: snapshot_extent.is_some(),
            background,
            writer: Mutex::new(()),
            durable: Mutex::new(count),
            pending: Mutex::new(Pending {
                first: count,
                docs: Vec::new(),
            }),
            state: manifest.state,
            closed: false,
        })
    }

    /// Rewrites the manifest of the index in `dir` to the documents its database holds now,
    /// for `crawldedup repair --accept-loss` after the database lost documents or the
    /// manifest was lost: returns (documents held, documents the old manifest recorded, if
    /// it was readable). Nothing in the database changes.
    pub fn rewrite_manifest(dir: &Path) -> Result<(u64, Option<u64>), IndexError> {
        let (store_error, corrupt) = IndexError::makers(dir);
        let old = Manifest::read(dir).ok().flatten().map(|m| m.documents);
        let db = crate::db::open(&sled::Config::new().path(dir)).map_err(store_error)?;
        let store = Store::open(&db).map_err(store_error)?;
        let Some((format, fingerprint, _, _)) = store.layout().map_err(store_error)? else {
            return Err(corrupt(
                "the database holds no index: nothing to rewrite the manifest for".into(),
            ));
        };
        let failure = |e| store_failure(dir, e);
        // Rows below the old floor, or below the first chunk a sweep left, expired.
        let old_manifest = Manifest::read(dir).ok().flatten();
        let old_floor = old_manifest.map_or(0, |m| m.floor);
        let first = store.first_row().map_err(failure)?.unwrap_or(0);
        let rows = store
            .load_rows(old_floor.max(first), &[])
            .map_err(failure)?;
        db.flush().map_err(store_error)?;
        Manifest {
            format,
            fingerprint,
            documents: rows.len() as u64,
            floor: rows.base,
            rows_checksum: rows.checksum,
            state: old_manifest.map_or(0, |m| m.state),
        }
        .write(dir)
        .map_err(|e| corrupt(format!("writing the manifest: {e}")))?;
        Ok((rows.len() as u64, old))
    }
}

/// The layout of the index in `dir` and its manifest, checked against each other and
/// against this version's formats; for a new index, the layout chosen from `config`,
/// written with an empty manifest.
fn layout(
    dir: &Path,
    config: IndexConfig,
    db: &sled::Db,
    store: &Store,
    manifest: Option<Manifest>,
) -> Result<(Plan, Manifest), IndexError> {
    let (store_error, corrupt) = IndexError::makers(dir);
    match (store.layout().map_err(store_error)?, manifest) {
        (Some((version, fp_version, k, blocks)), manifest) => {
            if !(OLDEST_INDEX_FORMAT..=INDEX_FORMAT_VERSION).contains(&version)
                || !(OLDEST_FINGERPRINT..=FINGERPRINT_VERSION).contains(&fp_version)
            {
                return Err(IndexError::Format {
                    path: dir.to_path_buf(),
                    found: (version, fp_version),
                });
            }
            let plan = Plan::with_blocks(k, blocks).ok_or_else(|| {
                corrupt(format!("stored layout k = {k}, {blocks} blocks is invalid"))
            })?;
            let manifest = match manifest {
                Some(m) => m,
                // Created, then stopped before its first manifest: nothing to lose.
                None if store.is_empty().map_err(store_error)? => Manifest::empty(),
                None => {
                    return Err(corrupt(format!(
                        "damaged: the manifest ({MANIFEST_FILE}) is missing, so the index \
                         cannot be checked; {RESTORE}"
                    )));
                }
            };
            // The database is upgraded before the manifest: a manifest of the formats
            // before goes with it while an upgrade's first checkpoint is to come.
            if !(OLDEST_INDEX_FORMAT..=version).contains(&manifest.format)
                || !(OLDEST_FINGERPRINT..=fp_version).contains(&manifest.fingerprint)
            {
                return Err(corrupt(format!(
                    "damaged: the manifest names index format {} and fingerprint version \
                     {}, the database {version} and {fp_version}; {RESTORE}",
                    manifest.format, manifest.fingerprint
                )));
            }
            if version < INDEX_FORMAT_VERSION || fp_version < FINGERPRINT_VERSION {
                // Upgraded in place: what is stored reads as before.
                store
                    .set_layout(INDEX_FORMAT_VERSION, FINGERPRINT_VERSION, k, blocks)
                    .map_err(store_error)?;
                db.flush().map_err(store_error)?;
                if version < INDEX_FORMAT_VERSION {
                    tracing::info!(
                        "{}: index format {version} upgraded to {INDEX_FORMAT_VERSION}",
                        dir.display()
                    );
                }
                if fp_version < FINGERPRINT_VERSION {
                    tracing::warn!(
                        "{}: fingerprint version {fp_version} upgraded to {FINGERPRINT_VERSION}: {}",
                        dir.display(),
                        crate::fingerprint::UPGRADE_NOTE
                    );
                }
            }
            Ok((plan, manifest))
        }
        (None, Some(manifest)) => Err(corrupt(format!(
            "damaged: the database holds no index, the manifest records {} documents; \
             {RESTORE}",
            manifest.documents
        ))),
        (None, None) => {
            let plan = match config.blocks {
                Some(r) => Plan::with_blocks(config.max_distance, r),
                None => Plan::choose(
                    config.expected,
                    config.max_distance,
                    plan::DEFAULT_CANDIDATE_BUDGET,
                ),
            }
            .ok_or_else(|| {
                IndexError::Layout(format!(
                    "no layout with {:?} blocks for k = {}",
                    config.blocks, config.max_distance
                ))
            })?;
            store
                .set_layout(
                    INDEX_FORMAT_VERSION,
                    FINGERPRINT_VERSION,
                    plan.k,
                    plan.blocks.len() as u32,
                )
                .map_err(store_error)?;
            db.flush().map_err(store_error)?;
            let manifest = Manifest::empty();
            manifest.write(dir).map_err(|e| corrupt(e.to_string()))?;
            Ok((plan, manifest))
        }
    }
}

/// A failure of the sled layer as the index in `dir` reports it.
pub(super) fn store_failure(dir: &Path, e: StoreError) -> IndexError {
    let (store_error, corrupt) = IndexError::makers(dir);
    match e {
        StoreError::Sled(source) => store_error(source),
        StoreError::Corrupt(problem) => corrupt(problem),
    }
}

/// A snapshot is read with the documents after it only while they are at most this many
/// times what it holds. Building tails costs what a rebuild of those documents would, so an
/// open through tails is never the slower one; past this, the folds that follow it would
/// re-place nearly every entry of a table that is mostly tail.
const MAX_TIMES_AFTER: u64 = 2;

/// The in-memory index from the snapshot, with what the snapshot describes, when there is
/// one of the index the manifest describes, or of that index at fewer documents; the
/// documents after each table's copy are read from sled and added as its tail (see
/// [`super::snapshot`]). A snapshot that is not usable is deleted, with a line in the log,
/// and the caller rebuilds from sled. A snapshot that a crash left unfinished, or written
/// and not yet put in place, is kept as the spare file for the next one to be written over
/// (see [`super::snapshot::keep_leftovers`]). What `early`, the check started before sled
/// opened, found is used when it was found on this manifest, layout and file.
fn from_snapshot(
    source: &Source<'_>,
    early: super::snapshot::Early,
) -> Result<Option<(super::tables::Memory, super::snapshot::Extent)>, IndexError> {
    use super::snapshot::{self, Refused};
    let Source {
        dir,
        store,
        plan,
        manifest,
        limit,
        ..
    } = *source;
    snapshot::keep_leftovers(dir);
    let file = snapshot::path(dir);
    let set_aside = |why: &str| {
        tracing::info!(
            "{}: set aside ({why}); the tables are rebuilt from the database",
            file.display()
        );
        // Never used again: it describes an index that is gone, or it is damaged.
        let _ = std::fs::remove_file(&file);
        Ok(None)
    };
    let written = store.written().map_err(|e| store_failure(dir, e))?;
    let rows = written
        .max(manifest.documents)
        .saturating_sub(manifest.floor);
    let started = std::time::Instant::now();
    let (checked, room) = early.take(dir, plan, manifest).unzip();
    let checked_early = checked.is_some();
    let opened = checked.unwrap_or_else(|| snapshot::open(dir, plan, manifest, rows));
    let (mut memory, held, extent) = match opened {
        Ok(opened) => opened,
        Err(Refused::Missing) => return Ok(None),
        Err(Refused::Stale(why)) => return set_aside(&why),
        Err(Refused::Damaged(why)) => {
            tracing::warn!("{}: damaged ({why})", file.display());
            return set_aside("damaged");
        }
    };
    let newest = held.iter().copied().fold(memory.count(), u64::max);
    if limit.is_some_and(|l| l < newest) {
        return set_aside("it holds documents past the checkpoint the index rolls back to");
    }
    let oldest = held.iter().copied().fold(memory.count(), u64::min);
    let after = written.saturating_sub(oldest);
    let kept = memory.docs.len() as u64;
    if after > kept * MAX_TIMES_AFTER {
        return set_aside(&format!(
            "it holds {kept} documents, the database {after} more: a rebuild is faster"
        ));
    }
    let mapped = started.elapsed();
    tracing::debug!(
        "{}: snapshot mapped and checked {}in {:.2} s",
        dir.display(),
        if checked_early {
            "while sled opened, waited for "
        } else {
            ""
        },
        mapped.as_secs_f64()
    );
    let rows = match checked_rows(source, Some((memory.count(), memory.checksum))) {
        Ok(rows) => rows,
        // Either the snapshot is not of these rows, or the rows are damaged: a rebuild
        // tells which, and reports the damage.
        Err(e) => return set_aside(&format!("with the documents after it: {e}")),
    };
    let read = started.elapsed();
    let added = rows.docs.len();
    memory.checksum = rows.checksum;
    memory.docs.extend(rows.docs);
    let ready = room.as_ref().map_or(0, Vec::len);
    super::tables::add_tails(plan, &mut memory, &held, room.unwrap_or_default());
    if memory.has_tails() {
        tracing::debug!(
            "{}: {added} documents after the snapshot's rows added from the database, the \
             tables' tails from document {oldest} on (snapshot and rows {:.2} s, tails {:.2} s; \
             memory faulted in ahead for {ready} of {} tables)",
            dir.display(),
            read.as_secs_f64(),
            (started.elapsed() - read).as_secs_f64(),
            held.len()
        );
    }
    Ok(Some((memory, extent)))
}

/// The stored rows, checked against the manifest (none missing, none changed), and cut
/// back to the first `limit` when given (the manifest follows). `held` is what a snapshot
/// already holds, (documents, their row checksum): only the rows after it are read, and
/// the check covers both.
fn checked_rows(source: &Source<'_>, held: Option<(u64, u64)>) -> Result<Rows, IndexError> {
    let Source {
        dir,
        db,
        store,
        manifest,
        limit,
        ..
    } = *source;
    let (store_error, corrupt) = IndexError::makers(dir);
    let store_failure = |e| store_failure(dir, e);
    let marks: Vec<u64> = std::iter::once(manifest.documents).chain(limit).collect();
    let (start, prior) = held.unwrap_or((manifest.floor, 0));
    let mut rows = store
        .load_rows_from(start, prior, &marks)
        .map_err(store_failure)?;
    if (rows.len() as u64) < manifest.documents {
        return Err(corrupt(format!(
            "damaged: {} documents readable, the manifest records {}; {RESTORE}",
            rows.len(),
            manifest.documents
        )));
    }
    if rows.checksums_at[0].1 != Some(manifest.rows_checksum) {
        return Err(corrupt(format!(
            "damaged: the rows of documents {} to {} do not match the manifest's \
             checksum; {RESTORE}",
            manifest.floor, manifest.documents
        )));
    }
    if let Some(limit) = limit {
        if (rows.len() as u64) < limit {
            return Err(corrupt(format!(
                "{} documents stored, the checkpoint expects {limit}",
                rows.len()
            )));
        }
        if (rows.len() as u64) > limit {
            store.truncate(limit, &mut rows).map_err(store_failure)?;
            db.flush().map_err(store_error)?;
            Manifest {
                documents: limit,
                floor: manifest.floor.min(limit),
                rows_checksum: rows.checksum,
                ..*manifest
            }
            .write(dir)
            .map_err(|e| corrupt(e.to_string()))?;
        }
    }
    if u32::try_from(rows.len()).is_err() {
        return Err(corrupt(format!(
            "{} documents is over the limit",
            rows.len()
        )));
    }
    Ok(rows)
}

/// What an open builds the in-memory index from: the database and its manifest, the
/// tables' plan, and the checkpoint to roll back to, if any.
#[derive(Clone, Copy)]
struct Source<'a> {
    dir: &'a Path,
    db: &'a sled::Db,
    store: &'a Store,
    plan: &'a Plan,
    manifest: &'a Manifest,
    limit: Option<u64>,
}

/// The in-memory index: from the snapshot when it can be used, else rebuilt from the rows
/// in sled; with the snapshot's extent when it came from one. `early` is the snapshot's
/// check started before sled opened (see `snapshot::Early`); `started` is when opening
/// began, and `sled_opened` how long sled took (for the log's timings).
fn load_memory(
    source: &Source<'_>,
    early: super::snapshot::Early,
    (started, sled_opened): (std::time::Instant, std::time::Duration),
) -> Result<(super::Memory, Option<super::snapshot::Extent>), IndexError> {
    let path = source.dir;
    Ok(match from_snapshot(source, early)? {
        Some((memory, extent)) => {
            tracing::debug!(
                "{}: opened with {} documents from the snapshot: sled {:.2} s, snapshot {:.2} s",
                path.display(),
                memory.count(),
                sled_opened.as_secs_f64(),
                (started.elapsed() - sled_opened).as_secs_f64(),
            );
            (memory, Some(extent))
        }
        None => {
            let rows = checked_rows(source, None)?;
            let rows_read = started.elapsed();
            let memory = build_memory(source.plan, rows);
            tracing::debug!(
                "{}: opened with {} documents: sled {:.2} s, rows {:.2} s, tables {:.2} s",
                path.display(),
                memory.count(),
                sled_opened.as_secs_f64(),
                (rows_read - sled_opened).as_secs_f64(),
                (started.elapsed() - rows_read).as_secs_f64()
            );
            (memory, None)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::super::DocRecord;
    use super::*;

    /// An index of fingerprint version 4 (Korean read by its spaces) opens, keeps what it
    /// holds and is marked with this build's version, in the database at once and in the
    /// manifest at the next checkpoint; one of version 3 is refused and left alone.
    #[test]
    fn an_index_of_fingerprint_version_4_is_upgraded_and_3_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let text = "The harbour council met on Thursday to decide the future of the old ferry.";
        let record = DocRecord::new("first", text, &crate::Fingerprint::of(text));
        {
            let index = SimhashIndex::open(dir.path(), IndexConfig::default()).unwrap();
            index.insert(record).unwrap();
            index.checkpoint().unwrap();
            index
                .store
                .set_layout(INDEX_FORMAT_VERSION, 4, 3, 6)
                .unwrap();
            index.db.flush().unwrap();
        }
        let manifest = Manifest::path(dir.path());
        // The manifest of version 4, as that build wrote it.
        let written = std::fs::read_to_string(&manifest).unwrap();
        let body = &written[..written.rfind("check ").unwrap()];
        assert!(body.contains("\nfingerprint 5\n"), "{body}");
        std::fs::write(
            &manifest,
            crate::sealed::seal(&body.replace("\nfingerprint 5\n", "\nfingerprint 4\n")),
        )
        .unwrap();
        {
            let index = SimhashIndex::open(dir.path(), IndexConfig::default()).unwrap();
            assert_eq!(index.len(), 1);
            assert_eq!(
                index.store.layout().unwrap().map(|l| l.1),
                Some(FINGERPRINT_VERSION)
            );
            index.checkpoint().unwrap();
        }
        let text = std::fs::read_to_string(&manifest).unwrap();
        assert!(text.contains("\nfingerprint 5\n"), "{text}");
        {
            let index = SimhashIndex::open(dir.path(), IndexConfig::default()).unwrap();
            index
                .store
                .set_layout(INDEX_FORMAT_VERSION, 3, 3, 6)
                .unwrap();
            index.db.flush().unwrap();
        }
        let e = SimhashIndex::open(dir.path(), IndexConfig::default()).unwrap_err();
        assert!(matches!(e, IndexError::Format { found: (_, 3), .. }), "{e}");
        let e = SimhashIndex::open(dir.path(), IndexConfig::default()).unwrap_err();
        assert!(matches!(e, IndexError::Format { found: (_, 3), .. }));
    }
}
