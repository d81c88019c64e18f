//! Helpers the bench binaries share: sizes on disk and the process's memory figures.
// Each bench binary includes this file and uses part of it.
#![allow(dead_code)]

use std::path::Path;

/// A temporary folder under the project's `target/` (on the disk the build uses, where
/// `/tmp` may be a small tmpfs), created first when `CARGO_TARGET_DIR` put the build
/// elsewhere.
pub fn scratch_dir() -> std::io::Result<tempfile::TempDir> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    std::fs::create_dir_all(&base)?;
    tempfile::tempdir_in(base)
}

/// Bytes of the files under `dir`.
pub fn dir_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        total += if meta.is_dir() {
            dir_bytes(&entry.path())
        } else {
            meta.len()
        };
    }
    total
}

/// A `kB` field of /proc/self/status (`VmRSS`, `VmHWM`), in KiB; 0 where there is none.
pub fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.strip_prefix(field).is_some_and(|r| r.starts_with(':')))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// The calling thread's (minor page faults, voluntary context switches, involuntary
/// context switches) so far, from /proc/thread-self; zeros where there is none.
pub fn thread_usage() -> [u64; 3] {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    // Fields after the command's closing parenthesis: state is the 3rd field, minflt the 10th.
    let minflt = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(7)?.parse().ok())
        .unwrap_or(0);
    let status = std::fs::read_to_string("/proc/thread-self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    [
        minflt,
        field("voluntary_ctxt_switches"),
        field("nonvoluntary_ctxt_switches"),
    ]
}
