//! The kill -9 tests' child process: one test of the running test binary, started again
//! with a state directory in an environment variable, killed with SIGKILL once it has
//! checkpointed and gone on writing, or once it is held at a fault point.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::{Duration, Instant};

/// Starts this binary's test `test` again, with `env` set to `value` and, when `pause_at`
/// names a fault point (see `crawldedup::faults`), held there when it reaches it; its stdout
/// dropped, its stderr piped (`--nocapture`: the fault point's line must reach the pipe,
/// not the harness's capture).
pub fn spawn(test: &str, env: &str, value: impl AsRef<OsStr>, pause_at: Option<&str>) -> Child {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", test, "--nocapture"])
        .env(env, value)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(point) = pause_at {
        command.env(crawldedup::faults::PAUSE_AT, point);
    }
    command.spawn().unwrap()
}

/// Reads the child's stderr until it says it is held at `point` (true) or closes (false).
pub fn paused_at(stderr: ChildStderr, point: &str) -> bool {
    use std::io::BufRead;
    let line = format!("paused at {point}");
    std::io::BufReader::new(stderr)
        .lines()
        .map_while(Result::ok)
        .any(|l| l.contains(&line))
}

/// When a child is killed (SIGKILL).
#[derive(Debug, Clone, Copy)]
pub enum Kill {
    /// Held at a fault point of `crawldedup::faults`, then killed there.
    At(&'static str),
    /// Killed after so many milliseconds.
    After(u64),
    /// Left to finish.
    Never,
}

/// What became of a child run by [`round`].
#[derive(Debug)]
pub enum Ended {
    /// Killed while held at this fault point.
    KilledAt(&'static str),
    /// Killed after the time its round gave it.
    KilledAfter,
    /// It finished (or died) before a kill: whether it exited with success, and the lines of
    /// its stderr that report a failure (read only when it was left to finish).
    Finished {
        success: bool,
        failures: Vec<String>,
    },
}

/// Starts this binary's test `test` again (see [`spawn`]) and kills it as `kill` says, unless
/// it finishes first; reaps it either way.
pub fn round(test: &str, env: &str, value: impl AsRef<OsStr>, kill: Kill) -> Ended {
    let pause_at = match kill {
        Kill::At(point) => Some(point),
        _ => None,
    };
    let mut child = spawn(test, env, value, pause_at);
    let stderr = child.stderr.take().unwrap();
    let ended = match kill {
        Kill::Never => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut { stderr }, &mut text).unwrap();
            let failures = text
                .lines()
                .filter(|l| l.contains("panicked") || l.contains("Err") || l.contains("error"))
                .map(str::to_string)
                .collect();
            let success = child.wait().unwrap().success();
            return Ended::Finished { success, failures };
        }
        Kill::After(ms) => {
            drop(stderr);
            std::thread::sleep(Duration::from_millis(ms));
            Ended::KilledAfter
        }
        Kill::At(point) => {
            if !paused_at(stderr, point) {
                // Its stderr closed: it finished without reaching the point.
                let success = child.wait().unwrap().success();
                return Ended::Finished {
                    success,
                    failures: Vec::new(),
                };
            }
            Ended::KilledAt(point)
        }
    };
    if let Some(status) = child.try_wait().unwrap() {
        return Ended::Finished {
            success: status.success(),
            failures: Vec::new(),
        };
    }
    child.kill().unwrap();
    child.wait().unwrap();
    ended
}

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
