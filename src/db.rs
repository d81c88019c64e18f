//! Opening the sled databases of a state directory.
//!
//! sled locks a database's files while it is open. When a process closes a database and
//! opens it again at once (a crawl resumed in the same process, an index reopened, an
//! embedding application restarting its stage), sled's background I/O threads can still
//! hold the files for a moment after the last handle is dropped, and the second open
//! fails with "could not acquire lock". [`open`] waits for the lock for up to
//! [`LOCK_WAIT`] before it gives up; a database that another live process holds still
//! fails, after that wait, with sled's error naming the lock.

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
}
