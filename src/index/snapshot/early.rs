//! The snapshot's check, started on a thread of its own before the database opens.
//!
//! Opening a large index after a crash is mostly two waits that need nothing from each
//! other: sled's recovery, which reads its whole log since it was last opened, and the
//! snapshot's check, which reads every section to test its checksum and decodes the rows
//! (each up to a second or two at 10 M documents; CHANGELOG.md, benchmark history, note 4). The check needs
//! the manifest and the layout, and both are at hand without sled: the manifest is a file
//! of its own and the snapshot's header names its layout. So the open starts the check
//! first ([`Early::start`]) and opens sled meanwhile.
//!
//! What the check found is only used when nothing it relied on has changed by the time
//! sled is open ([`Early::take`]): the manifest read again is the one it read, sled's
//! stored layout is the one the header named, and the file in place is the one it read
//! (same device and inode, length and time of change, before and after the check). No check
//! starts while a live process holds the database (its snapshots may be written meanwhile),
//! and the check only reads: any file it finds unusable is set aside, as before, by the
//! open that holds the database. In every other case the open checks the
//! snapshot itself, as it did before this thread existed: the thread can make an open
//! faster, never different.
//!
//! When the check is done before sled is open, the thread goes on with the memory of the
//! tables' tails ([`tail_room`]): the open builds each tail (the entries of the documents
//! after the table's copy) into lines of fresh memory, and fresh memory comes slowly,
//! page by page, so the thread faults it in while sled still recovers. It stops as soon as the open waits for it.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::super::manifest::Manifest;
use super::super::memory::{CacheLine, ready_lines};
use super::super::plan::Plan;
use super::super::tables::Memory;
use super::files::{Stamp, stamp};
use super::read::{self, Refused};
use super::{Extent, path};

/// What opening a snapshot gives: the in-memory index, the documents each table's copy
/// holds, and the snapshot's extent (see [`read::open`]).
pub(in crate::index) type Opened = (Memory, Vec<u64>, Extent);

/// Memory for each table's tail, faulted in ahead (see [`tail_room`]).
pub(in crate::index) type TailRoom = Vec<Vec<CacheLine>>;

/// The check of the snapshot in place, running or done.
pub(in crate::index) struct Early {
    handle: Option<std::thread::JoinHandle<Option<Checked>>>,
    /// Set when the open waits for the check: the thread makes no more room for tails.
    waited: Arc<AtomicBool>,
}

/// What the check found, and what it relied on.
struct Checked {
    manifest: Manifest,
    /// (k, blocks) of the plan the check used: the header's.
    layout: (u32, usize),
    stamp: Stamp,
    outcome: Result<Opened, Refused>,
    room: TailRoom,
}

impl Early {
    /// Starts the check of the snapshot in `dir`, if there is one and no live process holds
    /// the database: a process that has the index open may write over or cut the file a
    /// check would be reading (the open then fails on sled's lock anyway). A thread that
    /// cannot be started only means no early check.
    pub(in crate::index) fn start(dir: &Path) -> Early {
        let waited = Arc::new(AtomicBool::new(false));
        if crate::db::held(dir) {
            return Early {
                handle: None,
                waited,
            };
        }
        let dir = dir.to_path_buf();
        let stop = waited.clone();
        let handle = std::thread::Builder::new()
            .name("index-open".into())
            .spawn(move || check(&dir, &stop))
            .ok();
        Early { handle, waited }
    }

    /// What the check found, when it was found for this `plan` and this `manifest` on the
    /// file still in place in `dir`, with the room it made for the tails; `None` otherwise
    /// (or when no check ran), and the caller opens the snapshot itself. Waits for the check
    /// to end.
    pub(in crate::index) fn take(
        mut self,
        dir: &Path,
        plan: &Plan,
        manifest: &Manifest,
    ) -> Option<(Result<Opened, Refused>, TailRoom)> {
        self.waited.store(true, Ordering::Relaxed);
        let checked = self.handle.take()?.join().ok()??;
        checked
            .usable(dir, plan, manifest)
            .then_some((checked.outcome, checked.room))
    }
}

impl Checked {
    /// Whether the check was made for this `plan` and this `manifest`, on the file still in
    /// place in `dir`.
    fn usable(&self, dir: &Path, plan: &Plan, manifest: &Manifest) -> bool {
        self.manifest == *manifest
            && self.layout == (plan.k, plan.blocks.len())
            && stamp(&path(dir)) == Some(self.stamp)
    }
}

impl Drop for Early {
    /// An open that failed before it took the check's result waits for the thread to end
    /// before it returns its error.
    fn drop(&mut self) {
        self.waited.store(true, Ordering::Relaxed);
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

/// The check itself: the manifest, the header's layout, then the snapshot opened as the
/// open would open it, and room for the tails until `waited` is set; `None` when any of
/// them is missing or the file changed meanwhile.
fn check(dir: &Path, waited: &AtomicBool) -> Option<Checked> {
    let file = path(dir);
    let before = stamp(&file)?;
    let manifest = Manifest::read(dir).ok()??;
    let (k, blocks) = read::layout(dir)?;
    let plan = Plan::with_blocks(k, blocks)?;
    // Room for the rows the database holds after the manifest's (documents stored after
    // the last checkpoint): untouched room costs address space only, and rows read after
    // the snapshot's that do not fit move every row once.
    let live = manifest.documents.saturating_sub(manifest.floor);
    let outcome = read::open(dir, &plan, &manifest, live + live / 4);
    let room = match &outcome {
        Ok((memory, held, _)) => tail_room(memory, held, manifest.documents, waited),
        Err(_) => TailRoom::new(),
    };
    (stamp(&file) == Some(before)).then_some(Checked {
        manifest,
        layout: (plan.k, plan.blocks.len()),
        stamp: before,
        outcome,
        room,
    })
}

/// Memory for the tail of each table of `memory` (in the order of `held`, the documents
/// each table's copy holds), faulted in now: lines for the entries of the documents after
/// the copy up to `documents`, the manifest's count (the database may hold a few more,
/// stored after its last checkpoint; their entries go into the room left, or the lines
/// grow). Stops at the next table once `waited` is set; the tables left get fresh memory
/// as the open builds them.
fn tail_room(memory: &Memory, held: &[u64], documents: u64, waited: &AtomicBool) -> TailRoom {
    let mut room = TailRoom::new();
    for &held in held {
        if waited.load(Ordering::Relaxed) {
            break;
        }
        room.push(ready_lines(documents.saturating_sub(held.max(memory.base))));
    }
    room
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::fingerprint::Simhash;
    use crate::index::{DocRecord, IndexConfig, SimhashIndex};

    /// Adds documents `from..to` to the index in `dir`, checkpoints, writes its snapshot
    /// and closes it; returns its manifest and plan.
    fn add(dir: &Path, from: u64, to: u64) -> (Manifest, Plan) {
        let mut index = SimhashIndex::open(dir, IndexConfig::default())
            .unwrap()
            .with_snapshot_min_documents(0);
        for i in from..to {
            let simhash = Simhash(i.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17));
            let name = format!("doc-{i}");
            (index.insert(DocRecord {
                simhash,
                name,
                ..DocRecord::default()
            }))
            .unwrap();
        }
        index.checkpoint().unwrap();
        assert!(index.write_snapshot().unwrap());
        let plan = index.plan.clone();
        drop(index);
        (Manifest::read(dir).unwrap().unwrap(), plan)
    }

    #[test]
    fn the_check_started_before_the_database_opens_is_used_only_on_what_it_read() {
        let dir = tempfile::tempdir().unwrap();
        // No snapshot: no check.
        assert!(check(dir.path(), &AtomicBool::new(false)).is_none());
        let (manifest, plan) = add(dir.path(), 0, 3_000);
        // Nothing changed: the open takes what the check found.
        let early = Early::start(dir.path());
        let (memory, _, extent) = (early.take(dir.path(), &plan, &manifest))
            .expect("the check's outcome")
            .0
            .unwrap_or_else(|_| panic!("the snapshot refused"));
        assert_eq!((memory.count(), extent.0), (3_000, 3_000));
        // Found for another layout than the database's: not used.
        let checked = check(dir.path(), &AtomicBool::new(false)).unwrap();
        let blocks = plan.blocks.len() as u32;
        let other = Plan::with_blocks(plan.k, blocks + 1).unwrap();
        assert!(checked.usable(dir.path(), &plan, &manifest));
        assert!(!checked.usable(dir.path(), &other, &manifest));
        // The index changed after the check (a newer snapshot and manifest): not used, with
        // either manifest.
        let (newer, _) = add(dir.path(), 3_000, 4_000);
        assert!(!checked.usable(dir.path(), &plan, &newer));
        assert!(!checked.usable(dir.path(), &plan, &manifest));
        let again = check(dir.path(), &AtomicBool::new(false)).unwrap();
        assert!(again.usable(dir.path(), &plan, &newer));
        // While a live process holds the database, no check starts.
        let open = SimhashIndex::open(dir.path(), IndexConfig::default()).unwrap();
        assert!(Early::start(dir.path()).handle.is_none());
        drop(open);
        // The file in place removed: not used.
        std::fs::remove_file(path(dir.path())).unwrap();
        assert!(!again.usable(dir.path(), &plan, &newer));
    }

    #[test]
    fn room_is_made_for_each_tail_up_to_the_manifest_until_the_open_waits() {
        use crate::index::memory::SLOTS;
        let dir = tempfile::tempdir().unwrap();
        let (manifest, plan) = add(dir.path(), 0, 3_000);
        let Ok((memory, held, _)) = read::open(dir.path(), &plan, &manifest, 0) else {
            panic!("the snapshot refused");
        };
        assert_eq!(held.len(), plan.tables.len() + crate::fingerprint::BANDS);
        // Each table's copy holds 3,000: room for the 2,000 more the manifest counts.
        let waited = AtomicBool::new(false);
        let room = tail_room(&memory, &held, 5_000, &waited);
        assert_eq!(room.len(), held.len());
        for lines in &room {
            let slots = lines.len() * SLOTS;
            assert!(slots as f64 * 0.6 <= 2_000.0 && 2_000 <= slots, "{slots}");
            assert!(lines.capacity() > lines.len());
        }
        // A table whose copy holds the manifest's count needs none.
        assert!(
            tail_room(&memory, &held, 3_000, &waited)
                .iter()
                .all(Vec::is_empty)
        );
        // Once the open waits, no more is made.
        waited.store(true, Ordering::Relaxed);
        assert!(tail_room(&memory, &held, 5_000, &waited).is_empty());
    }
}
