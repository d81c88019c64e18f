//! Writing the snapshots: whole to another file and put in place, or brought up to date in
//! place in the file this process wrote (see `snapshot::in_place`).

use std::path::Path;
use std::sync::RwLock;
use std::time::{Duration, Instant};

use super::super::lock;
use super::super::plan::Plan;
use super::super::snapshot::{self, Extent};
use super::super::tables::Memory;
use super::{Shared, Work};

/// Writes a snapshot and puts it in place once two checkpoints cover it, or brings the one
/// in place up to date ([`write_in_place`]); returns the time the rest after it counts
/// from (the time the write took; none after an update in place of deltas alone, whose
/// cost is by the document stored, however often they are written), or `Ok(None)` when the
/// index closed meanwhile. Unless `whole_allowed`, it writes deltas alone, or nothing when
/// there is no snapshot to bring up to date.
pub(super) fn write(
    work: &Work,
    shared: &Shared,
    stopped: &dyn Fn() -> bool,
    whole_allowed: bool,
) -> std::io::Result<Option<Duration>> {
    let started = Instant::now();
    let current = lock(&shared.state).in_place.clone();
    if let Some(current) = current {
        return write_in_place(work, shared, (stopped, whole_allowed), &current, started);
    }
    if !whole_allowed {
        return Ok(Some(Duration::ZERO));
    }
    let partial = snapshot::partial_path(&work.dir);
    take_spare(shared, &work.dir, &partial);
    let Some(written) = snapshot::write(&partial, &work.plan, &work.memory, stopped)? else {
        return Ok(None);
    };
    let ready = snapshot::ready_path(&work.dir);
    std::fs::rename(&partial, &ready)?;
    let took = started.elapsed();
    crate::faults::point("snapshot-ready");
    // In place only once the checkpoint before the last covers it too: a crawl resumes
    // from its own last checkpoint, which may be the index's one before the last.
    {
        let state = lock(&shared.state);
        let state = shared
            .wake
            .wait_while(state, |s| s.durable[1] < written.documents && !s.stop)
            .unwrap_or_else(|p| p.into_inner());
        if state.stop {
            let _ = std::fs::remove_file(&ready);
            return Ok(None);
        }
    }
    let in_place = snapshot::InPlace::of(&written, &ready);
    if !install(shared, &ready, &work.dir, written.extent, in_place)? {
        let _ = std::fs::remove_file(&ready);
        return Ok(Some(took));
    }
    crate::faults::point("snapshot-installed");
    tracing::debug!(
        "{}: snapshot of {} documents written in the background in {:.2} s ({} bytes)",
        work.dir.display(),
        written.extent.0,
        took.as_secs_f64(),
        written.bytes
    );
    let mut state = lock(&shared.state);
    state.stats.written += 1;
    state.stats.last_seconds = took.as_secs_f64();
    state.stats.last_bytes = written.bytes;
    state.stats.bytes_written += written.wrote;
    Ok(Some(took))
}

/// Brings the snapshot in place, which this process wrote, up to date in place (see
/// `snapshot::in_place`): each batch of sections is put in use once the checkpoint before
/// the last covers it, as a whole snapshot is. When the file is no longer the one in place
/// or the write fails, the next snapshot is written whole to another file. Unless
/// `whole_allowed`, the update adds deltas alone; one that writes nothing (no room in the
/// header for them) is not counted as a snapshot written.
fn write_in_place(
    work: &Work,
    shared: &Shared,
    (stopped, whole_allowed): (&dyn Fn() -> bool, bool),
    current: &snapshot::InPlace,
    started: Instant,
) -> std::io::Result<Option<Duration>> {
    {
        // Snapshots written in place have no use for the spare: its disk space goes back.
        let _state = lock(&shared.state);
        let _ = std::fs::remove_file(snapshot::spare_path(&work.dir));
    }
    let dir = &work.dir;
    // The time spent waiting for checkpoints is not writing: the rest counts only the rest.
    let mut waited = Duration::ZERO;
    let mut commit = |documents: u64,
                      extent: Extent,
                      write: &mut dyn FnMut() -> std::io::Result<()>|
     -> std::io::Result<bool> {
        commit_batch(shared, dir, Some((documents, &mut waited)), extent, write)
    };
    let updated = snapshot::update_in_place(
        dir,
        current,
        &work.plan,
        &work.memory,
        (stopped, whole_allowed),
        &mut commit,
    );
    let took = started.elapsed().saturating_sub(waited);
    let mut state = lock(&shared.state);
    match updated {
        // Held back with no room in the header for deltas, an update writes nothing: no
        // snapshot was written.
        Ok(Some((next, written))) if written.wrote == 0 => {
            state.in_place = next;
            Ok(Some(Duration::ZERO))
        }
        Ok(Some((next, written))) => {
            state.in_place = next;
            state.stats.written += 1;
            state.stats.last_seconds = took.as_secs_f64();
            state.stats.last_bytes = written.bytes;
            state.stats.bytes_written += written.wrote;
            drop(state);
            tracing::debug!(
                "{}: snapshot of {} documents written in place in the background in {:.2} s ({} bytes written, {} bytes in all)",
                dir.display(),
                written.extent.0,
                took.as_secs_f64(),
                written.wrote,
                written.bytes
            );
            Ok(Some(if written.copied_whole {
                took
            } else {
                Duration::ZERO
            }))
        }
        Ok(None) if state.stop => {
            // Stopped between two batches, the header in use may be one this update
            // committed, not `current`'s: an update from `current` (the close's) could place
            // sections over those that header names. The close writes whole or leaves it.
            state.in_place = None;
            Ok(None)
        }
        Ok(None) => {
            state.in_place = None;
            Ok(Some(took))
        }
        Err(e) => {
            state.in_place = None;
            Err(e)
        }
    }
}

/// Moves the spare snapshot file to `target` (see [`snapshot::take_spare`]) under the
/// state's lock, so never while [`install`] gives the file in place a second name.
pub(super) fn take_spare(shared: &Shared, dir: &Path, target: &Path) {
    let _state = lock(&shared.state);
    snapshot::take_spare(dir, target);
}

/// Renames the snapshot at `from` into place in `dir` and records it, under the state's
/// lock (so that the close's snapshot and a background one never pass each other), unless
/// the one in place holds as many documents or more. The file of the one it replaces is
/// kept as the spare when this process wrote it (see [`snapshot::take_spare`]). `in_place`
/// is the snapshot the next background one may bring up to date in place, if any.
pub(super) fn install(
    shared: &Shared,
    from: &Path,
    dir: &Path,
    extent: Extent,
    in_place: Option<snapshot::InPlace>,
) -> std::io::Result<bool> {
    let mut state = lock(&shared.state);
    if state
        .installed
        .is_some_and(|e| e.0 >= extent.0 && e != extent)
    {
        return Ok(false);
    }
    let keep = state.ours && state.installed.is_some();
    state.in_place = None;
    snapshot::put_in_place(from, dir, keep)?;
    state.installed = Some(extent);
    state.ours = true;
    state.stats.documents = Some(extent.0);
    state.in_place = in_place;
    Ok(true)
}

/// Brings the snapshot in place up to date in place for a close (see
/// [`super::Upkeep::close_in_place`]).
pub(super) fn close_in_place(
    shared: &Shared,
    dir: &Path,
    plan: &Plan,
    memory: &RwLock<Memory>,
) -> bool {
    let Some(current) = lock(&shared.state).in_place.clone() else {
        return false;
    };
    let mut commit =
        |_: u64,
         extent: Extent,
         write: &mut dyn FnMut() -> std::io::Result<()>|
         -> std::io::Result<bool> { commit_batch(shared, dir, None, extent, write) };
    let updated =
        snapshot::update_in_place(dir, &current, plan, memory, (&|| false, true), &mut commit);
    let mut state = lock(&shared.state);
    match updated {
        Ok(Some((next, _))) => {
            state.in_place = next;
            true
        }
        Ok(None) => false,
        Err(e) => {
            tracing::debug!(
                "{}: the snapshot could not be brought up to date in place ({e}): written whole",
                dir.display()
            );
            state.in_place = None;
            false
        }
    }
}

/// Writes a batch's header (`write`) if the file in place in `dir` is still the one this
/// process brings up to date in place, and records the extent of its rows; returns whether
/// it did. With `covered` (documents, time waited), first waits until the checkpoint before
/// the last covers those documents, as a whole snapshot does before it is put in place, and
/// adds the wait to the time; a close (`None`) has made every document durable already.
fn commit_batch(
    shared: &Shared,
    dir: &Path,
    covered: Option<(u64, &mut Duration)>,
    extent: Extent,
    write: &mut dyn FnMut() -> std::io::Result<()>,
) -> std::io::Result<bool> {
    let mut state = lock(&shared.state);
    if let Some((documents, waited)) = covered {
        let wait = Instant::now();
        state = shared
            .wake
            .wait_while(state, |s| s.durable[1] < documents && !s.stop)
            .unwrap_or_else(|p| p.into_inner());
        *waited += wait.elapsed();
        if state.stop {
            return Ok(false);
        }
    }
    if !(state.in_place.as_ref()).is_some_and(|p| p.is_in_place(dir)) {
        return Ok(false);
    }
    write()?;
    state.installed = Some(extent);
    state.stats.documents = Some(extent.0);
    Ok(true)
}
