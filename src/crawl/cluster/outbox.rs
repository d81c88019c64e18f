//! What a worker sends after each checkpoint (links for others' inboxes, the filter's
//! inserts, the pending mirror, the index commits, the inbox acknowledgements): written
//! into the checkpoint first, sent once it committed.

use super::*;

impl Worker<'_> {
    /// Before a checkpoint: writes into it what it will send once committed (with what an
    /// earlier checkpoint could not send). No network.
    pub(crate) fn before_checkpoint(
        &mut self,
        frontier: &Frontier,
        totals: &CheckpointRecord,
        meta: &sled::Tree,
    ) -> Result<(), CrawlError> {
        let mut publish = self.publish.take().unwrap_or_default();
        // The totals are still the last checkpoint's; a publish carried over from one that
        // could not send keeps its own.
        publish.before = publish.before.or(Some((totals.output_bytes, totals.warc)));
        publish.seq = totals.seq + 1;
        publish.clear_recent = true;
        publish.handoffs.append(&mut self.outbox);
        publish.docs.append(&mut self.kept);
        publish.acks.append(&mut self.received);
        for (task, state) in frontier.changed() {
            let url = task.url.to_string();
            match state {
                TaskState::Pending | TaskState::InFlight => {
                    publish
                        .mirror
                        .push((url, Some((task.depth, task.priority))));
                }
                TaskState::Done | TaskState::Failed | TaskState::Moved => {
                    publish.mirror.push((url, None));
                }
            }
        }
        let counts = frontier.counts();
        publish.stats = serde_json::json!({
            "worker": self.id(),
            "share": self.share(),
            "fetched": totals.fetched,
            "stored": totals.stored,
            "duplicates": totals.duplicates,
            "failures": totals.failures,
            "pending": counts.pending,
            "moved": counts.moved,
            "checkpoint": totals.seq + 1,
            "at": std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        })
        .to_string();
        let bytes = serde_json::to_vec(&publish).map_err(|e| {
            CrawlError::database(sled::Error::Io(std::io::Error::other(format!(
                "{PUBLISH_KEY:?}: {e}"
            ))))
        })?;
        meta.insert(PUBLISH_KEY, bytes)
            .map_err(CrawlError::database)?;
        self.publish = Some(publish);
        Ok(())
    }

    /// After a checkpoint committed: its URLs into the cluster's filter and the pending
    /// mirror, its documents committed, its inbox entries acknowledged, its figures shown.
    pub(crate) fn after_checkpoint(&mut self, meta: &sled::Tree) -> Result<(), CrawlError> {
        let Some(publish) = self.publish.take() else {
            return Ok(());
        };
        if !publish.docs.is_empty() {
            crate::faults::point("cluster-before-commit-marks");
        }
        // Kept until everything went: a failure leaves it for the next checkpoint (or
        // start) to send again.
        if let Err(e) = self.send(&publish) {
            self.publish = Some(publish);
            return Err(e);
        }
        meta.remove(PUBLISH_KEY).map_err(CrawlError::database)?;
        Ok(())
    }

    pub(super) fn send(&self, publish: &Publish) -> Result<(), CrawlError> {
        // The commit marks first: until they are in, a worker killed now has its
        // checkpoint's pages durable in its outputs while the others take them for lost
        // (see the windows in docs/cluster.md), so that window is kept to one round trip.
        self.index.commit(&publish.docs).map_err(cluster_error)?;
        inbox::send_by_owner(
            self.cluster,
            &self.name,
            &self.ring,
            publish.handoffs.clone(),
        )
        .map_err(cluster_error)?;
        self.mirror(&publish.mirror)?;
        self.inbox
            .acknowledge(&publish.acks)
            .map_err(cluster_error)?;
        if publish.clear_recent {
            self.cluster
                .with(|con| {
                    redis::cmd("DEL")
                        .arg(recent_key(&self.name, self.id()))
                        .exec(con)
                })
                .map_err(cluster_error)?;
        }
        if !publish.stats.is_empty() {
            self.cluster
                .with(|con| {
                    redis::cmd("HSET")
                        .arg(stats_key(&self.name))
                        .arg(self.id())
                        .arg(&publish.stats)
                        .exec(con)
                })
                .map_err(cluster_error)?;
        }
        Ok(())
    }

    /// Applies `changes` to this worker's mirror of its pending URLs (the last change of a
    /// URL wins).
    pub(super) fn mirror(
        &self,
        changes: &[(String, Option<(u32, u32)>)],
    ) -> Result<(), CrawlError> {
        let key = pending_key(&self.name, self.id());
        let mut last = std::collections::HashMap::new();
        for (url, change) in changes {
            last.insert(url.as_str(), *change);
        }
        let (pending, finished): (Vec<_>, Vec<_>) =
            last.into_iter().partition(|(_, change)| change.is_some());
        for chunk in pending.chunks(1000) {
            let mut cmd = redis::cmd("HSET");
            cmd.arg(&key);
            for (url, change) in chunk {
                let (depth, priority) = change.unwrap_or_default();
                cmd.arg(*url).arg(format!("{depth} {priority}"));
            }
            self.cluster
                .with(|con| cmd.exec(con))
                .map_err(cluster_error)?;
        }
        for chunk in finished.chunks(1000) {
            let urls: Vec<&str> = chunk.iter().map(|(url, _)| *url).collect();
            self.cluster
                .with(|con| redis::cmd("HDEL").arg(&key).arg(&urls).exec(con))
                .map_err(cluster_error)?;
        }
        Ok(())
    }
}
