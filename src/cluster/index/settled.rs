//! Other workers' documents whose state the rules read can no longer change, kept in
//! memory once a page's second round trip has read them, so that the next page with the
//! same candidates (the copies of a syndicated story, found on many hosts) or the same
//! digest holder (a mirrored page) is decided in its one round trip.
//!
//! A candidate another worker entered is judged on its record, on whether it is lost and
//! on its verdict (`decide.rs`). Its record never changes; the other two change only while
//! its page is undecided or not yet durable. A document is *settled* when what this worker
//! read of it is final:
//! - **committed**: its worker's checkpoint holds its page, so it is never lost, and it was
//!   kept (a worker commits only pages it kept, writing `keep` with the mark);
//! - **of no crawl**: entered by an index with no owner (`crawldedup dedup --cluster`, the
//!   sidecar), which no failure makes lost, and its verdict written, `keep` or `yield`;
//! - **yielded**: its own worker, alive, found it a duplicate. Only a worker that was
//!   believed dead can later turn such a verdict to `keep` (its restart commits what its
//!   checkpoint held after another worker marked it `yield` as lost).
//!
//! A document kept and not yet committed is never settled: its worker may die before its
//! checkpoint, and a lost document must not be an original.
//!
//! What memory cannot see, as with the worker's own documents (`own.rs`): a verdict turned
//! later. A `yield` that [`SharedIndex::reconcile`](super::SharedIndex::reconcile) writes
//! over a committed copy leaves a page free to be called a near copy of that copy, whose
//! page is in its worker's outputs; a `yield` turned `keep` by a restarted worker's commit
//! leaves a page free to keep beside it. Either way a page is never lost: the worst is a
//! duplicate kept, as after a failover, and reconciling names it.

use super::own::Known;

/// Other workers' settled documents kept in memory: this many, the oldest read going first.
/// A record is at most about 7 KB, so this is at most about 28 MB a worker, as for its own
/// documents ([`super::OWN_DOCS`]).
pub const SETTLED_DOCS: usize = 4096;

/// What a document's second-round-trip replies say of it, when it is settled: `Some(keep)`
/// for a document this worker may judge from memory from now on, `None` for one it must
/// read again next time. `committed` is its commit mark, `owned` whether its owner key was
/// there, `verdict` its verdict as read; the document was found not lost.
pub(super) fn settled(committed: bool, owned: bool, verdict: Option<&str>) -> Option<bool> {
    match verdict {
        // A mark written with `keep` (a commit pipeline may reach the two nodes apart), or a
        // `yield` that reconciling wrote over it.
        _ if committed => Some(verdict != Some("yield")),
        Some("keep") if !owned => Some(true),
        Some("yield") => Some(false),
        _ => None,
    }
}

/// A settled document of another worker's, as memory keeps it: its record and verdict.
pub(super) fn known(record: std::sync::Arc<crate::index::DocRecord>, keep: bool) -> Known {
    Known {
        record,
        keep: Some(keep),
    }
}

#[cfg(test)]
mod tests {
    use super::settled;

    #[test]
    fn only_a_final_state_is_settled() {
        // Committed: kept, unless reconciling marked it a copy since.
        assert_eq!(settled(true, true, Some("keep")), Some(true));
        assert_eq!(settled(true, true, None), Some(true));
        assert_eq!(settled(true, true, Some("yield")), Some(false));
        // Of no crawl: final once its verdict is written.
        assert_eq!(settled(false, false, Some("keep")), Some(true));
        assert_eq!(settled(false, false, Some("yield")), Some(false));
        assert_eq!(settled(false, false, None), None);
        // A crawl's page kept and not yet durable may still be lost: read again.
        assert_eq!(settled(false, true, Some("keep")), None);
        assert_eq!(settled(false, true, None), None);
        // A crawl's page its live worker found a duplicate.
        assert_eq!(settled(false, true, Some("yield")), Some(false));
    }
}
