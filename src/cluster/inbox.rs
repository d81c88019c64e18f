//! Inboxes: how a link to a host that another worker owns reaches that worker.
//!
//! Each worker has a stream, `NAME:inbox:{ID}` (the id is the hash tag, so inboxes spread
//! over the nodes), read through the consumer group `crawl`. A worker that finds a link to
//! a host it does not own, and that the cluster's URL filter calls new, adds it to the
//! owner's stream (`XADD`): the filter answers `new` once per URL, so a URL is handed on
//! once. The owner reads its stream (`XREADGROUP ... >`), queues the links in its frontier,
//! and acknowledges them (`XACK`, then `XDEL`) only after a checkpoint has made its frontier
//! durable: a worker killed before that finds the same entries again among its pending
//! ones when it restarts ([`Inbox::unacknowledged`]), and queues them again (its frontier
//! ignores a URL it already holds).
//!
//! When a worker is gone for good, its inbox holds links to hosts that now belong to
//! others. [`reroute`] moves every entry of a dead worker's inbox, read or not, to the
//! owners in the new ring and deletes the stream; a lock key makes sure only one worker
//! does it, so no link is handed on twice.

use std::collections::HashMap;
use std::time::Duration;

use redis::Value;

use super::filter::{Cluster, ClusterError};
use super::ring::Ring;

/// The consumer group every inbox is read through.
const GROUP: &str = "crawl";

/// Entries read or moved per command.
const PAGE: usize = 1000;

/// How long a rerouting worker holds the lock on a dead inbox.
const REROUTE_LOCK: Duration = Duration::from_secs(60);

/// A link handed to the worker that owns its host.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Handoff {
    /// The canonical URL.
    pub url: String,
    /// Hops from a seed.
    pub depth: u32,
    /// Its priority in the sender's terms (the focus score).
    pub priority: u32,
    /// A pending URL moved with its host from another worker (already in the URL filter,
    /// so the receiver queues it without asking the filter), not a newly found link.
    pub moved: bool,
}

/// The stream key of worker `id`'s inbox in crawl `name`.
pub fn inbox_key(name: &str, id: &str) -> String {
    format!("{name}:inbox:{{{id}}}")
}

/// Adds `links` to worker `to`'s inbox, in one pipeline.
pub fn send(
    cluster: &Cluster,
    name: &str,
    to: &str,
    links: &[Handoff],
) -> Result<(), ClusterError> {
    if links.is_empty() {
        return Ok(());
    }
    let key = inbox_key(name, to);
    let mut pipe = redis::cluster::cluster_pipe();
    for link in links {
        pipe.cmd("XADD")
            .arg(&key)
            .arg("*")
            .arg("url")
            .arg(&link.url)
            .arg("depth")
            .arg(link.depth)
            .arg("priority")
            .arg(link.priority)
            .arg("moved")
            .arg(u8::from(link.moved))
            .ignore();
    }
    cluster.with(|con| pipe.exec(con))
}

/// Hands each link to the owner of its host in `ring` (grouped, one pipeline per owner);
/// returns how many went to each.
pub fn send_by_owner(
    cluster: &Cluster,
    name: &str,
    ring: &Ring,
    links: Vec<(String, Handoff)>,
) -> Result<HashMap<String, usize>, ClusterError> {
    let mut by_owner: HashMap<String, Vec<Handoff>> = HashMap::new();
    for (host, link) in links {
        let owner = ring
            .owner(&host)
            .ok_or_else(|| cluster.state_error(format!("crawl `{name}` has no live worker")))?;
        by_owner.entry(owner.id.clone()).or_default().push(link);
    }
    let mut sent = HashMap::new();
    for (owner, links) in by_owner {
        send(cluster, name, &owner, &links)?;
        sent.insert(owner, links.len());
    }
    Ok(sent)
}

/// One worker's inbox.
pub struct Inbox<'c> {
    cluster: &'c Cluster,
    key: String,
    id: String,
}

impl<'c> Inbox<'c> {
    /// Opens worker `id`'s inbox in crawl `name`, creating the stream and its group.
    pub fn open(cluster: &'c Cluster, name: &str, id: &str) -> Result<Inbox<'c>, ClusterError> {
        let key = inbox_key(name, id);
        create_group(cluster, &key)?;
        Ok(Inbox {
            cluster,
            key,
            id: id.to_string(),
        })
    }

    /// Up to `max` entries not delivered before, with their entry ids (for
    /// [`Inbox::acknowledge`]); none waiting gives an empty list at once.
    pub fn receive(&self, max: usize) -> Result<Vec<(String, Handoff)>, ClusterError> {
        self.read(">", max)
    }

    /// Entries delivered to this worker and not acknowledged: after a restart, the links
    /// it had read but not made durable.
    pub fn unacknowledged(&self, max: usize) -> Result<Vec<(String, Handoff)>, ClusterError> {
        self.read("0", max)
    }

    fn read(&self, from: &str, max: usize) -> Result<Vec<(String, Handoff)>, ClusterError> {
        match self.read_group(from, max) {
            // The stream went with a reroute (this worker was taken for dead a moment
            // before it came back): it starts again, with what was sent since.
            Err(ClusterError::Redis { source, .. }) if source.code() == Some("NOGROUP") => {
                create_group(self.cluster, &self.key)?;
                self.read_group(from, max)
            }
            other => other,
        }
    }

    fn read_group(&self, from: &str, max: usize) -> Result<Vec<(String, Handoff)>, ClusterError> {
        let reply: Value = self.cluster.with(|con| {
            redis::cmd("XREADGROUP")
                .arg("GROUP")
                .arg(GROUP)
                .arg(&self.id)
                .arg("COUNT")
                .arg(max)
                .arg("STREAMS")
                .arg(&self.key)
                .arg(from)
                .query(con)
        })?;
        entries(&reply).map_err(|problem| {
            self.cluster
                .state_error(format!("inbox {}: {problem}", self.key))
        })
    }

    /// Entries in the inbox: waiting, or read and not yet acknowledged (acknowledged ones
    /// are deleted).
    pub fn depth(&self) -> Result<u64, ClusterError> {
        self.cluster
            .with(|con| redis::cmd("XLEN").arg(&self.key).query(con))
    }

    /// Acknowledges and deletes entries once the links they carry are durable.
    pub fn acknowledge(&self, ids: &[String]) -> Result<(), ClusterError> {
        if ids.is_empty() {
            return Ok(());
        }
        self.cluster.with(|con| {
            redis::cmd("XACK")
                .arg(&self.key)
                .arg(GROUP)
                .arg(ids)
                .exec(con)?;
            redis::cmd("XDEL").arg(&self.key).arg(ids).exec(con)
        })
    }
}

fn create_group(cluster: &Cluster, key: &str) -> Result<(), ClusterError> {
    cluster.with(|con| {
        match redis::cmd("XGROUP")
            .arg("CREATE")
            .arg(key)
            .arg(GROUP)
            .arg("0")
            .arg("MKSTREAM")
            .exec(con)
        {
            Err(e) if e.code() == Some("BUSYGROUP") => Ok(()),
            other => other,
        }
    })
}

/// Moves every entry of dead worker `dead`'s inbox (delivered or not) to the owners of
/// their hosts in `ring`, then deletes the inbox; returns how many moved. Only one worker
/// reroutes an inbox: another that tries at the same time gets `Ok(0)`.
pub fn reroute(
    cluster: &Cluster,
    name: &str,
    dead: &str,
    ring: &Ring,
    host_of: impl Fn(&str) -> Option<String>,
) -> Result<usize, ClusterError> {
    let key = inbox_key(name, dead);
    let lock = format!("{name}:reroute:{{{dead}}}");
    let locked: Option<String> = cluster.with(|con| {
        redis::cmd("SET")
            .arg(&lock)
            .arg(1)
            .arg("NX")
            .arg("PX")
            .arg(REROUTE_LOCK.as_millis() as u64)
            .query(con)
    })?;
    if locked.is_none() {
        return Ok(0);
    }
    let mut moved = 0;
    let mut after = "-".to_string();
    loop {
        // XRANGE sees every entry, read or not; entries go on to their new owners before
        // the stream is deleted, so a crash in between hands some on twice at worst, never
        // loses one (and the owners' frontiers ignore a URL they hold).
        let reply: Value = cluster.with(|con| {
            redis::cmd("XRANGE")
                .arg(&key)
                .arg(&after)
                .arg("+")
                .arg("COUNT")
                .arg(PAGE)
                .query(con)
        })?;
        let page = range_entries(&reply)
            .map_err(|problem| cluster.state_error(format!("inbox {key}: {problem}")))?;
        let Some((last, _)) = page.last() else {
            break;
        };
        after = format!("({last}");
        let count = page.len();
        let mut links = Vec::with_capacity(count);
        for (_, link) in page {
            let host = host_of(&link.url).ok_or_else(|| {
                cluster.state_error(format!("inbox {key}: `{}` has no host", link.url))
            })?;
            links.push((host, link));
        }
        send_by_owner(cluster, name, ring, links)?;
        moved += count;
        if count < PAGE {
            break;
        }
    }
    cluster.with(|con| {
        redis::cmd("DEL").arg(&key).exec(con)?;
        redis::cmd("DEL").arg(&lock).exec(con)
    })?;
    Ok(moved)
}

/// The entries of an `XREADGROUP` reply for one stream: `[[key, [[id, [f, v, ...]], ...]]]`,
/// or nil when nothing waits.
fn entries(reply: &Value) -> Result<Vec<(String, Handoff)>, String> {
    match reply {
        Value::Nil => Ok(Vec::new()),
        Value::Array(streams) => {
            let mut out = Vec::new();
            for stream in streams {
                let Value::Array(parts) = stream else {
                    return Err("a stream reply that is not a pair".into());
                };
                if let Some(list) = parts.get(1) {
                    out.extend(range_entries(list)?);
                }
            }
            Ok(out)
        }
        Value::Map(streams) => {
            let mut out = Vec::new();
            for (_, list) in streams {
                out.extend(range_entries(list)?);
            }
            Ok(out)
        }
        other => Err(format!("an unexpected reply {other:?}")),
    }
}

/// The entries of an `XRANGE` reply (or one stream's list in `XREADGROUP`).
fn range_entries(reply: &Value) -> Result<Vec<(String, Handoff)>, String> {
    let Value::Array(list) = reply else {
        return match reply {
            Value::Nil => Ok(Vec::new()),
            other => Err(format!("an unexpected reply {other:?}")),
        };
    };
    let mut out = Vec::with_capacity(list.len());
    for entry in list {
        let Value::Array(pair) = entry else {
            return Err("an entry that is not a pair".into());
        };
        let id = text(pair.first()).ok_or("an entry without an id")?;
        let fields = match pair.get(1) {
            Some(Value::Array(fields)) => fields.as_slice(),
            // An entry deleted after it was delivered: nothing to carry.
            Some(Value::Nil) | None => continue,
            Some(other) => return Err(format!("entry {id}: fields {other:?}")),
        };
        let mut link = Handoff {
            url: String::new(),
            depth: 0,
            priority: 0,
            moved: false,
        };
        for field in fields.chunks(2) {
            let (Some(name), Some(value)) = (text(field.first()), text(field.get(1))) else {
                return Err(format!("entry {id}: a field that is not text"));
            };
            let number = || {
                value
                    .parse::<u32>()
                    .map_err(|_| format!("entry {id}: {name} `{value}` is not a number"))
            };
            match name.as_str() {
                "url" => link.url = value.clone(),
                "depth" => link.depth = number()?,
                "priority" => link.priority = number()?,
                "moved" => link.moved = number()? == 1,
                _ => {}
            }
        }
        if link.url.is_empty() {
            return Err(format!("entry {id}: no url"));
        }
        out.push((id, link));
    }
    Ok(out)
}

fn text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::BulkString(bytes) => String::from_utf8(bytes.clone()).ok(),
        Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    }
}
