//! A worker of a cluster crawl moves work when the live set changes: pending URLs of hosts
//! that moved go to their new owners, and a gone worker's pending URLs and recent list are
//! taken over.

use super::*;

impl Worker<'_> {
    /// Hands the pending URLs of hosts this worker no longer owns to their owners.
    pub(super) fn rebalance(&mut self, frontier: &mut Frontier) {
        let leaving: Vec<String> = frontier
            .hosts()
            .filter(|h| !self.owns(h))
            .map(str::to_string)
            .collect();
        let mut moved = 0;
        for host in leaving {
            for task in frontier.take_host(&host) {
                moved += 1;
                self.outbox.push((
                    host.clone(),
                    Handoff {
                        url: task.url.to_string(),
                        depth: task.depth,
                        priority: task.priority,
                        moved: true,
                    },
                ));
            }
        }
        if moved > 0 {
            tracing::info!(
                "worker {}: {moved} pending URLs move to other workers",
                self.id()
            );
        }
    }

    /// Moves the inbox and pending URLs of workers that are gone to the owners in the
    /// current ring (once, under a lock: another worker may be at it).
    pub(super) fn reroute_gone(&mut self) -> Result<(), CrawlError> {
        let known: Vec<String> = self
            .cluster
            .with(|con| redis::cmd("SMEMBERS").arg(known_key(&self.name)).query(con))
            .map_err(cluster_error)?;
        let live: HashSet<&str> = self.ring.members().iter().map(|m| m.id.as_str()).collect();
        for gone in known.iter().filter(|id| !live.contains(id.as_str())) {
            let (inbox_key, pending, recent) = (
                inbox::inbox_key(&self.name, gone),
                pending_key(&self.name, gone),
                recent_key(&self.name, gone),
            );
            let waiting: u32 = self
                .cluster
                .with(|con| {
                    redis::cmd("EXISTS")
                        .arg(&inbox_key)
                        .arg(&pending)
                        .arg(&recent)
                        .query(con)
                })
                .map_err(cluster_error)?;
            if waiting == 0 {
                continue;
            }
            let host_of = |url: &str| Url::parse(url).ok().map(|u| host_key(&u).to_string());
            let links = inbox::reroute(self.cluster, &self.name, gone, &self.ring, host_of)
                .map_err(cluster_error)?;
            let urls = self.reroute_pending(gone)?;
            if links + urls > 0 {
                // Its figures say it: `stats --cluster` counts them as moved off it.
                self.cluster
                    .with(|con| {
                        redis::cmd("HINCRBY")
                            .arg(crate::cluster::stats::rerouted_key(&self.name))
                            .arg(gone)
                            .arg(links + urls)
                            .exec(con)
                    })
                    .map_err(cluster_error)?;
                tracing::info!(
                    "worker {}: worker {gone} is gone; {links} links from its inbox and {urls} \
                     of its pending URLs went to their hosts' new owners",
                    self.id()
                );
            }
        }
        Ok(())
    }

    /// Moves gone worker `gone`'s pending URLs to their hosts' owners, marks it taken, and
    /// deletes its hash; returns how many moved.
    pub(super) fn reroute_pending(&self, gone: &str) -> Result<usize, CrawlError> {
        let key = pending_key(&self.name, gone);
        let lock = format!("{}:repend:{{{gone}}}", self.name);
        let locked: Option<String> = self
            .cluster
            .with(|con| {
                redis::cmd("SET")
                    .arg(&lock)
                    .arg(1)
                    .arg("NX")
                    .arg("PX")
                    .arg(60_000)
                    .query(con)
            })
            .map_err(cluster_error)?;
        if locked.is_none() {
            return Ok(0);
        }
        let mut cursor = 0u64;
        let mut moved = 0;
        loop {
            let (next, fields): (u64, Vec<(String, String)>) = self
                .cluster
                .with(|con| {
                    redis::cmd("HSCAN")
                        .arg(&key)
                        .arg(cursor)
                        .arg("COUNT")
                        .arg(MOVE_PAGE)
                        .query(con)
                })
                .map_err(cluster_error)?;
            let mut links = Vec::with_capacity(fields.len());
            for (url, value) in fields {
                let Ok(parsed) = Url::parse(&url) else {
                    continue;
                };
                let mut numbers = value.split(' ').map(|n| n.parse::<u32>().unwrap_or(0));
                let (depth, priority) = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
                links.push((
                    host_key(&parsed).to_string(),
                    Handoff {
                        url,
                        depth,
                        priority,
                        moved: true,
                    },
                ));
            }
            moved += links.len();
            inbox::send_by_owner(self.cluster, &self.name, &self.ring, links)
                .map_err(cluster_error)?;
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
        // And the URLs the cluster answered new for it since its last checkpoint.
        let recent: Vec<String> = self
            .cluster
            .with(|con| {
                redis::cmd("LRANGE")
                    .arg(recent_key(&self.name, gone))
                    .arg(0)
                    .arg(-1)
                    .query(con)
            })
            .map_err(cluster_error)?;
        let links: Vec<(String, Handoff)> = (recent.iter())
            .filter_map(|l| parse_recent(l))
            .map(|(url, depth, priority)| {
                let handoff = Handoff {
                    url: url.to_string(),
                    depth,
                    priority,
                    moved: true,
                };
                (host_key(&url).to_string(), handoff)
            })
            .collect();
        moved += links.len();
        inbox::send_by_owner(self.cluster, &self.name, &self.ring, links).map_err(cluster_error)?;
        self.cluster
            .with(|con| {
                redis::cmd("SET")
                    .arg(taken_key(&self.name, gone))
                    .arg(1)
                    .exec(con)?;
                redis::cmd("DEL").arg(&key).exec(con)?;
                redis::cmd("DEL")
                    .arg(recent_key(&self.name, gone))
                    .exec(con)?;
                redis::cmd("DEL").arg(&lock).exec(con)
            })
            .map_err(cluster_error)?;
        Ok(moved)
    }

    /// At a clean stop: hands every pending URL to the owners its host has without this
    /// worker (when there are others), so that nothing waits for it to come back.
    pub(crate) fn hand_over(&mut self, frontier: &mut Frontier) {
        let others = Ring::new(
            (self.ring.members().iter())
                .filter(|m| m.id != self.id())
                .cloned(),
        );
        if others.is_empty() {
            return;
        }
        self.ring = others;
        self.rebalance(frontier);
    }
}
