//! The documents this worker entered last, kept in memory with the verdicts it gave them,
//! so that a page whose candidates and digest holder are all among them is decided in its
//! one round trip.
//!
//! What a candidate's judgement reads from Redis (its record, whether it is lost, its
//! verdict) lies in slots of the candidate's id, apart from the buckets that name it, so no
//! script of the page's round trip can read it: a page with candidates takes a second
//! round trip for them. For a document of this worker's, the worker knows all of it
//! already:
//! - its record, as it wrote it (records never change);
//! - that it is not lost: its incarnation is this one, alive while it decides;
//! - its verdict, as this worker decided it (`None` while it is being decided, as Redis
//!   would answer before the verdict is written).
//!
//! The host ring gives each host to one worker, so the pages of a site and their copies
//! (the same page under tracking parameters, a print version, a page with comments
//! appended) are mostly one worker's, found among its last pages. A copy on another
//! worker's host, or of a page older than the last [`OWN_DOCS`], is read from Redis, and
//! remembered when what was read of it is final (`settled.rs`).
//!
//! One difference from reading Redis: a verdict another worker wrote over this worker's
//! (a `yield` set by one that believed this incarnation dead, or by
//! [`SharedIndex::reconcile`](super::SharedIndex::reconcile)) is not seen here. Such a
//! verdict is already one the rules never rely on: this worker's commit writes `keep` over
//! it, and a page that yields to a document that yielded is kept in the document's stead
//! by its original (the window the module documentation describes), never lost.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use crate::index::{DocId, DocRecord};

/// Documents of this worker's kept in memory: its last this many. A record is at most
/// about 7 KB (a profile of 256 lines of 25 bytes, its sketch, a small text's shingle set),
/// so this is at most about 28 MB a worker, and a few MB for pages of a few dozen lines.
pub const OWN_DOCS: usize = 4096;

/// Documents known without a round trip, with their verdicts, the oldest going first: this
/// worker's last [`OWN_DOCS`], or other workers' settled ones (`settled.rs`).
pub(super) struct KnownDocs {
    order: VecDeque<DocId>,
    docs: HashMap<DocId, Known>,
    capacity: usize,
}

/// One document known without a round trip.
#[derive(Clone)]
pub(super) struct Known {
    /// Its record, as written.
    pub(super) record: Arc<DocRecord>,
    /// `Some(true)` kept, `Some(false)` yielded, `None` not yet decided.
    pub(super) keep: Option<bool>,
}

impl Known {
    /// Its verdict as Redis keeps it (`keep` or `yield`), `None` before it is decided.
    pub(super) fn verdict(&self) -> Option<String> {
        self.keep
            .map(|keep| if keep { "keep" } else { "yield" }.to_string())
    }
}

impl KnownDocs {
    /// Memory for the last `capacity` documents.
    pub(super) fn new(capacity: usize) -> KnownDocs {
        KnownDocs {
            order: VecDeque::new(),
            docs: HashMap::new(),
            capacity,
        }
    }

    /// Document `id`, entered by this worker with `record`, not yet decided.
    pub(super) fn entered(&mut self, id: DocId, record: Arc<DocRecord>) {
        self.remember(id, Known { record, keep: None });
    }

    /// Document `id` as `known`; the oldest goes when there are more than the capacity.
    pub(super) fn remember(&mut self, id: DocId, known: Known) {
        if self.docs.insert(id, known).is_none() {
            self.order.push_back(id);
        }
        while self.order.len() > self.capacity {
            if let Some(old) = self.order.pop_front() {
                self.docs.remove(&old);
            }
        }
    }

    /// Document `id` was decided: kept or yielded.
    pub(super) fn decided(&mut self, id: DocId, keep: bool) {
        if let Some(own) = self.docs.get_mut(&id) {
            own.keep = Some(keep);
        }
    }

    /// Document `id`, when it is known.
    pub(super) fn get(&self, id: DocId) -> Option<Known> {
        self.docs.get(&id).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_documents_are_kept_with_their_verdicts_and_the_oldest_go() {
        let record = Arc::new(DocRecord::new("a", "a text", &crate::Fingerprint::of("a")));
        let mut own = KnownDocs::new(OWN_DOCS);
        for id in 1..=OWN_DOCS as u64 + 10 {
            own.entered(id, Arc::clone(&record));
        }
        own.decided(20, true);
        own.decided(21, false);
        assert!(own.get(10).is_none(), "the oldest went");
        assert!(own.get(11).is_some());
        assert_eq!(own.get(20).unwrap().verdict().as_deref(), Some("keep"));
        assert_eq!(own.get(21).unwrap().verdict().as_deref(), Some("yield"));
        assert_eq!(own.get(22).unwrap().verdict(), None);
        assert_eq!(own.docs.len(), OWN_DOCS);
    }
}
