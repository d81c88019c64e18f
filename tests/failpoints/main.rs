//! The tests that hold a process at a fault point of `crawldedup::faults` (the `failpoints`
//! feature) and kill it there (SIGKILL), in a binary of their own. Each starts a test of
//! this binary again as its child, with `CRAWLDEDUP_PAUSE_AT` naming the point; the child
//! says when it is held there, and is killed. The kill tests that need no fault point
//! (killed after a checkpoint, or after a time) are in the `it` binary, and so are the
//! Redis Cluster trials, whose workers are the `crawldedup` binary held at a point of its
//! own. The helpers are the `it` binary's (`tests/it/common/`).

#[path = "../it/common/child.rs"]
mod child;
#[path = "../it/common/documents.rs"]
mod documents;

#[cfg(feature = "cli")]
#[path = "../it/common/archive_checks.rs"]
mod archive_checks;
#[cfg(feature = "cli")]
#[path = "../it/common/mod.rs"]
mod common;
#[cfg(feature = "cli")]
#[path = "../it/common/warc.rs"]
mod warc;

#[cfg(feature = "cli")]
mod crawl;
mod index;
