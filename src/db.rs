//! Opening the sled databases of a state directory, and a guard against sled's pool stall.
//!
//! sled locks a database's files while it is open. When a process closes a database and
//! opens it again at once (a crawl resumed in the same process, an index reopened, an
//! embedding application restarting its stage), sled's background I/O threads can still
//! hold the files for a moment after the last handle is dropped, and the second open
//! fails with "could not acquire lock". [`open`] waits for the lock for up to
//! [`LOCK_WAIT`] before it gives up; a database that another live process holds still
//! fails, after that wait, with sled's error naming the lock.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long [`open`] waits for a database's lock.
pub const LOCK_WAIT: Duration = Duration::from_secs(2);

/// Opens the database of `config`, waiting up to [`LOCK_WAIT`] for its lock.
pub(crate) fn open(config: &sled::Config) -> sled::Result<sled::Db> {
    open_waiting(config, LOCK_WAIT)
}

fn open_waiting(config: &sled::Config, wait: Duration) -> sled::Result<sled::Db> {
    let started = Instant::now();
    loop {
        match config.open() {
            Err(sled::Error::Io(e))
                if e.to_string().contains("could not acquire lock") && started.elapsed() < wait =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            result => return result,
        }
    }
}

/// Creates a state directory (and its parents) if it is missing; a path that is a file, or
/// that runs through one, is "not a directory" rather than the system's "File exists".
pub(crate) fn create_state_dir(path: &std::path::Path) -> std::io::Result<()> {
    let not_a_directory =
        || std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory");
    if path.exists() && !path.is_dir() {
        return Err(not_a_directory());
    }
    if let Some(file) = path.ancestors().skip(1).find(|p| p.is_file()) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            format!("not a directory: {} is a file", file.display()),
        ));
    }
    std::fs::create_dir_all(path)
}

/// One line for a sled error on the database at a state directory's part: the lock held by
/// another process, damaged data, or the I/O error (sled's own text for corruption is a
/// debug dump, `Read corrupted data at file offset Some(Inline(195)) backtrace ()`).
pub(crate) fn describe(e: &sled::Error) -> String {
    match e {
        sled::Error::Io(io) if io.to_string().contains("could not acquire lock") => {
            "another process holds this state directory (a crawl, `serve` or `dedup` running \
             on it?); stop it first, or use another state directory"
                .to_string()
        }
        sled::Error::Corruption { .. } => "damaged: the database's files fail their checksums; \
             nothing was changed: restore the state directory from a backup, or start a new one"
            .to_string(),
        sled::Error::Io(io) => io.to_string(),
        other => other.to_string(),
    }
}

/// # The pool stall
///
/// sled 0.34 can stop for good under heavy writes (spacejam/sled#1412, open upstream; seen
/// here once in about ten 10 M-document index benchmarks): a write that moves its log to a
/// new segment waits, while it holds the segment lock, for a file truncation it queued on
/// sled's thread pool, and every thread of that pool is waiting for the same lock. The
/// pool, shared by every sled database in the process, starts another thread only when more
/// than [`POOL_SPAWN_DEPTH`] tasks are queued, so nothing runs the truncation.
///
/// A write marked with [`stall_guard`] that has lasted [`STALL_AFTER`] makes a watchdog
/// thread queue [`WAKE_TASKS`] flushes on the pool. That starts a thread, which runs the
/// queue in order, the truncation first: the write goes on. The watchdog costs nothing while
/// no marked write is that slow; a write that is merely slow (a slow disk) gets a few
/// flushes it did not need.
pub(crate) fn stall_guard(tree: &sled::Tree) -> StallGuard {
    static WATCHDOG: OnceLock<()> = OnceLock::new();
    WATCHDOG.get_or_init(|| {
        // Without the thread, a stall is what it was before: no worse.
        let _ = std::thread::Builder::new()
            .name("crawldedup-sled-watchdog".into())
            .spawn(watch);
    });
    let key = NEXT_GUARD.fetch_add(1, Ordering::Relaxed);
    lock_watched().insert(key, (Instant::now(), tree.clone()));
    StallGuard { key }
}

/// How long a marked write runs before the watchdog wakes sled's pool.
#[cfg(not(test))]
pub(crate) const STALL_AFTER: Duration = Duration::from_secs(2);
#[cfg(test)]
pub(crate) const STALL_AFTER: Duration = Duration::from_millis(300);

/// How often the watchdog looks.
const WATCH_EVERY: Duration = Duration::from_millis(250);

/// Queued tasks past which sled's pool starts a thread (its `DESIRED_WAITING_THREADS`).
const POOL_SPAWN_DEPTH: usize = 7;

/// Flushes queued to wake the pool: one more than it needs to start a thread.
const WAKE_TASKS: usize = POOL_SPAWN_DEPTH + 1;

/// A write in flight, watched until dropped.
pub(crate) struct StallGuard {
    key: u64,
}

impl Drop for StallGuard {
    fn drop(&mut self) {
        lock_watched().remove(&self.key);
    }
}

static NEXT_GUARD: AtomicU64 = AtomicU64::new(0);
static WAKES: AtomicU64 = AtomicU64::new(0);

/// The writes in flight: when each started, and a tree of its database.
type Watched = BTreeMap<u64, (Instant, sled::Tree)>;

fn lock_watched() -> std::sync::MutexGuard<'static, Watched> {
    static WATCHED: Mutex<Watched> = Mutex::new(BTreeMap::new());
    WATCHED.lock().unwrap_or_else(|p| p.into_inner())
}

/// Times the watchdog woke sled's pool in this process.
#[cfg(test)]
fn pool_wakes() -> u64 {
    WAKES.load(Ordering::Relaxed)
}

fn watch() {
    loop {
        std::thread::sleep(WATCH_EVERY);
        let stalled = lock_watched()
            .values()
            .find(|(since, _)| since.elapsed() >= STALL_AFTER)
            .map(|(_, tree)| tree.clone());
        if let Some(tree) = stalled {
            if WAKES.fetch_add(1, Ordering::Relaxed) == 0 {
                tracing::warn!(
                    "a database write has waited {} s: waking sled's thread pool (sled#1412)",
                    STALL_AFTER.as_secs_f64()
                );
            }
            wake_pool(&tree);
        }
    }
}

/// Queues [`WAKE_TASKS`] flushes on sled's pool: the first poll of `flush_async` queues its
/// task, and the futures are dropped without waiting for them.
fn wake_pool(tree: &sled::Tree) {
    use std::future::Future;
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    for _ in 0..WAKE_TASKS {
        let mut flush = std::pin::pin!(tree.flush_async());
        let _ = flush.as_mut().poll(&mut context);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_waits_for_a_lock_that_is_released_and_gives_up_on_one_that_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let config = sled::Config::new().path(dir.path().join("db"));
        let held = config.open().unwrap();
        // Held throughout: the open gives up after the wait, naming the lock.
        let error = open_waiting(&config, Duration::from_millis(200)).unwrap_err();
        assert!(
            error.to_string().contains("could not acquire lock"),
            "{error}"
        );
        // Released during the wait: the open succeeds.
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            drop(held);
        });
        let db = open_waiting(&config, Duration::from_secs(10)).unwrap();
        release.join().unwrap();
        db.insert(b"k", b"v").unwrap();
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    }

    #[test]
    fn a_write_that_lasts_wakes_the_pool_and_leaves_the_database_working() {
        let dir = tempfile::tempdir().unwrap();
        let db = sled::Config::new().path(dir.path()).open().unwrap();
        let before = pool_wakes();
        // A write that lasts (held here past the threshold, as a stalled one would be).
        let guard = stall_guard(&db);
        let start = Instant::now();
        while pool_wakes() == before {
            assert!(start.elapsed() < Duration::from_secs(30), "never woken");
            std::thread::sleep(WATCH_EVERY);
        }
        assert!(start.elapsed() >= STALL_AFTER);
        drop(guard);
        // The flushes it queued left the database as it was, and working.
        db.insert(b"k", b"v").unwrap();
        db.flush().unwrap();
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    }
}
