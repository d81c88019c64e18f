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

/// A failure of the database under a part of a state directory (the index's, the URL
/// filter's store, the crawl's): an I/O error such as a full disk, files that fail their
/// checksums, or the lock held by another process. It prints as one line; the database's
/// own error is its [`source`](std::error::Error::source).
#[derive(Debug)]
pub struct DatabaseError(sled::Error);

impl DatabaseError {
    /// Whether another process holds the database open.
    pub fn is_lock_held(&self) -> bool {
        matches!(&self.0, sled::Error::Io(io) if is_lock_held(io))
    }

    /// Whether the database's files are damaged (they fail their checksums).
    pub fn is_damaged(&self) -> bool {
        matches!(&self.0, sled::Error::Corruption { .. })
    }

    /// The I/O error behind the failure, if it was one.
    pub fn io_error(&self) -> Option<&std::io::Error> {
        match &self.0 {
            sled::Error::Io(io) => Some(io),
            _ => None,
        }
    }
}

impl std::fmt::Display for DatabaseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&describe(&self.0))
    }
}

impl std::error::Error for DatabaseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// The crate's error for a sled error (not a `From` impl, which would put sled in the
/// public API).
pub(crate) fn error(e: sled::Error) -> DatabaseError {
    DatabaseError(e)
}

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
            Err(sled::Error::Io(e)) if is_lock_held(&e) && started.elapsed() < wait => {
                std::thread::sleep(Duration::from_millis(10));
            }
            result => return result,
        }
    }
}

/// Whether sled's error at open is its file lock, held by another process (the vendored
/// sled keeps the lock's `WouldBlock` kind: see `vendor/sled/PATCH.md`).
fn is_lock_held(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::WouldBlock
}

/// Whether a live process holds the database in `dir` (sled's lock on its `db` file),
/// found without opening the database, which would write: the file is opened read-only,
/// its lock tried and let go at once.
pub(crate) fn held(dir: &std::path::Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let Ok(file) = std::fs::File::open(dir.join("db")) else {
            return false;
        };
        // SAFETY: flock on a descriptor this function owns for the duration of the call.
        let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if locked == 0 {
            // SAFETY: as above; the lock taken is let go.
            unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) };
            return false;
        }
        std::io::Error::last_os_error().raw_os_error() == Some(libc::EWOULDBLOCK)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = dir;
        false
    }
}

/// Whether this process may write into `dir` (not on a read-only file system, not
/// refused by its permissions), asked without writing.
#[cfg_attr(not(feature = "crawler"), allow(dead_code))]
pub(crate) fn writable(dir: &std::path::Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: access reads the NUL-terminated path it is given.
        unsafe { libc::access(path.as_ptr(), libc::W_OK) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        !std::fs::metadata(dir).is_ok_and(|m| m.permissions().readonly())
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
        sled::Error::Io(io) if is_lock_held(io) => {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_database_is_found_without_opening_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        assert!(!held(&path), "no database yet");
        let db = sled::Config::new().path(&path).open().unwrap();
        assert!(held(&path));
        drop(db);
        // sled's threads let the lock go shortly after the last handle.
        let released = (0..200).any(|_| {
            std::thread::sleep(Duration::from_millis(10));
            !held(&path)
        });
        assert!(released);
        assert!(writable(dir.path()));
    }

    #[test]
    fn open_waits_for_a_lock_that_is_released_and_gives_up_on_one_that_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let config = sled::Config::new().path(dir.path().join("db"));
        let held = config.open().unwrap();
        // Held throughout: the open gives up after the wait, naming the lock.
        let error = open_waiting(&config, Duration::from_millis(200)).unwrap_err();
        assert!(
            matches!(&error, sled::Error::Io(e) if is_lock_held(e)),
            "{error}"
        );
        assert!(
            describe(&error).contains("another process holds"),
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
