//! What a state directory is: which program keeps it, and what another program must do to
//! share it without losing a document.
//!
//! A crawl and the other programs keep their index in different ways. A crawl rolls its
//! index back to its last checkpoint when it resumes, since its outputs and its frontier
//! go back there too and the pages after it are fetched and decided again. The sidecar,
//! `dedup` and an embedding program never roll back: an answer they gave stays. Mixed on
//! one directory without care, each undoes the other: a crawl rolls back a document that
//! `dedup` made durable, and `dedup` keeps a document of a killed crawl that the crawl will
//! decide again, so that the page is taken for a copy of itself.
//!
//! So the ledger says which program keeps the directory ([`StateKind`]); another one is
//! refused in one line naming both, unless it asks to share ([`claim`]). Sharing is made
//! safe by the ledger's `unsettled` count: a crawl sets it to what its index holds when it
//! opens, and raises it at each checkpoint. Whoever opens the directory next (the crawl
//! itself after a crash, or another program) drops the documents from
//! max(`unsettled`, the crawl's checkpoint) on, which are the crawl's own work since its
//! last checkpoint, and nothing else. Another program then clears the count, so that the
//! crawl's next open keeps what that program added.

use std::path::Path;

use super::{CRAWL_DB, Ledger, LedgerError};

/// The program that keeps a state directory, as its ledger records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StateKind {
    /// `crawldedup crawl` (one machine or a cluster worker).
    Crawl,
    /// `crawldedup serve`.
    Sidecar,
    /// `crawldedup dedup --state-dir`.
    Dedup,
    /// A program that embeds the stage ([`Dedup::open`](crate::Dedup::open), the Python
    /// package).
    Library,
}

impl StateKind {
    /// The name in the ledger.
    pub fn name(self) -> &'static str {
        match self {
            StateKind::Crawl => "crawl",
            StateKind::Sidecar => "sidecar",
            StateKind::Dedup => "dedup",
            StateKind::Library => "library",
        }
    }

    /// The kind named `name` in the ledger.
    pub fn from_name(name: &str) -> Option<StateKind> {
        [
            StateKind::Crawl,
            StateKind::Sidecar,
            StateKind::Dedup,
            StateKind::Library,
        ]
        .into_iter()
        .find(|k| k.name() == name)
    }

    /// Whose directory it is, in words.
    pub fn owner(self) -> &'static str {
        match self {
            StateKind::Crawl => "a crawl's (crawldedup crawl)",
            StateKind::Sidecar => "a sidecar's (crawldedup serve)",
            StateKind::Dedup => "a dedup run's (crawldedup dedup)",
            StateKind::Library => "a program's that embeds the stage (Dedup::open)",
        }
    }

    /// How a user asks to share a directory of another kind with this one.
    fn share_hint(self) -> &'static str {
        match self {
            StateKind::Library => "DedupBuilder::share_state(true)",
            _ => "--share-state",
        }
    }
}

/// Takes `ledger`'s directory for `kind`: a directory of no kind yet becomes `kind`'s; one
/// of another kind is refused in one line naming both, unless `share`, when it keeps its
/// kind and both keep every document (see the [module documentation](self)). Writes
/// nothing.
pub(crate) fn claim(
    state_dir: &Path,
    ledger: Ledger,
    kind: StateKind,
    share: bool,
) -> Result<Ledger, LedgerError> {
    match ledger.kind {
        None => Ok(Ledger {
            kind: Some(kind),
            ..ledger
        }),
        Some(k) if k == kind || share => Ok(ledger),
        Some(k) => Err(LedgerError::Refused(format!(
            "{}: {} state directory, not {}: refused, nothing was changed; {} shares it, \
             and both keep every document",
            state_dir.display(),
            k.owner(),
            kind.owner(),
            kind.share_hint(),
        ))),
    }
}

/// The documents the last committed checkpoint of the crawl in `state_dir` recorded in the
/// index (0 when it has none). `Err` names the problem: a crawl running there (its database
/// is locked) or a database that cannot be read.
pub(crate) fn crawl_checkpoint_documents(state_dir: &Path) -> Result<u64, String> {
    let path = state_dir.join(CRAWL_DB);
    if !path.exists() {
        return Ok(0);
    }
    let db = crate::db::open(&sled::Config::new().path(&path))
        .map_err(|e| format!("the crawl database: {}", crate::db::describe(&e)))?;
    let meta = db
        .open_tree("meta")
        .map_err(|e| format!("the crawl database: {}", crate::db::describe(&e)))?;
    let Some(record) = meta
        .get(CHECKPOINT_KEY)
        .map_err(|e| format!("the crawl database: {}", crate::db::describe(&e)))?
    else {
        return Ok(0);
    };
    #[derive(serde::Deserialize)]
    struct Documents {
        index_documents: u64,
    }
    serde_json::from_slice::<Documents>(&record)
        .map(|r| r.index_documents)
        .map_err(|e| format!("the crawl database: unreadable checkpoint record: {e}"))
}

/// The key of the checkpoint record in the crawl database's `meta` tree.
pub(crate) const CHECKPOINT_KEY: &str = "checkpoint";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_by_its_name() {
        for kind in [
            StateKind::Crawl,
            StateKind::Sidecar,
            StateKind::Dedup,
            StateKind::Library,
        ] {
            assert_eq!(StateKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(StateKind::from_name("Crawl"), None);
    }

    #[test]
    fn another_kind_is_refused_naming_both_unless_shared() {
        let dir = Path::new("/state");
        let crawl = Ledger {
            kind: Some(StateKind::Crawl),
            ..Ledger::new()
        };
        let Err(LedgerError::Refused(line)) = claim(dir, crawl, StateKind::Dedup, false) else {
            panic!("a crawl's directory opened by dedup");
        };
        assert!(
            line.contains("a crawl's") && line.contains("a dedup run's"),
            "{line}"
        );
        assert!(
            line.contains("--share-state") && !line.contains('\n'),
            "{line}"
        );
        assert_eq!(
            claim(dir, crawl, StateKind::Dedup, true).unwrap().kind,
            Some(StateKind::Crawl)
        );
        assert_eq!(
            claim(dir, crawl, StateKind::Crawl, false).unwrap().kind,
            Some(StateKind::Crawl)
        );
        let new = claim(dir, Ledger::new(), StateKind::Sidecar, false).unwrap();
        assert_eq!(new.kind, Some(StateKind::Sidecar));
    }
}
