//! The frontier's promises: order, per-host grouping, checkpoints and compaction that
//! survive a crash at any point.

use super::*;

fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

#[test]
fn host_key_is_host_and_non_default_port() {
    let key = |s: &str| host_key(&url(s)).to_string();
    assert_eq!(key("http://Example.COM/a"), "example.com");
    assert_eq!(key("https://example.com:443/a"), "example.com");
    assert_eq!(
        key("http://user:pw@example.com:8080/a?b"),
        "example.com:8080"
    );
    assert_eq!(key("http://127.0.0.1:3000/"), "127.0.0.1:3000");
    assert_eq!(key("http://[::1]:3000/"), "[::1]:3000");
    assert_eq!(key("http://[::1]/"), "[::1]");
}

#[test]
fn order_dedup_and_resume() {
    let dir = tempfile::tempdir().unwrap();
    let db = sled::open(dir.path()).unwrap();
    let mut f = Frontier::open(db.open_tree("f").unwrap(), 0).unwrap();
    assert!(f.push(url("http://a.test/1"), 0, 5).unwrap());
    assert!(f.push(url("http://a.test/2"), 1, 9).unwrap());
    assert!(f.push(url("http://a.test/3"), 1, 9).unwrap());
    assert!(!f.push(url("http://a.test/1"), 3, 1).unwrap());
    assert!(f.push(url("http://b.test/1"), 0, 1).unwrap());
    let first = f.pop("a.test").unwrap();
    assert_eq!(first.url.path(), "/2");
    let second = f.pop("a.test").unwrap();
    assert_eq!(second.url.path(), "/3");
    f.finish(&first, false);
    f.checkpoint(1).unwrap();
    // Changes after the checkpoint are not kept.
    f.finish(&second, true);
    assert!(f.push(url("http://c.test/"), 0, 0).unwrap());
    drop(f);

    let mut f = Frontier::open(db.open_tree("f").unwrap(), 1).unwrap();
    let counts = f.counts();
    assert_eq!(
        (counts.pending, counts.in_flight, counts.done, counts.failed),
        (3, 0, 1, 0)
    );
    assert!(
        !f.push(url("http://a.test/2"), 0, 0).unwrap(),
        "done stays done"
    );
    // The task that was in flight at the checkpoint is queued again.
    let again = f.pop("a.test").unwrap();
    assert_eq!(again.url.path(), "/3");
    assert!(f.ready_hosts().any(|(h, _)| h == "b.test"));
    assert!(!f.ready_hosts().any(|(h, _)| h == "c.test"));
}

/// The states a model of the frontier gives for `live`, as the counts say them.
fn counts_of(states: &HashMap<String, TaskState>) -> (u64, u64, u64, u64) {
    let n = |wanted: &[TaskState]| states.values().filter(|s| wanted.contains(s)).count() as u64;
    (
        n(&[TaskState::Pending]),
        n(&[TaskState::InFlight]),
        n(&[TaskState::Done]),
        n(&[TaskState::Failed]),
    )
}

/// An empty tree in a new database (the directory and database live as long as it).
fn fresh_tree() -> (tempfile::TempDir, sled::Db, sled::Tree) {
    let dir = tempfile::tempdir().unwrap();
    let db = sled::open(dir.path()).unwrap();
    let tree = db.open_tree("f").unwrap();
    (dir, db, tree)
}

fn log_parts(tree: &sled::Tree) -> Vec<(u64, u32)> {
    tree.scan_prefix([LOG_PREFIX])
        .map(|item| {
            let (key, _) = item.unwrap();
            (
                u64::from_be_bytes(key[1..9].try_into().unwrap()),
                u32::from_be_bytes(key[9..].try_into().unwrap()),
            )
        })
        .collect()
}

#[test]
fn the_log_of_a_checkpoint_that_never_committed_is_ignored_and_replaced() {
    let (_dir, _db, tree) = fresh_tree();
    let mut f = Frontier::open(tree.clone(), 0).unwrap();
    assert!(f.push(url("http://a.test/committed"), 0, 0).unwrap());
    f.checkpoint(1).unwrap();
    // Checkpoint 2 writes a log of several parts, but its record never commits.
    let long = "x".repeat(200);
    for i in 0..1000 {
        assert!(
            f.push(url(&format!("http://a.test/{long}/{i}")), 1, 0)
                .unwrap()
        );
    }
    f.checkpoint(2).unwrap();
    assert!(log_parts(&tree).iter().filter(|(seq, _)| *seq == 2).count() > 2);
    drop(f);

    let mut f = Frontier::open(tree.clone(), 1).unwrap();
    assert_eq!(f.counts().pending, 1, "only checkpoint 1 counts");
    assert!(
        f.push(url(&format!("http://a.test/{long}/7")), 1, 0)
            .unwrap()
    );
    // The next checkpoint takes number 2 again; the old parts go in the same batch.
    f.checkpoint(2).unwrap();
    assert_eq!(log_parts(&tree), vec![(1, 0), (2, 0)]);
    drop(f);

    let f = Frontier::open(tree.clone(), 2).unwrap();
    assert_eq!(f.counts().pending, 2);
}

#[test]
fn a_corrupt_log_part_is_an_error_naming_it() {
    let (_dir, _db, tree) = fresh_tree();
    let mut f = Frontier::open(tree.clone(), 0).unwrap();
    assert!(f.push(url("http://a.test/1"), 0, 0).unwrap());
    f.checkpoint(1).unwrap();
    drop(f);
    let key = log_key(1, 0);
    let mut part = tree.get(key).unwrap().unwrap().to_vec();
    part.truncate(part.len() - 3);
    tree.insert(key, part).unwrap();
    let error = Frontier::open(tree, 1).err().unwrap();
    assert!(matches!(error, FrontierError::Damaged(_)), "{error:?}");
    assert_eq!(
        error.to_string(),
        "frontier: part 0 of checkpoint 1's change log is unreadable"
    );
}

/// The states a reopen gives: the saved ones, with what was in flight pending again.
fn after_reopen(saved: &HashMap<String, TaskState>) -> HashMap<String, TaskState> {
    saved
        .iter()
        .map(|(u, s)| {
            let s = if *s == TaskState::InFlight {
                TaskState::Pending
            } else {
                *s
            };
            (u.clone(), s)
        })
        .collect()
}

/// Checks that the frontier holds exactly the states of the model, counts and URLs.
fn assert_holds(f: &Frontier, live: &HashMap<String, TaskState>) {
    let c = f.counts();
    assert_eq!((c.pending, c.in_flight, c.done, c.failed), counts_of(live));
    for (u, state) in live {
        assert_eq!(
            f.lookup(&url(u)).unwrap().map(|(_, s)| s),
            Some(*state),
            "{u}"
        );
    }
}

/// Random work, checkpoints, compactions and crashes (a reopen at the last committed
/// checkpoint, with or without a checkpoint that wrote its log but never committed),
/// checked against a model: after each reopen the frontier holds exactly the states of
/// the last committed checkpoint, with what was in flight pending again.
#[test]
fn reopening_gives_the_last_committed_checkpoint_through_compactions_and_crashes() {
    let (_dir, _db, tree) = fresh_tree();
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    let reopen = |committed: u64| {
        let mut f = Frontier::open(tree.clone(), committed).unwrap();
        f.compact_after = 40;
        f.compaction_batch = 7;
        f
    };
    let mut committed = 0u64;
    let mut f = reopen(committed);
    let mut live: HashMap<String, TaskState> = HashMap::new();
    let mut saved = live.clone();
    let mut in_flight: Vec<Task> = Vec::new();
    let mut compactions = 0;
    for _ in 0..4000 {
        match next(100) {
            0..=44 => {
                let u = format!("http://h{}.test/{}", next(3), next(400));
                let new = !live.contains_key(&u);
                assert_eq!(f.push(url(&u), 0, next(3) as u32).unwrap(), new, "{u}");
                if new {
                    live.insert(u, TaskState::Pending);
                }
            }
            45..=69 => {
                let host = format!("h{}.test", next(3));
                if let Some(task) = f.pop(&host) {
                    live.insert(task.url.to_string(), TaskState::InFlight);
                    in_flight.push(task);
                }
            }
            70..=89 if !in_flight.is_empty() => {
                let task = in_flight.swap_remove(next(in_flight.len() as u64) as usize);
                let state = match next(3) {
                    0 => {
                        f.retry(task.clone());
                        TaskState::Pending
                    }
                    1 => {
                        f.finish(&task, true);
                        TaskState::Failed
                    }
                    _ => {
                        f.finish(&task, false);
                        TaskState::Done
                    }
                };
                live.insert(task.url.to_string(), state);
            }
            90..=95 => {
                committed += 1;
                f.checkpoint(committed).unwrap();
                saved = live.clone();
                if f.compaction.is_some() {
                    compactions += 1;
                }
                f.compact().unwrap();
            }
            _ => {
                if next(2) == 0 {
                    // A checkpoint that wrote its log, then crashed before its record.
                    f.checkpoint(committed + 1).unwrap();
                }
                drop(f);
                f = reopen(committed);
                in_flight.clear();
                live = after_reopen(&saved);
                assert_holds(&f, &live);
            }
        }
    }
    assert!(compactions > 3, "the test compacted {compactions} times");
    assert!(
        tree.range([LOG_PREFIX + 1]..).count() > 0,
        "compactions wrote per-URL entries"
    );
}

#[test]
fn a_due_url_is_queued_again_with_its_last_version_through_checkpoints_and_compaction() {
    let (_dir, _db, tree) = fresh_tree();
    let mut f = Frontier::open(tree.clone(), 0).unwrap();
    f.push(url("http://a.test/stored"), 0, 0).unwrap();
    f.push(url("http://a.test/failed"), 0, 0).unwrap();
    f.push(url("http://a.test/fresh"), 0, 0).unwrap();
    let version = |doc: u64, fetched_at: u64| Version {
        doc,
        digest: u128::from(doc) << 64 | 0xabc,
        fetched_at,
    };
    let mut stored = f.pop("a.test").unwrap();
    stored.last = Some(version(7, 1_000));
    f.finish(&stored, false);
    let failed = f.pop("a.test").unwrap();
    f.finish(&failed, true);
    let mut fresh = f.pop("a.test").unwrap();
    fresh.last = Some(version(8, 5_000));
    f.finish(&fresh, false);
    // Mixed lengths in one log part: tasks with and without a version.
    f.checkpoint(1).unwrap();
    f.set_compaction(1, 1);
    f.compact().unwrap();
    f.finish_compaction().unwrap();
    drop(f);

    let mut f = Frontier::open(tree, 1).unwrap();
    assert_eq!(f.counts().done, 2);
    assert_eq!(f.counts().failed, 1);
    // Due: fetched at or before 4,000. /fresh was fetched at 5,000: not yet.
    assert!(
        f.push_due(url("http://a.test/stored"), 1, 3, 4_000)
            .unwrap()
    );
    assert!(
        f.push_due(url("http://a.test/failed"), 1, 3, 4_000)
            .unwrap()
    );
    assert!(!f.push_due(url("http://a.test/fresh"), 1, 3, 4_000).unwrap());
    assert!(
        !f.push_due(url("http://a.test/stored"), 1, 3, 4_000)
            .unwrap(),
        "pending stays pending"
    );
    assert!(f.push_due(url("http://a.test/new"), 1, 3, 4_000).unwrap());
    let counts = f.counts();
    assert_eq!((counts.pending, counts.done, counts.failed), (3, 1, 0));
    let again = f.pop("a.test").unwrap();
    assert_eq!(again.url.path(), "/stored");
    assert_eq!(again.last, Some(version(7, 1_000)));
    assert_eq!(f.pop("a.test").unwrap().last, None);
}
