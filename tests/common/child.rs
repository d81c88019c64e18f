//! The kill -9 tests' child process: one test of the running test binary, started again
//! with a state directory in an environment variable, killed with SIGKILL once it has
//! checkpointed and gone on writing.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs this binary's test `test` with `env` set to `dir`, waits until the child has
/// created `dir/checkpointed`, lets it go on writing for `settle`, then kills it (SIGKILL)
/// and reaps it.
pub fn kill_after_checkpoint(test: &str, env: &str, dir: &Path, settle: Duration) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test])
        .env(env, dir)
        .spawn()
        .unwrap();
    let marker = dir.join("checkpointed");
    let deadline = Instant::now() + Duration::from_secs(120);
    while !marker.exists() {
        assert!(Instant::now() < deadline, "the child never checkpointed");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(settle);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}
