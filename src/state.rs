//! Checking and mending a state directory: `crawldedup verify` and `crawldedup repair`.
//!
//! [`verify`] looks at every part a state directory can hold (a crawl's database and
//! frontier, the URL filter, the near-duplicate index, and a crawl's outputs against its
//! last checkpoint) and says of each, in one line, that it is fine or what is wrong. It
//! changes nothing a crawl would not change on resume (opening the index can mend a batch
//! of rows that a crash cut short, from the document records).
//!
//! [`repair`] does what can be done from what is intact, and says what it could not:
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

use crate::config::Config;
use crate::crawl::CheckpointRecord;
use crate::dedup::INDEX_DIR;
use crate::index::{IndexConfig, SimhashIndex, manifest::Manifest};
use crate::urls::seen::SEEN_FILE;
use crate::urls::{Canonicalizer, SeenUrls};

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

const OUTPUTS: [&str; 3] = ["pages.jsonl", "duplicates.jsonl", "failures.jsonl"];

/// Checks every part of the state directory `state_dir` (and, for a crawl, its outputs in
/// `out_dir`). A directory this process cannot write to (a backup on a read-only file
/// system) is only read: its parts are checked in a copy, since opening a database writes.
pub fn verify(state_dir: &Path, out_dir: Option<&Path>) -> Vec<Part> {
    if crate::db::writable(state_dir) {
        return verify_with_record(state_dir, out_dir).0;
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
        .0
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

/// Why `repair` must not start on `state_dir`: a process holds it, or it cannot be written.
pub fn cannot_repair(state_dir: &Path) -> Option<String> {
    let databases = [
        state_dir.join(INDEX_DIR),
        state_dir.join(crate::crawl::CRAWL_DB),
        state_dir.join(crate::urls::seen::CONFIRM_DIR),
    ];
    if databases.iter().any(|db| crate::db::held(db)) {
        return Some(
            "another process holds this state directory (a crawl, `serve` or `dedup` running \
             on it?); stop it first; nothing was changed"
                .into(),
        );
    }
    (!crate::db::writable(state_dir)).then(|| {
        "read-only: repair writes; copy the directory somewhere writable and repair the copy; \
         nothing was changed"
            .into()
    })
}

/// Copies the folder `from` to `to`, files and folders.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
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

/// [`verify`], also returning the crawl's last checkpoint record when it could be read.
fn verify_with_record(
    state_dir: &Path,
    out_dir: Option<&Path>,
) -> (Vec<Part>, Option<CheckpointRecord>) {
    let mut parts = Vec::new();
    let ledger = crate::ledger::check(state_dir);
    let mismatches = ledger.clone().err().unwrap_or_default();
    let crawl = crate::crawl::check_parts(state_dir);
    let mut record: Option<CheckpointRecord> = None;
    if let Some((mut db, frontier, r)) = crawl {
        // An older checkpoint than the one the state directory knows was committed: the
        // database was emptied, replaced or cut (a crawl refuses to resume from it).
        let found = r.as_ref().map_or(0, |r| r.seq);
        match crate::crawl::committed_seq(state_dir) {
            Ok(committed) if db.is_ok() && found < committed => {
                db = Err(format!(
                    "damaged: it holds checkpoint {found}, while checkpoint {committed} was \
                     committed"
                ));
            }
            Err(problem) => db = Err(problem),
            _ => {}
        }
        if let (Ok(_), Some(id), Some(r)) = (&db, ledger_id(state_dir), &r) {
            if let Some(problem) = r.foreign_to(id) {
                db = Err(format!("damaged: {problem}"));
            }
        }
        parts.push(Part {
            name: "crawl database",
            result: db,
        });
        parts.push(Part {
            name: "frontier",
            result: frontier,
        });
        record = r;
    }
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
        name: "index",
        result: verify_index(&state_dir.join(INDEX_DIR), record.as_ref()),
    });
    if let (Some(record), Some(out)) = (&record, out_dir) {
        parts.push(Part {
            name: "outputs",
            result: verify_outputs(out, record),
        });
    }
    // What the ledger finds: a part that is gone, older than recorded, or another
    // directory's, which each part checked alone cannot tell.
    parts.insert(
        0,
        Part {
            name: "ledger",
            result: match &ledger {
                Ok(Some(ledger)) => Ok(ledger.to_string()),
                Ok(None) => Ok(
                    "none: a new state directory, or one written before ledgers \
                               (the next command that opens it writes one)"
                        .into(),
                ),
                Err(_) => Ok("readable; what does not match it is named below".into()),
            },
        },
    );
    for mismatch in mismatches {
        match parts.iter_mut().find(|p| p.name == mismatch.part) {
            Some(part) if part.result.is_ok() => part.result = Err(mismatch.problem),
            Some(_) => {}
            None => parts.push(Part {
                name: mismatch.part,
                result: Err(mismatch.problem),
            }),
        }
    }
    (parts, record)
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
    let crate::crawl::warc::WarcPosition {
        file: number,
        length,
    } = record.warc;
    let warc = out.join("warc").join(crate::crawl::warc::file_name(number));
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

/// Mends what can be mended (see the module doc); one [`Part`] per action taken or refused.
///
/// `config` sizes a rebuilt URL filter (its `[url_filter]` section, as for a new state
/// directory) and canonicalizes the page names it is rebuilt from.
pub fn repair(
    state_dir: &Path,
    out_dir: Option<&Path>,
    accept_loss: bool,
    config: &Config,
) -> Vec<Part> {
    let mut done = Vec::new();
    let (found, record) = verify_with_record(state_dir, out_dir);
    for part in &found {
        let Err(problem) = &part.result else {
            continue;
        };
        let result = match part.name {
            "ledger" if accept_loss => crate::ledger::adopt(state_dir)
                .map(|l| format!("written for the parts as they are: {l}")),
            "URL filter" if crawl_here(state_dir) || accept_loss => {
                rebuild_url_filter(state_dir, config)
            }
            "URL journal" if accept_loss => set_aside_journal(state_dir),
            "index" if accept_loss && index_lost(problem) => set_aside_index(state_dir),
            "index" if accept_loss => SimhashIndex::rewrite_manifest(&state_dir.join(INDEX_DIR))
                .map(|(held, old)| match old {
                    Some(old) if old > held => format!(
                        "manifest rewritten for the {held} documents the database holds ({} lost)",
                        old - held
                    ),
                    _ => format!("manifest rewritten for the {held} documents the database holds"),
                })
                .map_err(|e| format!("could not recover: {e}")),
            "ledger" | "URL filter" | "URL journal" | "index" => Err(format!(
                "{problem}; `repair --accept-loss` would {}",
                match part.name {
                    "ledger" => {
                        "write a ledger for the parts as they are (a part lost with it is not \
                         noticed)"
                    }
                    "index" if index_lost(problem) => {
                        "set what is left of it aside and start an empty index (every page it \
                         held is forgotten)"
                    }
                    "index" => "accept the documents the database still holds",
                    "URL journal" => {
                        "set the generation aside (its URLs are fetched again, their pages \
                         found as duplicates)"
                    }
                    _ => {
                        "set the file aside and rebuild the filter from the URLs of the stored \
                         pages (URLs answered `new` that did not become pages are forgotten)"
                    }
                }
            )),
            _ => Err(format!("could not recover: {problem}")),
        };
        done.push(Part {
            name: part.name,
            result,
        });
    }
    // Once every part is mended or accepted, the ledger describes them as they are.
    if !done.is_empty() && done.iter().all(|p| p.result.is_ok()) {
        if let Err(problem) = crate::ledger::adopt(state_dir) {
            done.push(Part {
                name: "ledger",
                result: Err(problem),
            });
        }
    }
    if let (Some(record), Some(out)) = (&record, out_dir) {
        if let Some(cut) = cut_outputs_back(out, record) {
            done.push(Part {
                name: "outputs",
                result: cut,
            });
        }
    }
    if done.is_empty() {
        done.push(Part {
            name: "state directory",
            result: Ok("nothing to repair".into()),
        });
    }
    done
}

/// Whether the index's problem is that it is gone or another directory's (rather than
/// holding fewer documents than recorded).
fn index_lost(problem: &str) -> bool {
    problem.starts_with("missing") || problem.starts_with("belongs to another")
}

/// Renames what is left of the index to `index.damaged` (never deletes it); the next open
/// starts an empty one.
fn set_aside_index(state_dir: &Path) -> Result<String, String> {
    let dir = state_dir.join(INDEX_DIR);
    let aside = state_dir.join(format!("{INDEX_DIR}.damaged"));
    if !dir.exists() {
        return Ok(
            "none left; the next open starts an empty index (its pages are forgotten)".into(),
        );
    }
    if aside.exists() {
        return Err(format!(
            "could not set {} aside: {} already exists (move it away first)",
            dir.display(),
            aside.display()
        ));
    }
    std::fs::rename(&dir, &aside)
        .map_err(|e| format!("could not set {} aside: {e}", dir.display()))?;
    Ok(format!(
        "set aside as {}; the next open starts an empty index (its pages are forgotten)",
        aside.display()
    ))
}

/// Where [`repair`] puts a damaged URL filter.
fn set_aside_path(state_dir: &Path) -> PathBuf {
    state_dir.join(format!("{}.damaged", crate::urls::seen::SEEN_FILE))
}

/// Whether `state_dir` holds a crawl (its database).
fn crawl_here(state_dir: &Path) -> bool {
    state_dir.join(crate::crawl::CRAWL_DB).exists()
}

/// Rebuilds a damaged or missing URL filter from the stored records, after setting the
/// damaged file aside (renamed, never deleted): a crawl's from its frontier, which holds
/// every URL the filter recorded up to the last checkpoint (nothing is lost); another
/// state directory's from the names of the pages its index holds (the URLs answered `new`
/// that never became pages are lost, so only with `--accept-loss`). Journal generations
/// are kept and replayed on the next open.
fn rebuild_url_filter(state_dir: &Path, config: &Config) -> Result<String, String> {
    let path = state_dir.join(SEEN_FILE);
    let aside = set_aside_path(state_dir);
    if path.exists() && aside.exists() {
        return Err(format!(
            "could not set {} aside: {} already exists (move it away first)",
            path.display(),
            aside.display()
        ));
    }
    let seen = SeenUrls::new(config.url_filter.seen_config())
        .map_err(|e| e.to_string())?
        .with_state_id(ledger_id(state_dir).unwrap_or(0));
    let mut urls = 0u64;
    let mut record = |url: &str| -> Result<(), String> {
        seen.insert(url).map_err(|e| e.to_string())?;
        urls += 1;
        Ok(())
    };
    let (seq, from) = if crawl_here(state_dir) {
        let seq = crate::crawl::each_frontier_url(state_dir, &mut record)
            .map_err(|e| format!("could not rebuild from the frontier: {e}"))?;
        (seq, "the crawl's frontier")
    } else {
        let canonicalizer = Canonicalizer::new(config.url_filter.canonical_options());
        let dir = state_dir.join(INDEX_DIR);
        if dir.exists() {
            let index = SimhashIndex::open(&dir, IndexConfig::default())
                .map_err(|e| format!("could not rebuild from the index: {e}"))?;
            for id in 0..index.len() {
                let name = index
                    .get(id)
                    .map_err(|e| format!("could not rebuild from the index: {e}"))?
                    .map(|r| r.name)
                    .unwrap_or_default();
                if let Ok(url) = canonicalizer.canonicalize(&name) {
                    record(url.as_str())?;
                }
            }
        }
        // Below every journal generation left, so that all of them are replayed.
        let oldest = crate::urls::journal::read_all(state_dir)
            .map_err(|(path, problem)| format!("{}: {problem}", path.display()))?
            .first()
            .map_or(0, |g| g.seq);
        (oldest, "the pages in the index")
    };
    let moved = if path.exists() {
        std::fs::rename(&path, &aside)
            .map_err(|e| format!("could not set {} aside: {e}", path.display()))?;
        format!("; the damaged file set aside as {}", aside.display())
    } else {
        String::new()
    };
    seen.save(state_dir, seq).map_err(|e| e.to_string())?;
    Ok(format!(
        "rebuilt from the {urls} URLs of {from}, saved at checkpoint {seq}{moved}"
    ))
}

/// Renames each damaged URL journal generation, and each of another state directory, to
/// `NAME.damaged` (never deletes it).
fn set_aside_journal(state_dir: &Path) -> Result<String, String> {
    let own = ledger_id(state_dir);
    let mut moved = Vec::new();
    loop {
        let next = match crate::urls::journal::read_all(state_dir) {
            Err((path, _)) => path,
            Ok(_) => match crate::urls::journal::read_headers(state_dir)
                .into_iter()
                .find(|(_, id)| matches!((id, own), (Ok(id), Some(own)) if *id != 0 && *id != own))
            {
                Some((seq, _)) => crate::urls::journal::path_of(state_dir, seq),
                None => break,
            },
        };
        let aside = PathBuf::from(format!("{}.damaged", next.display()));
        if aside.exists() || moved.contains(&aside) {
            return Err(format!(
                "could not set {} aside: {} already exists (move it away first)",
                next.display(),
                aside.display()
            ));
        }
        std::fs::rename(&next, &aside)
            .map_err(|e| format!("could not set {} aside: {e}", next.display()))?;
        moved.push(aside);
    }
    let forgotten = "the URLs it held are fetched again, their pages found as duplicates";
    if moved.is_empty() {
        return Ok(format!("accepted as lost: {forgotten}"));
    }
    Ok(format!(
        "set aside as {}; {forgotten}",
        moved
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// Cuts outputs that run past the checkpoint back to it; `None` when none do.
fn cut_outputs_back(out: &Path, record: &CheckpointRecord) -> Option<Result<String, String>> {
    let mut cut = Vec::new();
    for (name, &expected) in OUTPUTS.iter().zip(&record.output_bytes) {
        let path = out.join(name);
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.len() > expected {
            let result = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .and_then(|f| f.set_len(expected).and_then(|()| f.sync_all()));
            if let Err(e) = result {
                return Some(Err(format!("could not cut {} back: {e}", path.display())));
            }
            cut.push(format!(
                "{name} cut back by {} bytes",
                meta.len() - expected
            ));
        }
    }
    (!cut.is_empty()).then(|| Ok(cut.join("; ")))
}
