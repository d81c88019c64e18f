//! The index's upkeep thread writes its snapshots at a lower priority than the rest of the
//! process (a nice value 10 higher, 19 at most), and only it: the threads that decide and
//! insert keep theirs. The check runs in a process of its own (the test binary started
//! again for this one test), so that no other test's index has an upkeep thread there.

#![cfg(target_os = "linux")]

use std::time::{Duration, Instant};

use crawldedup::index::{IndexConfig, SimhashIndex};

/// The nice value of each thread of this process named `name` (as `comm` shows it).
fn nice_of_threads(name: &str) -> Vec<i64> {
    let mut found = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim_end() != name {
            continue;
        }
        if let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) {
            found.push(nice_in_stat(&stat));
        }
    }
    found
}

/// Field 19 of a `stat` line (the fields after the parenthesised name start at field 3).
fn nice_in_stat(stat: &str) -> i64 {
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    after_name.split(' ').nth(16).unwrap().parse().unwrap()
}

fn own_nice() -> i64 {
    nice_in_stat(&std::fs::read_to_string("/proc/thread-self/stat").unwrap())
}

/// Set in the process that makes the check.
const CHILD_ENV: &str = "CRAWLDEDUP_UPKEEP_NICE_CHILD";

#[test]
fn snapshots_are_written_at_a_nice_value_10_higher_by_the_upkeep_thread_alone() {
    if std::env::var_os(CHILD_ENV).is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "upkeep::snapshots_are_written_at_a_nice_value_10_higher_by_the_upkeep_thread_alone",
                "--nocapture",
            ])
            .env(CHILD_ENV, "1")
            .output()
            .unwrap();
        let printed = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && printed.contains("1 passed"),
            "{printed}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let before = own_nice();
    let lowered = (before + 10).min(19);
    let dir = tempfile::tempdir().unwrap();
    let index =
        SimhashIndex::open(dir.path(), IndexConfig::default().with_expected(10_000)).unwrap();
    let name = "index-upkeep";
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = nice_of_threads(name);
    while seen != [lowered] && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        seen = nice_of_threads(name);
    }
    assert_eq!(
        seen,
        [lowered],
        "one upkeep thread, at a nice value 10 above the process's"
    );
    assert_eq!(own_nice(), before, "the opening thread keeps its priority");
    drop(index);
    assert!(
        nice_of_threads(name).is_empty(),
        "the close stops the thread"
    );
}
