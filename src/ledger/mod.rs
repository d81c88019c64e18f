//! The state directory's ledger: what its parts must hold, so that a part deleted, cut or
//! swapped with another directory's is told from a directory that never had it.
//!
//! A state directory has several parts (the URL filter, the URL journal, the index, a
//! crawl's database), each checked against itself: checksums find bytes that changed. A
//! part that is *gone*, or that was replaced by a whole and valid part of another state
//! directory or by an older copy, checks fine on its own, and read alone would answer
//! `new` and `unique` for everything it lost. The ledger closes that gap:
//!
//! - It names the directory: a random id, written into the parts as they are written (the
//!   URL filter's and the journal's headers, the index manifest, a crawl's checkpoint
//!   record). A part carrying another id belongs to another directory.
//! - It records lower bounds, raised after each checkpoint and never before the parts they
//!   describe are durable: the URL filter was saved at checkpoint `url-filter` or later;
//!   the index exists and its manifest holds at least `index` documents; a journaled stage
//!   (the sidecar, `dedup`) keeps a journal generation at or after the filter's; a crawl
//!   committed checkpoint `crawl` or later. Since the ledger is written after the parts, a
//!   crash between the two leaves it behind them, which its bounds allow.
//!
//! [`check`] compares the parts with the ledger before anything is opened or created:
//! every command that opens a state directory calls it, and `crawldedup verify` reports
//! what it finds part by part. A directory without a ledger is new when it holds no part,
//! and one written before the ledger existed when its parts carry no id (it is adopted);
//! parts carrying an id without a ledger mean the ledger was lost.
//!
//! Text, one `key value` per line, the last line `check` and the xxh3 of everything before
//! it, so that an operator can read it with `cat`; replaced atomically (temporary file,
//! fsync, rename, fsync of the folder).

use std::path::Path;

use crate::index::manifest::Manifest;

/// File name of the ledger, at the root of the state directory.
pub const LEDGER_FILE: &str = "state-ledger";

/// Folder of a crawl's database (frontier and checkpoint records), in the state directory.
pub(crate) const CRAWL_DB: &str = "crawl";

/// The number of the last committed checkpoint of a crawl, written (atomically) after its
/// record is flushed: the crawl database must hold at least this one.
pub const COMMITTED_FILE: &str = "crawl-committed";

/// The last checkpoint the state directory knows was committed (0 when none).
pub fn committed_seq(state_dir: &Path) -> Result<u64, LedgerError> {
    let path = state_dir.join(COMMITTED_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => text.trim().parse().map_err(|_| LedgerError::Damaged {
            problem: format!("damaged: holds {:?}, not a checkpoint number", text.trim()),
            path,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(source) => Err(LedgerError::Io { path, source }),
    }
}

/// What went wrong with the ledger, or with the parts it checks.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// A file could not be read or written (a full disk, a permission).
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file is there but cannot be read as what it should be.
    #[error("{}: {problem}", path.display())]
    Damaged {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// The parts of the state directory do not match its ledger: each part and its
    /// problem, in one line ([`refusal`]).
    #[error("{0}")]
    Refused(String),
}

const HEADER: &str = "crawldedup state ledger";
/// Format 2 adds the directory's kind and the crawl's unsettled documents; format 1 is read
/// as a crawl's when it records a crawl (unsettled from 0: the crawl's own roll-back).
const FORMAT: u64 = 2;
const FORMAT_WITHOUT_KIND: u64 = 1;

mod kind;
#[cfg(feature = "crawler")]
pub(crate) use kind::CHECKPOINT_KEY;
pub use kind::StateKind;
pub(crate) use kind::{claim, crawl_checkpoint_documents};

pub use crate::state_id::StateId;

/// Folder of the index inside the state directory.
pub const INDEX_DIR: &str = "index";

/// What a state directory's parts must hold. See the [module documentation](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ledger {
    /// The directory's id.
    pub id: StateId,
    /// The URL filter was saved at this checkpoint or a later one (0: maybe never).
    pub url_filter: u64,
    /// A journaled stage was opened here: a journal generation at or after the saved
    /// filter's checkpoint exists.
    pub journal: bool,
    /// The index was created, and its manifest records at least this many documents.
    pub index: Option<u64>,
    /// A crawl runs here, and it committed this checkpoint or a later one.
    pub crawl: Option<u64>,
    /// The program that keeps this directory (none yet for a new one); another is refused
    /// unless it asks to share it (see [`claim`]).
    pub kind: Option<StateKind>,
    /// A crawl may hold documents from this many on that its last checkpoint did not
    /// record (its work since, before a crash): every open but the crawl's own keeps only
    /// what the crawl's checkpoint recorded, or this many if more. `None`: every document
    /// in the index stays at every open (no crawl, or another command settled them since).
    pub unsettled: Option<u64>,
}

/// A part of a state directory that does not match its ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The part, as `crawldedup verify` names it: `ledger`, `URL filter`, `URL journal`,
    /// `index`, `crawl database`.
    pub part: &'static str,
    /// What is wrong, in words.
    pub problem: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.part, self.problem)
    }
}

impl Ledger {
    /// A ledger for a new (or adopted) directory: a fresh id, nothing recorded yet.
    pub fn new() -> Ledger {
        Ledger {
            id: uuid::Uuid::new_v4().as_u128(),
            url_filter: 0,
            journal: false,
            index: None,
            crawl: None,
            kind: None,
            unsettled: None,
        }
    }

    fn text(&self) -> String {
        let optional = |v: Option<u64>| v.map_or("none".to_string(), |v| v.to_string());
        crate::sealed::seal(&format!(
            "{HEADER}\nformat {FORMAT}\nid {:032x}\nurl-filter {}\njournal {}\nindex {}\n\
             crawl {}\nkind {}\nunsettled {}\n",
            self.id,
            self.url_filter,
            if self.journal { "yes" } else { "no" },
            optional(self.index),
            optional(self.crawl),
            self.kind.map_or("none", StateKind::name),
            optional(self.unsettled),
        ))
    }

    /// Reads the ledger of `state_dir`: `Ok(None)` when there is none, else the ledger or
    /// what is wrong with the file.
    pub fn read(state_dir: &Path) -> Result<Option<Ledger>, LedgerError> {
        let path = state_dir.join(LEDGER_FILE);
        match std::fs::read(&path) {
            Ok(bytes) => Ledger::parse(&bytes)
                .map(Some)
                .map_err(|problem| LedgerError::Damaged { path, problem }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(LedgerError::Io { path, source }),
        }
    }

    fn parse(bytes: &[u8]) -> Result<Ledger, String> {
        let mut fields = crate::sealed::open(bytes, HEADER, "crawldedup state ledger")?;
        let format = fields.number("format")?;
        if format != FORMAT && format != FORMAT_WITHOUT_KIND {
            return Err(format!(
                "format {format}, this build reads formats {FORMAT_WITHOUT_KIND} and {FORMAT}"
            ));
        }
        let id = fields.hex("id")?;
        let url_filter = fields.number("url-filter")?;
        let journal = match fields.text("journal")? {
            "yes" => true,
            "no" => false,
            other => return Err(format!("unreadable `journal`: {other}")),
        };
        let optional = |name: &str, value: &str| match value {
            "none" => Ok(None),
            value => value
                .parse::<u64>()
                .map(Some)
                .map_err(|_| format!("unreadable `{name}`: {value}")),
        };
        let index = optional("index", fields.text("index")?)?;
        let crawl = optional("crawl", fields.text("crawl")?)?;
        let (kind, unsettled) = if format == FORMAT_WITHOUT_KIND {
            // Written before kinds: a crawl's when it records one, which rolls back to its
            // checkpoint as it always did.
            (crawl.map(|_| StateKind::Crawl), crawl.map(|_| 0))
        } else {
            let kind = match fields.text("kind")? {
                "none" => None,
                name => Some(
                    StateKind::from_name(name)
                        .ok_or_else(|| format!("unreadable `kind`: {name}"))?,
                ),
            };
            (kind, optional("unsettled", fields.text("unsettled")?)?)
        };
        Ok(Ledger {
            id,
            url_filter,
            journal,
            index,
            crawl,
            kind,
            unsettled,
        })
    }

    /// Replaces the ledger of `state_dir` with this one, atomically and durably.
    pub fn write(&self, state_dir: &Path) -> std::io::Result<()> {
        crate::urls::seen::write_atomically(&state_dir.join(LEDGER_FILE), self.text().as_bytes())
    }
}

impl Default for Ledger {
    fn default() -> Ledger {
        Ledger::new()
    }
}

/// What the parts of a state directory say of themselves (their headers only: cheap).
#[derive(Debug, Default)]
struct Parts {
    /// The saved URL filter: its checkpoint and its directory id.
    filter: Option<Result<(u64, StateId), String>>,
    /// The journal generations: number and directory id, or what is wrong with the header.
    journal: Vec<(u64, Result<StateId, String>)>,
    /// The index folder exists.
    index: bool,
    /// The index manifest: documents and directory id.
    manifest: Option<Result<(u64, StateId), String>>,
    /// The crawl database exists.
    crawl_db: bool,
    /// The crawl's committed checkpoint number, if the file is there.
    committed: Option<Result<u64, String>>,
}

impl Parts {
    fn read(state_dir: &Path) -> Parts {
        let index_dir = state_dir.join(INDEX_DIR);
        let committed_path = state_dir.join(COMMITTED_FILE);
        Parts {
            filter: crate::urls::seen::read_header(state_dir),
            journal: crate::urls::journal::read_headers(state_dir),
            index: index_dir.exists(),
            manifest: Manifest::read(&index_dir)
                .map(|m| m.map(|m| (m.documents, m.state)))
                .transpose(),
            crawl_db: state_dir.join(CRAWL_DB).exists(),
            committed: (committed_path.exists())
                .then(|| committed_seq(state_dir).map_err(|e| e.to_string())),
        }
    }

    /// Whether any part is there at all.
    fn any(&self) -> bool {
        self.filter.is_some()
            || !self.journal.is_empty()
            || self.index
            || self.crawl_db
            || self.committed.is_some()
    }

    /// The directory ids the parts carry (0 for parts written before the ledger existed).
    fn ids(&self) -> impl Iterator<Item = StateId> + '_ {
        let filter = self.filter.iter().flatten().map(|&(_, id)| id);
        let journal = self.journal.iter().filter_map(|(_, id)| id.as_ref().ok());
        let manifest = self.manifest.iter().flatten().map(|&(_, id)| id);
        filter.chain(journal.copied()).chain(manifest)
    }
}

/// Checks the parts of `state_dir` against its ledger (see the [module
/// documentation](self)): `Ok(Some(ledger))` when they match, `Ok(None)` for a directory
/// with no ledger that may have none (new, or written before ledgers existed), and every
/// mismatch found otherwise.
pub fn check(state_dir: &Path) -> Result<Option<Ledger>, Vec<Mismatch>> {
    let parts = Parts::read(state_dir);
    let ledger = match Ledger::read(state_dir) {
        Ok(ledger) => ledger,
        Err(problem) => {
            return Err(vec![Mismatch {
                part: "ledger",
                problem: format!("damaged: {problem}"),
            }]);
        }
    };
    let Some(ledger) = ledger else {
        return match parts.ids().find(|&id| id != 0) {
            Some(id) if parts.any() => Err(vec![Mismatch {
                part: "ledger",
                problem: format!(
                    "missing: {LEDGER_FILE} is gone, while the parts here belong to state \
                     directory {id:032x}"
                ),
            }]),
            _ => Ok(None),
        };
    };
    let mut checker = Checker {
        ledger: &ledger,
        parts: &parts,
        state_dir,
        found: Vec::new(),
    };
    let filter_seq = checker.url_filter();
    checker.journal(filter_seq);
    checker.index();
    checker.crawl();
    if checker.found.is_empty() {
        Ok(Some(ledger))
    } else {
        Err(checker.found)
    }
}

/// The parts of a state directory held against its ledger, one part a method.
struct Checker<'a> {
    ledger: &'a Ledger,
    parts: &'a Parts,
    state_dir: &'a Path,
    found: Vec<Mismatch>,
}

impl Checker<'_> {
    fn mismatch(&mut self, part: &'static str, problem: String) {
        self.found.push(Mismatch { part, problem });
    }

    /// Whether a part's id is another directory's (0: written before ledgers existed).
    fn foreign(&self, id: StateId) -> bool {
        id != 0 && id != self.ledger.id
    }

    fn another(&self, id: StateId) -> String {
        format!(
            "belongs to another state directory ({id:032x}; this one is {:032x})",
            self.ledger.id
        )
    }

    /// The URL filter; returns the checkpoint it was saved at (0 when there is none).
    fn url_filter(&mut self) -> u64 {
        let saved = self.ledger.url_filter;
        match &self.parts.filter {
            None if saved > 0 => self.mismatch(
                "URL filter",
                format!(
                    "missing: {} is gone, while it was saved at checkpoint {saved} (the ledger)",
                    crate::urls::seen::SEEN_FILE
                ),
            ),
            None => {}
            Some(Err(problem)) => self.mismatch(
                "URL filter",
                format!("damaged: {}: {problem}", crate::urls::seen::SEEN_FILE),
            ),
            Some(Ok((_, id))) if self.foreign(*id) => {
                let problem = self.another(*id);
                self.mismatch("URL filter", problem);
            }
            Some(Ok((seq, _))) if *seq < saved => self.mismatch(
                "URL filter",
                format!(
                    "an older copy: saved at checkpoint {seq}, while checkpoint {saved} was \
                     saved (the ledger)"
                ),
            ),
            Some(Ok((seq, _))) => return *seq,
        }
        0
    }

    /// The URL journal: every generation this directory's, and one at or after the saved
    /// filter's checkpoint when the stage keeps a journal.
    fn journal(&mut self, filter_seq: u64) {
        for (seq, id) in &self.parts.journal {
            let path = crate::urls::journal::path_of(self.state_dir, *seq);
            match id {
                Err(problem) => self.mismatch(
                    "URL journal",
                    format!("damaged: {}: {problem}", path.display()),
                ),
                Ok(id) if self.foreign(*id) => {
                    let problem = format!("{}: {}", path.display(), self.another(*id));
                    self.mismatch("URL journal", problem);
                }
                Ok(_) => {}
            }
        }
        let kept = self.parts.journal.iter().any(|(seq, _)| *seq >= filter_seq);
        if self.ledger.journal && !kept {
            self.mismatch(
                "URL journal",
                format!(
                    "missing: no generation at or after checkpoint {filter_seq} \
                     ({}{filter_seq}), where the URLs answered `new` since the filter was \
                     saved are",
                    crate::urls::journal::JOURNAL_PREFIX
                ),
            );
        }
    }

    /// The index: its folder and manifest, with at least the documents recorded.
    fn index(&mut self) {
        let Some(documents) = self.ledger.index else {
            return;
        };
        match &self.parts.manifest {
            _ if !self.parts.index => self.mismatch(
                "index",
                format!("missing: the folder {INDEX_DIR}/ is gone, while the ledger records it"),
            ),
            None => self.mismatch(
                "index",
                format!(
                    "missing: its manifest is gone, while {documents} documents were made \
                     durable (the ledger)"
                ),
            ),
            // The index's own open names a damaged manifest.
            Some(Err(_)) => {}
            Some(Ok((_, id))) if self.foreign(*id) => {
                let problem = self.another(*id);
                self.mismatch("index", problem);
            }
            Some(Ok((held, _))) if *held < documents => self.mismatch(
                "index",
                format!(
                    "an older copy: its manifest records {held} documents, while {documents} \
                     were made durable (the ledger)"
                ),
            ),
            Some(Ok(_)) => {}
        }
    }

    /// A crawl: its database, and the committed checkpoint at least the one recorded.
    fn crawl(&mut self) {
        let Some(seq) = self.ledger.crawl else {
            return;
        };
        if !self.parts.crawl_db {
            self.mismatch(
                "crawl database",
                format!(
                    "missing: the folder {}/ is gone, while the ledger records a crawl",
                    CRAWL_DB
                ),
            );
        }
        match &self.parts.committed {
            Some(Ok(committed)) if *committed >= seq => {}
            Some(Ok(committed)) => self.mismatch(
                "crawl database",
                format!(
                    "an older copy: {} records checkpoint {committed}, while checkpoint {seq} \
                     was committed (the ledger)",
                    COMMITTED_FILE
                ),
            ),
            Some(Err(problem)) => self.mismatch("crawl database", problem.clone()),
            None if seq > 0 => self.mismatch(
                "crawl database",
                format!(
                    "missing: {} is gone, while checkpoint {seq} was committed (the ledger)",
                    COMMITTED_FILE
                ),
            ),
            None => {}
        }
    }
}

/// Checks `state_dir` against its ledger and returns it, writing a new one when the
/// directory has none (new, or written before ledgers existed): what every command that
/// opens a state directory calls first. `Err` is one line naming the part and the problem.
pub fn open(state_dir: &Path) -> Result<Ledger, LedgerError> {
    match check(state_dir) {
        Ok(Some(ledger)) => Ok(ledger),
        Ok(None) => {
            let ledger = Ledger::new();
            ledger.write(state_dir).map_err(|source| LedgerError::Io {
                path: state_dir.join(LEDGER_FILE),
                source,
            })?;
            Ok(ledger)
        }
        Err(mismatches) => Err(LedgerError::Refused(refusal(&mismatches))),
    }
}

/// Writes a ledger for the parts of `state_dir` as they are now, for `crawldedup repair`
/// once it has mended or accepted what [`check`] found: the id of the ledger there (or of
/// the parts, or a new one), and the bounds the parts meet today.
#[cfg_attr(not(feature = "crawler"), allow(dead_code))]
pub fn adopt(state_dir: &Path) -> Result<Ledger, LedgerError> {
    let parts = Parts::read(state_dir);
    let before = Ledger::read(state_dir).ok().flatten();
    let id = match before {
        Some(ledger) => ledger.id,
        None => parts
            .ids()
            .find(|&id| id != 0)
            .unwrap_or_else(|| Ledger::new().id),
    };
    let filter_seq = match parts.filter {
        Some(Ok((seq, _))) => seq,
        _ => 0,
    };
    let ledger = Ledger {
        id,
        url_filter: filter_seq,
        journal: parts.journal.iter().any(|(seq, _)| *seq >= filter_seq),
        index: parts.index.then_some(match parts.manifest {
            Some(Ok((documents, _))) => documents,
            _ => 0,
        }),
        crawl: parts.crawl_db.then_some(match parts.committed {
            Some(Ok(seq)) => seq,
            _ => 0,
        }),
        // The kind it had; else a crawl's when a crawl database is there.
        kind: before
            .and_then(|l| l.kind)
            .or(parts.crawl_db.then_some(StateKind::Crawl)),
        // Unsettled as it was; without a ledger, a crawl's roll-back to its checkpoint.
        unsettled: match before {
            Some(l) => l.unsettled,
            None => parts.crawl_db.then_some(0),
        },
    };
    ledger.write(state_dir).map_err(|source| LedgerError::Io {
        path: state_dir.join(LEDGER_FILE),
        source,
    })?;
    Ok(ledger)
}

impl std::fmt::Display for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "state directory {:032x}: URL filter saved at checkpoint {} or later",
            self.id, self.url_filter
        )?;
        if self.journal {
            write!(f, ", a URL journal kept")?;
        }
        if let Some(documents) = self.index {
            write!(f, ", index of {documents} documents or more")?;
        }
        if let Some(seq) = self.crawl {
            write!(f, ", crawl at checkpoint {seq} or later")?;
        }
        if let Some(kind) = self.kind {
            write!(f, "; {}", kind.owner())?;
        }
        Ok(())
    }
}

/// One line for the mismatches [`check`] found, with what to do.
pub fn refusal(mismatches: &[Mismatch]) -> String {
    let parts: Vec<String> = mismatches.iter().map(ToString::to_string).collect();
    format!(
        "damaged: {}; nothing was changed: run `crawldedup verify` and `crawldedup repair` on \
         it, restore it from a backup, or start a new one",
        parts.join("; ")
    )
}

#[cfg(test)]
mod tests;
