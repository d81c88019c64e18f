//! The snapshot's files and their names: the file in place, the ones being written or
//! waiting for a checkpoint, the spare kept to be written over, what an open does with the
//! files a crash left, and how a new snapshot is put in place.

use std::path::{Path, PathBuf};

use super::SNAPSHOT_FILE;

/// Path of the snapshot of the index in `dir`.
pub(in crate::index) fn path(dir: &Path) -> PathBuf {
    dir.join(SNAPSHOT_FILE)
}

/// Path of a snapshot being written.
pub(in crate::index) fn partial_path(dir: &Path) -> PathBuf {
    dir.join(format!("{SNAPSHOT_FILE}.partial"))
}

/// Path of the snapshot a close is writing.
pub(in crate::index) fn closing_path(dir: &Path) -> PathBuf {
    dir.join(format!("{SNAPSHOT_FILE}.closing"))
}

/// Path of a snapshot written in the background, waiting for a checkpoint to cover it.
pub(in crate::index) fn ready_path(dir: &Path) -> PathBuf {
    dir.join(format!("{SNAPSHOT_FILE}.ready"))
}

/// Path of the file of the snapshot that the one in place replaced, kept while the index is
/// open for the next snapshot to be written over (see [`take_spare`]).
pub(in crate::index) fn spare_path(dir: &Path) -> PathBuf {
    dir.join(format!("{SNAPSHOT_FILE}.spare"))
}

/// What an open does with the files a crash left beside the snapshot in place: a snapshot
/// unfinished, written and not yet put in place, or swapped out of place and not yet
/// renamed (see [`put_in_place`]), becomes the spare (the first snapshot of the session is
/// written over it), and any other is removed; a spare that is a second
/// name of the file in place (a crash between the link and the rename in
/// [`put_in_place`]) is removed, since written over it would damage the snapshot. Removing
/// a file of a few gigabytes takes a third of a second (3.7 GB at 10 M documents, on the
/// machine measured): not on the path of an open after a crash when it can be helped.
pub(in crate::index) fn keep_leftovers(dir: &Path) {
    let spare = spare_path(dir);
    if !cfg!(unix) {
        // Which file a name stands for is not known here: nothing is kept.
        for leftover in [partial_path(dir), ready_path(dir), closing_path(dir), spare] {
            let _ = std::fs::remove_file(leftover);
        }
        return;
    }
    let in_place = file_id(&path(dir));
    if in_place.is_some() && file_id(&spare) == in_place {
        let _ = std::fs::remove_file(&spare);
    }
    for leftover in [partial_path(dir), ready_path(dir), closing_path(dir)] {
        let Some(id) = file_id(&leftover) else {
            continue;
        };
        let kept = file_id(&spare).is_none()
            && Some(id) != in_place
            && std::fs::rename(&leftover, &spare).is_ok();
        if !kept {
            let _ = std::fs::remove_file(&leftover);
        }
    }
}

/// Which file `path` names (device and inode), if it names one (`None` on systems other
/// than Unix).
pub(super) fn file_id(path: &Path) -> Option<(u64, u64)> {
    stamp(path).map(|s| s.id)
}

/// Which file an open `file` is (device and inode), as [`file_id`] tells it of a path.
pub(super) fn open_file_id(file: &std::fs::File) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = file.metadata().ok()?;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        None
    }
}

/// Which file a path named (device and inode), with its length and time of change.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Stamp {
    id: (u64, u64),
    len: u64,
    modified: Option<std::time::SystemTime>,
}

/// The stamp of the file at `path`; `None` if there is none, or on systems other than Unix,
/// where which file a name stands for is not known.
pub(super) fn stamp(path: &Path) -> Option<Stamp> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::symlink_metadata(path).ok()?;
        Some(Stamp {
            id: (meta.dev(), meta.ino()),
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Moves the spare file of the index in `dir`, if there is one, to `target`, which the next
/// whole [`write`] then writes over. Writing over the pages and blocks of a file the system
/// already holds is faster than filling a new file and freeing the old one's (about half
/// the time for the 10 M index bench's last background snapshot; CHANGELOG.md, benchmark history, note 4), so
/// fewer documents arrive while one is written. A spare
/// that cannot be moved is left, and the snapshot written to a new file.
pub(in crate::index) fn take_spare(dir: &Path, target: &Path) {
    match std::fs::rename(spare_path(dir), target) {
        Ok(()) => crate::faults::point("snapshot-spare-taken"),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => tracing::debug!("{}: the spare snapshot file stays ({e})", dir.display()),
    }
}

/// Puts the snapshot file at `from` in place in `dir`. The file it replaces becomes the
/// spare when `keep_old` (its name `from` meanwhile, if a crash comes between), else it is
/// removed.
///
/// On Linux the two files swap names in one step (`renameat2` with `RENAME_EXCHANGE`)
/// where the file system can, instead of a rename over the file in place. ext4 (its
/// default `auto_da_alloc`) writes out every dirty page of a file renamed over another
/// before the rename returns: a snapshot just written is gigabytes of dirty pages at the
/// 10 M index bench's end, and that write takes a fraction of a second a gigabyte, with the
/// index's upkeep state locked, which the inserting thread's checkpoint waits for. A swap, or a rename to a free name, leaves the pages to the system's
/// writeback like any other file's. Elsewhere (and when the swap is refused) a second name
/// of the file in place is made first, and the new file renamed over it.
pub(in crate::index) fn put_in_place(
    from: &Path,
    dir: &Path,
    keep_old: bool,
) -> std::io::Result<()> {
    put_in_place_by(from, dir, keep_old, exchange)
}

/// [`put_in_place`] with the swap of names it tries first.
fn put_in_place_by(
    from: &Path,
    dir: &Path,
    keep_old: bool,
    exchange: fn(&Path, &Path) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let in_place = path(dir);
    let spare = spare_path(dir);
    if keep_old {
        let _ = std::fs::remove_file(&spare);
    }
    match exchange(from, &in_place) {
        Ok(()) => {
            crate::faults::point("snapshot-exchanged");
            // `from` now names the file that was in place.
            let kept = keep_old && std::fs::rename(from, &spare).is_ok();
            if !kept {
                let _ = std::fs::remove_file(from);
            }
            return Ok(());
        }
        // Nothing in place: a rename to a free name.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && from.exists() => {
            return std::fs::rename(from, &in_place);
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(e),
        Err(e) => tracing::debug!(
            "{}: the snapshot files cannot swap names ({e}): renamed over",
            dir.display()
        ),
    }
    if keep_old {
        // A second name for the file in place, so that the rename below leaves it.
        if let Err(e) = std::fs::hard_link(&in_place, &spare) {
            tracing::debug!("{}: no spare snapshot file kept ({e})", dir.display());
        }
        crate::faults::point("snapshot-spare-linked");
    }
    std::fs::rename(from, &in_place).inspect_err(|_| {
        // The spare would be the snapshot in place: written over, it would damage it.
        if keep_old {
            let _ = std::fs::remove_file(&spare);
        }
    })
}

/// Swaps the names `a` and `b` in one step (both must exist).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c =
        |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other);
    let (a, b) = (c(a)?, c(b)?);
    // SAFETY: both are NUL-terminated paths that live across the call; renameat2 reads them
    // and returns an integer, with errno set on failure.
    let done = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// No swap of names here: the caller renames over the file in place.
#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> std::io::Result<()> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(_: &Path, _: &Path) -> std::io::Result<()> {
        Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
    }

    /// The files in `dir`: (in place, spare, `from`), as their contents.
    fn files(dir: &Path, from: &Path) -> [Option<Vec<u8>>; 3] {
        [path(dir), spare_path(dir), from.to_path_buf()].map(|p| std::fs::read(p).ok())
    }

    #[test]
    fn a_snapshot_put_in_place_by_a_swap_or_a_rename_keeps_the_old_file_as_the_spare_or_drops_it() {
        let some = |s: &str| Some(s.as_bytes().to_vec());
        for swap in [exchange, refused] {
            let dir = tempfile::tempdir().unwrap();
            let from = ready_path(dir.path());
            // Nothing in place yet: a rename.
            std::fs::write(&from, "first").unwrap();
            put_in_place_by(&from, dir.path(), true, swap).unwrap();
            assert_eq!(files(dir.path(), &from), [some("first"), None, None]);
            // The file it replaces kept as the spare, over an older spare.
            std::fs::write(spare_path(dir.path()), "older").unwrap();
            std::fs::write(&from, "second").unwrap();
            put_in_place_by(&from, dir.path(), true, swap).unwrap();
            assert_eq!(
                files(dir.path(), &from),
                [some("second"), some("first"), None]
            );
            // Or removed, and the spare left as it is.
            std::fs::write(&from, "third").unwrap();
            put_in_place_by(&from, dir.path(), false, swap).unwrap();
            assert_eq!(
                files(dir.path(), &from),
                [some("third"), some("first"), None]
            );
            // No file to put in place: an error, and the one in place untouched.
            assert!(put_in_place_by(&from, dir.path(), true, swap).is_err());
            assert_eq!(std::fs::read(path(dir.path())).unwrap(), b"third");
        }
    }
}
