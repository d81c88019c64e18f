//! What makes the index durable: batches handed to the writer, checkpoints and group
//! syncs, the snapshot written at close, and the close itself.

use super::*;

impl SimhashIndex {
    /// Writes the snapshot of the index as it is, if it holds enough documents and exactly
    /// what the last checkpoint's manifest records; returns whether it wrote one.
    /// [`Drop`] calls it, so a caller need not, unless it wants to know.
    pub fn write_snapshot(&mut self) -> Result<bool, IndexError> {
        self.snapshot_for_next_open(false)
    }

    /// [`SimhashIndex::write_snapshot`]; at a close (`at_close`), a snapshot in place that
    /// cannot be brought up to date in place (the one an open mapped, say) is left as it is
    /// while the documents after it are under a quarter of those it holds that have not
    /// expired. The next open adds them as tails, no more than an open after a crash adds
    /// under the background's rules (see `upkeep`), where writing the whole snapshot to
    /// another file holds the close up for a pass over the index (CHANGELOG.md, benchmark history,
    /// note 4). The next session's background snapshots follow their own rule: one is due
    /// once the documents after the one in place reach a sixteenth of it.
    fn snapshot_for_next_open(&mut self, at_close: bool) -> Result<bool, IndexError> {
        let corrupt = |problem: String| IndexError::Corrupt {
            path: self.path.clone(),
            problem,
        };
        self.wait_written()?;
        let (live, extent) = {
            let memory = self.read();
            (
                memory.docs.len() as u64,
                (memory.count(), memory.base, memory.checksum),
            )
        };
        let pending = self
            .pending
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .docs
            .len();
        if live < self.upkeep.snapshot_min() || live == 0 || pending > 0 {
            return Ok(false);
        }
        if self.upkeep.installed() == Some(extent) {
            return Ok(false);
        }
        let manifest = Manifest::read(&self.path).map_err(&corrupt)?;
        if manifest.map(|m| (m.documents, m.floor, m.rows_checksum)) != Some(extent) {
            return Ok(false);
        }
        let started = std::time::Instant::now();
        if (self.upkeep).close_in_place(&self.path, &self.plan, &self.memory) {
            tracing::debug!(
                "{}: snapshot of {live} documents brought up to date in place in {:.2} s",
                self.path.display(),
                started.elapsed().as_secs_f64()
            );
            return Ok(true);
        }
        if at_close && let Some((held, _, _)) = self.upkeep.installed() {
            // Of what it holds, what is still live: documents below the floor (expired
            // since) are not read by the next open.
            let (after, live_held) = (extent.0.saturating_sub(held), held.saturating_sub(extent.1));
            if after < live_held / upkeep::TAIL_SHARE_WHILE_RESTING {
                tracing::debug!(
                    "{}: the snapshot in place, of {held} documents, left as it is at the close: \
                     the next open adds the {after} after it as tails",
                    self.path.display()
                );
                return Ok(false);
            }
        }
        let closing = snapshot::closing_path(&self.path);
        self.upkeep.take_spare(&self.path, &closing);
        let written = snapshot::write(&closing, &self.plan, &self.memory, &|| false)
            .and_then(|w| w.ok_or_else(|| std::io::Error::other("stopped")))
            .and_then(|w| self.upkeep.install(&closing, &self.path, w.extent));
        if !matches!(written, Ok(true)) {
            let _ = std::fs::remove_file(&closing);
        }
        let written = written.map_err(|e| corrupt(format!("writing the snapshot: {e}")))?;
        tracing::debug!(
            "{}: snapshot of {live} documents written in {:.2} s",
            self.path.display(),
            started.elapsed().as_secs_f64()
        );
        Ok(written)
    }

    /// Hands the buffered documents to the background writer, which writes them to sled
    /// (see [`store`] for the order of writes, [`writer`] for when they are written).
    pub(super) fn write_pending(&self) -> Result<(), IndexError> {
        // Hold the pending lock while the batch moves, so that `get` never misses a
        // document that has left the buffer.
        let mut pending = lock(&self.pending);
        if pending.docs.is_empty() {
            return Ok(());
        }
        let first = pending.first;
        let docs = std::mem::replace(&mut pending.docs, Vec::with_capacity(WRITE_BATCH));
        pending.first = first + docs.len() as u64;
        self.background
            .send(first, docs)
            .map_err(|e| self.store_error(e))
    }

    /// Waits until every document handed to the background writer is in sled.
    pub(super) fn wait_written(&self) -> Result<(), IndexError> {
        self.background.wait().map_err(|e| self.store_error(e))
    }

    /// Makes everything inserted so far durable: writes the buffered documents and flushes
    /// sled.
    pub fn checkpoint(&self) -> Result<(), IndexError> {
        let mut durable = lock(&self.durable);
        *durable = self.checkpoint_locked()?;
        Ok(())
    }

    /// Makes every document inserted before the call durable, as a checkpoint does, unless
    /// a checkpoint that started after the insert has already done so: a group commit.
    /// Callers that answer a client (the sidecar) call it before the answer goes out; of
    /// many concurrent callers, one runs the checkpoint and the others, queued behind it,
    /// find their documents covered or share the next one.
    pub fn sync(&self) -> Result<(), IndexError> {
        let wanted = self.len();
        let mut durable = lock(&self.durable);
        if *durable >= wanted {
            return Ok(());
        }
        *durable = self.checkpoint_locked()?;
        Ok(())
    }

    /// The checkpoint itself (the caller holds `durable`); returns the documents it made
    /// durable.
    pub(super) fn checkpoint_locked(&self) -> Result<u64, IndexError> {
        // What the manifest will promise, taken first: every document counted here is
        // already in the buffer or in sled (it enters the buffer before memory), so the
        // write and the flush below make all of it durable before the manifest says so.
        let (documents, floor, rows_checksum) = {
            let memory = self.read();
            (memory.count(), memory.base, memory.checksum)
        };
        self.write_pending()?;
        self.wait_written()?;
        self.db.flush().map_err(|source| IndexError::Store {
            path: self.path.clone(),
            source: crate::db::error(source),
        })?;
        Manifest {
            format: INDEX_FORMAT_VERSION,
            fingerprint: FINGERPRINT_VERSION,
            documents,
            floor,
            rows_checksum,
            state: self.state,
        }
        .write(&self.path)
        .map_err(|e| IndexError::Corrupt {
            path: self.path.clone(),
            problem: format!("writing the manifest: {e}"),
        })?;
        self.durable_floor.store(floor, Ordering::Relaxed);
        self.upkeep.checkpointed(documents);
        Ok(documents)
    }
}

impl SimhashIndex {
    /// Closes the index: a checkpoint (every document durable), then the upkeep thread
    /// stopped and the `snapshot` written for the next open (see
    /// [`SimhashIndex::write_snapshot`]). An error says what failed; what the checkpoint
    /// made durable stays, and a failed snapshot only makes the next open rebuild the tables.
    pub fn close(mut self) -> Result<CloseReport, IndexError> {
        let started = std::time::Instant::now();
        self.closed = true;
        self.checkpoint()?;
        self.upkeep.stop();
        let snapshot_written = self.last_snapshot()?;
        Ok(CloseReport {
            documents: self.len(),
            snapshot_written,
            seconds: started.elapsed().as_secs_f64(),
        })
    }
}

impl SimhashIndex {
    /// The snapshot of a close or a drop ([`SimhashIndex::write_snapshot`]), then the spare
    /// snapshot file removed whatever it did (see [`snapshot::take_spare`]): a closed index
    /// keeps one snapshot on disk.
    fn last_snapshot(&mut self) -> Result<bool, IndexError> {
        let written = self.snapshot_for_next_open(true);
        match std::fs::remove_file(snapshot::spare_path(&self.path)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => tracing::warn!(
                "{}: the spare snapshot file cannot be removed ({e})",
                self.path.display()
            ),
            _ => {}
        }
        written
    }
}

impl Drop for SimhashIndex {
    /// The fallback of an index that was not closed ([`SimhashIndex::close`]): writes the
    /// snapshot of what the last checkpoint recorded, says in the log that the index was not
    /// closed, and logs a failure (the next open then rebuilds, as after a crash).
    fn drop(&mut self) {
        if self.closed {
            return;
        }
        self.upkeep.stop();
        match self.last_snapshot() {
            // The snapshot a close would have written: worth a line, since `close` says
            // whether it could be written and `Drop` cannot.
            Ok(true) => tracing::info!(
                "{}: the index was not closed; its snapshot was written when it was dropped",
                self.path.display()
            ),
            // Nothing a close would have written (an error path drops an index it opened).
            Ok(false) => tracing::debug!("{}: dropped without close", self.path.display()),
            Err(e) => tracing::warn!(
                "{}: the index was not closed, and when dropped {e}; the next open rebuilds the tables",
                self.path.display()
            ),
        }
    }
}
