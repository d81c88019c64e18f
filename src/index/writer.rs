//! The background writer: batches of new documents written to sled off the inserting thread.
//!
//! A batch of [`super::WRITE_BATCH`] unique documents takes about a microsecond a document
//! to encode and write to sled; on the inserting thread that was a sixth of the time of a
//! check-and-insert at 10 M documents. The index hands each full batch to this writer and
//! goes on deciding; the writer writes the batches in order, one at a time, with at most
//! [`WAITING`] more waiting (a slower disk holds inserts back rather than piling up memory;
//! a few absorb the writer's pauses, when a busy machine runs another thread in its
//! place). Until a batch is written, [`BatchWriter::get`] finds its documents; a checkpoint
//! first waits for every batch handed over ([`BatchWriter::wait`]), so what a checkpoint
//! promises is unchanged. A failed write stops the writer: its batch and the later ones stay readable in memory,
//! and every later hand-over and wait reports the failure, so a checkpoint never claims
//! documents that did not reach the database.

use std::collections::VecDeque;
use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex};

use super::store::{Store, StoreError};
use super::{DocId, DocRecord};

/// Batches that may wait for the writer while it writes one: past them, a hand-over waits.
const WAITING: usize = 4;

/// Documents written to sled in one step: a batch is written in pieces ending on multiples
/// of this id. Each step holds sled's lock against every reader of the database while it
/// lasts, and the deciding thread reads the name of each near-duplicate's original:
/// written whole, a batch of 8,192 documents held that read up to tens of milliseconds
/// (a tenth of the 10 M-document scale bench's time).
const PIECE: u64 = 1024;

/// Writes `docs` (ids from `first`) in pieces of at most [`PIECE`] ids, each on whole
/// chunks of both trees but the first.
fn write_in_pieces(store: &Store, first: DocId, docs: &[DocRecord]) -> Result<(), StoreError> {
    let mut at = 0usize;
    while at < docs.len() {
        let id = first + at as u64;
        let end = ((id / PIECE + 1) * PIECE - first).min(docs.len() as u64) as usize;
        store.append(id, &docs[at..end])?;
        at = end;
    }
    Ok(())
}

/// Batches handed over and not yet written, oldest first, and the first failure.
#[derive(Default)]
struct State {
    in_flight: VecDeque<(DocId, Arc<Vec<DocRecord>>)>,
    failed: Option<StoreError>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// Signalled when a batch is written or the writer fails.
    changed: Condvar,
}

/// The writer thread and what it shares with the index.
pub(super) struct BatchWriter {
    shared: Arc<Shared>,
    sender: Option<SyncSender<(DocId, Arc<Vec<DocRecord>>)>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BatchWriter {
    /// Starts the writer thread for `store`.
    pub(super) fn start(store: Store) -> std::io::Result<BatchWriter> {
        let shared = Arc::new(Shared::default());
        let (sender, batches) = sync_channel::<(DocId, Arc<Vec<DocRecord>>)>(WAITING);
        let thread = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("index-writer".into())
                .spawn(move || {
                    for (first, docs) in batches {
                        let result = write_in_pieces(&store, first, &docs);
                        let mut state = lock(&shared.state);
                        match result {
                            Ok(()) => {
                                state.in_flight.pop_front();
                            }
                            Err(e) => {
                                state.failed = Some(e);
                                shared.changed.notify_all();
                                return;
                            }
                        }
                        shared.changed.notify_all();
                    }
                })?
        };
        Ok(BatchWriter {
            shared,
            sender: Some(sender),
            thread: Some(thread),
        })
    }

    /// Hands the documents from id `first` on to the writer; they are readable through
    /// [`BatchWriter::get`] from now until they are written. Blocks while [`WAITING`] batches
    /// are already waiting. Fails if an earlier write failed.
    pub(super) fn send(&self, first: DocId, docs: Vec<DocRecord>) -> Result<(), StoreError> {
        let docs = Arc::new(docs);
        {
            let mut state = lock(&self.shared.state);
            if let Some(failed) = &state.failed {
                return Err(failed.clone());
            }
            state.in_flight.push_back((first, docs.clone()));
        }
        let sent = self
            .sender
            .as_ref()
            .is_some_and(|sender| sender.send((first, docs)).is_ok());
        if sent {
            Ok(())
        } else {
            // The thread ended: it failed, and said why.
            Err(lock(&self.shared.state).failed.clone().unwrap_or_else(|| {
                StoreError::Sled(sled::Error::Io(std::io::Error::other(
                    "the index's writer thread ended",
                )))
            }))
        }
    }

    /// The document `id` if it is in a batch not yet written.
    pub(super) fn get(&self, id: DocId) -> Option<DocRecord> {
        let state = lock(&self.shared.state);
        state.in_flight.iter().find_map(|(first, docs)| {
            let at = usize::try_from(id.checked_sub(*first)?).ok()?;
            docs.get(at).cloned()
        })
    }

    /// Waits until every batch handed over is written; fails if a write failed.
    pub(super) fn wait(&self) -> Result<(), StoreError> {
        let mut state = lock(&self.shared.state);
        loop {
            if let Some(failed) = &state.failed {
                return Err(failed.clone());
            }
            if state.in_flight.is_empty() {
                return Ok(());
            }
            state = self
                .shared
                .changed
                .wait(state)
                .unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Drop for BatchWriter {
    /// Lets the writer finish the batches handed over, then ends it.
    fn drop(&mut self) {
        self.sender.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(first: u64, n: u64) -> Vec<DocRecord> {
        (first..first + n)
            .map(|i| DocRecord {
                name: format!("doc-{i}"),
                ..DocRecord::default()
            })
            .collect()
    }

    #[test]
    fn batches_are_readable_until_written_and_a_failed_write_is_reported_by_every_later_call() {
        let dir = tempfile::tempdir().unwrap();
        let db = sled::Config::new().path(dir.path()).open().unwrap();
        let store = Store::open(&db).unwrap();
        let writer = BatchWriter::start(store.clone()).unwrap();
        writer.send(0, docs(0, 40)).unwrap();
        writer.wait().unwrap();
        assert_eq!(writer.get(3), None, "written, so no longer in flight");
        assert_eq!(
            store.get(3, None).ok().flatten().map(|d| d.name),
            Some("doc-3".into())
        );
        // A batch out of place (ids from 50, while 40 are stored) fails to write.
        writer.send(50, docs(50, 5)).unwrap();
        let failure = format!("{:?}", writer.wait().unwrap_err());
        assert!(failure.contains("expected"), "{failure}");
        // Its documents are still readable, and every later call reports the failure.
        assert_eq!(writer.get(52).map(|d| d.name), Some("doc-52".into()));
        let again = |r: Result<(), StoreError>| format!("{:?}", r.unwrap_err());
        assert_eq!(again(writer.send(55, docs(55, 1))), failure);
        assert_eq!(again(writer.wait()), failure);
    }
}
