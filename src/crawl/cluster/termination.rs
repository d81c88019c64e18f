//! When a cluster crawl is done: every live worker idle and every inbox empty, seen so at
//! two heartbeats in a row.

use super::*;

impl Worker<'_> {
    /// Whether the whole crawl is done: seen so at two heartbeats in a row (see the module
    /// documentation).
    pub(crate) fn crawl_done(&self) -> bool {
        self.done_streak >= 2
    }

    /// At a heartbeat: says whether this worker is idle, and looks whether every live
    /// worker is, with an empty inbox.
    pub(super) fn look_for_the_end(&mut self, idle: bool) -> Result<(), CrawlError> {
        let key = idle_key(&self.name, self.id());
        let ttl = self.heartbeat_every.as_millis() as u64 * 3;
        self.cluster
            .with(|con| {
                if idle {
                    redis::cmd("SET")
                        .arg(&key)
                        .arg(1)
                        .arg("PX")
                        .arg(ttl)
                        .exec(con)
                } else {
                    redis::cmd("DEL").arg(&key).exec(con)
                }
            })
            .map_err(cluster_error)?;
        if !idle {
            self.done_streak = 0;
            return Ok(());
        }
        let ids: Vec<&str> = self.ring.members().iter().map(|m| m.id.as_str()).collect();
        let keys: Vec<String> = ids.iter().map(|id| idle_key(&self.name, id)).collect();
        let flags: Vec<Option<String>> = self
            .cluster
            .with(|con| redis::cmd("MGET").arg(&keys).query(con))
            .map_err(cluster_error)?;
        let mut pipe = redis::cluster::cluster_pipe();
        for id in &ids {
            pipe.cmd("XLEN").arg(inbox::inbox_key(&self.name, id));
        }
        let lengths: Vec<u64> = self
            .cluster
            .with(|con| pipe.query(con))
            .map_err(cluster_error)?;
        if flags.iter().all(Option::is_some) && lengths.iter().all(|&l| l == 0) {
            self.done_streak += 1;
        } else {
            self.done_streak = 0;
        }
        Ok(())
    }
}
