//! Checking and mending a state directory: `crawldedup verify` and `crawldedup repair`.
//!
//! [`verify`] looks at every part a state directory can hold (a crawl's database and
//! frontier, the URL filter, the near-duplicate index, and a crawl's outputs against its
//! last checkpoint) and says of each, in one line, that it is fine or what is wrong. It
//! changes nothing a crawl would not change on resume (opening the index can mend a batch
//! of rows that a crash cut short, from the document records).
//!
//! [`repair()`] does what can be done from what is intact, and says what it could not:
//! - outputs longer than the last checkpoint are cut back to it (what a resumed crawl does;
//!   the lines past it are redone by the crawl);
//! - a crawl's damaged or missing URL filter is rebuilt from its frontier, which holds
//!   every URL the filter recorded up to the last checkpoint; the damaged file is set aside
//!   (renamed to `seen-urls.bloom.damaged`, never deleted);
//! - with `accept_loss` only: another state directory's URL filter is rebuilt the same way
//!   from the names of the pages its index holds (URLs answered `new` that never became
//!   pages are forgotten), a damaged generation of the URL journal (the sidecar's "new"
//!   answers since the last save) is set aside, and an index whose manifest is missing or
//!   records more documents than the database holds gets a manifest for what it holds;
//! - outputs shorter than the checkpoint, and a damaged crawl database, cannot be rebuilt
//!   from the rest: restore them from a backup.

use std::path::{Path, PathBuf};

use crate::crawl::CheckpointRecord;
use crate::dedup::INDEX_DIR;
use crate::index::{IndexConfig, SimhashIndex, manifest::Manifest};

#[cfg(feature = "cluster")]
mod hand_over;
mod repair;

pub use repair::{cannot_repair, repair};

/// Who holds `state_dir`, when a process does (a crawl, `serve` or `dedup` running on it):
/// the process and its last checkpoint, as the crawl's status file says, else that some
/// process holds it. `None` when no process holds any of its databases.
pub fn in_use(state_dir: &Path) -> Option<String> {
    let databases = [
        state_dir.join(crate::dedup::INDEX_DIR),
        state_dir.join(crate::crawl::CRAWL_DB),
        state_dir.join(crate::urls::seen::CONFIRM_DIR),
    ];
    if !databases.iter().any(|db| crate::db::held(db)) {
        return None;
    }
    Some(match crate::crawl::CrawlStatus::read(state_dir) {
        Ok(Some(status)) if !status.finished => format!(
            "in use by PID {} (a crawl; its last checkpoint, #{}, {:.0} s ago)",
            status.pid,
            status.checkpoint.seq,
            status.age_seconds()
        ),
        _ => "another process holds this state directory (a crawl, `serve` or `dedup` running \
             on it?)"
            .into(),
    })
}

/// What was found (or done) for one part of a state directory.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// The part: `crawl database`, `frontier`, `URL filter`, `URL journal`, `index`,
    /// `outputs`.
    pub name: &'static str,
    /// `Ok`: fine (or mended), with figures; `Err`: what is wrong (or could not be mended).
    pub result: Result<String, String>,
}

impl std::fmt::Display for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.result {
            Ok(fine) => write!(f, "{}: fine: {fine}", self.name),
            Err(problem) => write!(f, "{}: {problem}", self.name),
        }
    }
}

use crate::store::files::OUTPUT_NAMES as OUTPUTS;

/// Checks every part of the state directory `state_dir` (and, for a crawl, its outputs in
/// `out_dir`). A directory this process cannot write to (a backup on a read-only file
/// system) is only read: its parts are checked in a copy, since opening a database writes.
pub fn verify(state_dir: &Path, out_dir: Option<&Path>) -> Vec<Part> {
    if crate::db::writable(state_dir) {
        return verify_with_record(state_dir, out_dir).parts;
    }
    let copied = tempfile::Builder::new()
        .prefix("crawldedup-verify-")
        .tempdir()
        .and_then(|scratch| {
            let copy = scratch.path().join("state");
            copy_tree(state_dir, &copy)?;
            Ok((scratch, copy))
        });
    let (scratch, copy) = match copied {
        Ok(copied) => copied,
        Err(e) => {
            return vec![Part {
                name: "state directory",
                result: Err(format!(
                    "read-only, and it could not be copied to check it without writing: {e}"
                )),
            }];
        }
    };
    let (copy_name, own_name) = (copy.display().to_string(), state_dir.display().to_string());
    let mut parts: Vec<Part> = verify_with_record(&copy, out_dir)
        .parts
        .into_iter()
        .map(|part| Part {
            name: part.name,
            result: match part.result {
                Ok(fine) => Ok(fine.replace(&copy_name, &own_name)),
                Err(problem) => Err(problem.replace(&copy_name, &own_name)),
            },
        })
        .collect();
    parts.insert(
        0,
        Part {
            name: "state directory",
            result: Ok("read-only: checked in a copy, nothing written to it".into()),
        },
    );
    drop(scratch);
    parts
}

/// Copies the folder `from` to `to`, files and folders.
pub(crate) fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for item in std::fs::read_dir(from)? {
        let item = item?;
        let target = to.join(item.file_name());
        if item.file_type()?.is_dir() {
            copy_tree(&item.path(), &target)?;
        } else {
            std::fs::copy(item.path(), &target)?;
        }
    }
    Ok(())
}

/// What [`verify_with_record`] found: a line per part, and of a crawl the record its
/// outputs answer to and the hand-over its last checkpoint left unsent (a cluster
/// worker's), when read.
struct Found {
    parts: Vec<Part>,
    /// The record the outputs answer to: the last checkpoint's, or the empty record for a
    /// crawl database that holds no checkpoint yet (a crawl resumed from it writes its
    /// outputs from their start, so what a worker killed before its first checkpoint wrote
    /// is no one's).
    outputs_at: Option<CheckpointRecord>,
    unsent: Option<crate::crawl::Unsent>,
}

/// The crawl database's line `db`, checked against the ledger: an older checkpoint than
/// the one the state directory knows was committed means the database was emptied,
/// replaced or cut (a crawl refuses to resume from it); a checkpoint of another directory
/// is damage too.
fn against_the_ledger(
    state_dir: &Path,
    mut db: Result<String, String>,
    record: Option<&CheckpointRecord>,
) -> Result<String, String> {
    let found = record.map_or(0, |r| r.seq);
    match crate::ledger::committed_seq(state_dir) {
        Ok(committed) if db.is_ok() && found < committed => {
            db = Err(format!(
                "damaged: it holds checkpoint {found}, while checkpoint {committed} was \
                 committed"
            ));
        }
        Err(problem) => db = Err(problem.to_string()),
        _ => {}
    }
    if let (Ok(_), Some(id), Some(r)) = (&db, ledger_id(state_dir), record) {
        if let Some(problem) = r.foreign_to(id) {
            db = Err(format!("damaged: {problem}"));
        }
    }
    db
}

/// [`verify`], also returning what it read of the crawl's last checkpoint.
fn verify_with_record(state_dir: &Path, out_dir: Option<&Path>) -> Found {
    let mut parts = Vec::new();
    let ledger = crate::ledger::check(state_dir);
    let crawl = crate::crawl::check_parts(state_dir);
    let mut record: Option<CheckpointRecord> = None;
    let mut outputs_at: Option<CheckpointRecord> = None;
    let mut left_unsent = None;
    if let Some((db, frontier, r, unsent)) = crawl {
        let db = against_the_ledger(state_dir, db, r.as_ref());
        if db.is_ok() && r.is_none() {
            outputs_at = Some(CheckpointRecord::default());
        }
        parts.push(Part {
            name: "crawl database",
            result: db,
        });
        parts.push(Part {
            name: "frontier",
            result: frontier,
        });
        if let Some(unsent) = &unsent {
            parts.push(Part {
                name: "cluster hand-over",
                result: Ok(unsent_note(unsent)),
            });
        }
        record = r;
        left_unsent = unsent;
    }
    let outputs_at = record.clone().or(outputs_at);
    let checkpoints_taken = record.as_ref().is_some_and(|r| r.seq > 0);
    parts.push(Part {
        name: "URL filter",
        result: match crate::urls::seen::check_saved(state_dir) {
            Ok(Some((seq, count))) => Ok(format!("{count} URLs, saved at checkpoint {seq}")),
            Ok(None) if set_aside_path(state_dir).exists() => Ok(format!(
                "none: the damaged one was set aside as {}; the next run starts an empty filter",
                set_aside_path(state_dir).display()
            )),
            Ok(None) if checkpoints_taken => Err(format!(
                "missing: {} is gone although the crawl took checkpoints",
                crate::urls::seen::SEEN_FILE
            )),
            Ok(None) => Ok("none saved yet".into()),
            Err(problem) => Err(format!(
                "damaged: {}: {problem}",
                crate::urls::seen::SEEN_FILE
            )),
        },
    });
    parts.push(Part {
        name: "URL journal",
        result: match crate::urls::journal::read_all(state_dir) {
            Ok(generations) if generations.is_empty() => Ok("none".into()),
            Ok(generations) => Ok(format!(
                "{} URLs in {} generation{} since the filter was saved",
                generations.iter().map(|g| g.entries.len()).sum::<usize>(),
                generations.len(),
                if generations.len() == 1 { "" } else { "s" }
            )),
            Err((path, problem)) => Err(format!("damaged: {}: {problem}", path.display())),
        },
    });
    parts.push(Part {
        name: "host templates",
        result: crate::dedup::template::HostTemplates::open(state_dir)
            .map(|t| match t.size() {
                (0, _) => "none learned yet".to_string(),
                (hosts, blocks) => format!("{hosts} hosts, {blocks} blocks"),
            })
            .map_err(|problem| format!("damaged: {problem}")),
    });
    parts.push(Part {
        name: "index",
        result: verify_index(&state_dir.join(INDEX_DIR), record.as_ref()),
    });
    if let (Some(at), Some(out)) = (&outputs_at, out_dir) {
        parts.push(Part {
            name: "outputs",
            result: verify_outputs(out, at),
        });
    }
    add_ledger(&mut parts, ledger);
    Found {
        parts,
        outputs_at,
        unsent: left_unsent,
    }
}

/// What the ledger finds, added to `parts`: its own line first, then each part that is gone,
/// older than recorded, or another directory's (which each part checked alone cannot tell)
/// on that part's line, or on a line of its own when the part has none.
fn add_ledger(
    parts: &mut Vec<Part>,
    ledger: Result<Option<crate::ledger::Ledger>, Vec<crate::ledger::Mismatch>>,
) {
    parts.insert(
        0,
        Part {
            name: "ledger",
            result: match &ledger {
                Ok(Some(ledger)) => Ok(ledger.to_string()),
                Ok(None) => Ok(
                    "none: a new state directory, or one written before ledgers (the next \
                     command that opens it writes one)"
                        .into(),
                ),
                Err(_) => Ok("readable; what does not match it is named below".into()),
            },
        },
    );
    for mismatch in ledger.err().unwrap_or_default() {
        match parts.iter_mut().find(|p| p.name == mismatch.part) {
            Some(part) if part.result.is_ok() => part.result = Err(mismatch.problem),
            Some(_) => {}
            None => parts.push(Part {
                name: mismatch.part,
                result: Err(mismatch.problem),
            }),
        }
    }
}

/// The id in the ledger of `state_dir`, when it has a readable one.
fn ledger_id(state_dir: &Path) -> Option<crate::ledger::StateId> {
    crate::ledger::Ledger::read(state_dir)
        .ok()
        .flatten()
        .map(|l| l.id)
}

fn verify_index(dir: &Path, record: Option<&CheckpointRecord>) -> Result<String, String> {
    if !dir.exists() {
        return Ok("none yet".into());
    }
    let index = SimhashIndex::open(dir, IndexConfig::default()).map_err(|e| e.to_string())?;
    let held = index.len();
    drop(index);
    let durable = Manifest::read(dir)
        .ok()
        .flatten()
        .map_or(0, |m| m.documents);
    if let Some(r) = record {
        if held < r.index_documents {
            return Err(format!(
                "damaged: {held} documents, the crawl's last checkpoint recorded {}",
                r.index_documents
            ));
        }
    }
    Ok(format!(
        "{held} documents, {durable} of them made durable by the last checkpoint"
    ))
}

/// The outputs against the checkpoint: each JSONL file at least as long as recorded and
/// made of whole JSON lines up to that length, the WARC file at least as long as recorded.
fn verify_outputs(out: &Path, record: &CheckpointRecord) -> Result<String, String> {
    let mut notes = Vec::new();
    for (name, &expected) in OUTPUTS.iter().zip(&record.output_bytes) {
        let path = out.join(name);
        let bytes = std::fs::read(&path).unwrap_or_default();
        if (bytes.len() as u64) < expected {
            return Err(format!(
                "{}: {} bytes, the last checkpoint wrote {expected}: restore the file from a \
                 backup (repair cannot rebuild it)",
                path.display(),
                bytes.len()
            ));
        }
        let head = &bytes[..expected as usize];
        if !head.is_empty() && !head.ends_with(b"\n") {
            return Err(format!(
                "{}: the checkpoint's length ends inside a line",
                path.display()
            ));
        }
        for (i, line) in head.split(|&b| b == b'\n').enumerate() {
            if !line.is_empty() && serde_json::from_slice::<serde_json::Value>(line).is_err() {
                return Err(format!(
                    "{}: line {} is not JSON: the file is damaged",
                    path.display(),
                    i + 1
                ));
            }
        }
        let past = bytes.len() as u64 - expected;
        if past > 0 {
            notes.push(format!(
                "{name} has {past} bytes past the checkpoint (cut back on resume)"
            ));
        }
    }
    let crate::store::warc::WarcPosition {
        file: number,
        length,
    } = record.warc;
    let warc = out.join("warc").join(crate::store::warc::file_name(number));
    if length > 0 {
        let found = std::fs::metadata(&warc).map_or(0, |m| m.len());
        if found < length {
            return Err(format!(
                "{}: {found} bytes, the last checkpoint wrote {length}: restore the file from a \
                 backup",
                warc.display()
            ));
        }
    }
    if notes.is_empty() {
        Ok("as the last checkpoint recorded".into())
    } else {
        Ok(notes.join("; "))
    }
}

/// Where [`repair()`] puts a damaged URL filter.
fn set_aside_path(state_dir: &Path) -> PathBuf {
    state_dir.join(format!("{}.damaged", crate::urls::seen::SEEN_FILE))
}

/// What a cluster worker's unsent checkpoint means, and what to do (docs/cluster.md, "A
/// worker killed"). Not damage: work left to do, which the worker's next start does.
fn unsent_note(unsent: &crate::crawl::Unsent) -> String {
    format!(
        "not sent yet: checkpoint {} of this cluster worker holds {} pages whose commits, \
         with its hand-offs and pending mirror, may not have reached Redis (it was killed or \
         cut off first), and the other workers take those pages for lost: its next start \
         sends them (then run `crawldedup reconcile --cluster NODES`); for a worker that is \
         not coming back, `crawldedup repair --cluster NODES --out DIR` settles them with the \
         cluster",
        unsent.seq,
        unsent.docs.len()
    )
}
